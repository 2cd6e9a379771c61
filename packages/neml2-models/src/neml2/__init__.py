"""neml2: vectorized constitutive models on PyTorch.

``neml2`` is a namespace shared by six distributions (neml2-tensors, neml2-hit,
neml2-models, neml2-drivers, neml2-compile, neml2-aoti-runtime). Only this
distribution ships ``neml2/__init__.py``; the line below merges the sibling
``neml2/`` directories found on ``sys.path`` (editable workspace installs put
each package's ``src`` there separately), so ``neml2.aoti`` & co. import no
matter how the siblings were installed.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

__all__ = ["load_model"]


def __getattr__(name: str):
    # Lazy, so that `import neml2.hit` does not pull in torch through neml2.models.
    if name == "load_model":
        from neml2.models import load_model

        return load_model
    raise AttributeError(f"module 'neml2' has no attribute {name!r}")
