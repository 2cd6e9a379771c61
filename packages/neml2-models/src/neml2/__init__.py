"""neml2: vectorized constitutive models on PyTorch.

``neml2`` is a namespace shared by six distributions (neml2-tensors, neml2-hit,
neml2-models, neml2-drivers, neml2-compile, neml2-aoti-runtime). Only this
distribution ships ``neml2/__init__.py``; the line below merges the sibling
``neml2/`` directories found on ``sys.path`` (editable workspace installs put
each package's ``src`` there separately), so ``neml2.aoti`` & co. import no
matter how the siblings were installed.

``neml2.__version__`` is the version of that distribution (neml2-models), read
from its installed metadata on first access.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

__all__ = [
    "ConvergenceError",
    "FatalError",
    "MaterialPoint",
    "NEML2Error",
    "compile",
    "load_input",
    "load_model",
    "load_nonlinear_system",
    "load_string",
    "register_neml2_object",
]

#: the distribution that ships this file (its version is ``neml2.__version__``)
_DISTRIBUTION = "neml2-models"

_FACADE = {
    "load_model": "neml2.models",
    "compile": "neml2.models",
    "load_input": "neml2.models",
    "load_string": "neml2.models",
    "load_nonlinear_system": "neml2.models",
    "register_neml2_object": "neml2.models",
    "MaterialPoint": "neml2.models",
    "FatalError": "neml2.tensors",
    "ConvergenceError": "neml2.tensors",
    "NEML2Error": "neml2.tensors",
}
_SUBPACKAGES = {"hit", "tensors", "models", "solvers", "factory", "drivers", "compiler", "aoti"}


def _installed_subpackages() -> list[str]:
    """The ``neml2.<name>`` subpackages whose distribution is installed (found, not
    imported)."""
    from importlib.util import find_spec

    found = []
    for name in sorted(_SUBPACKAGES):
        try:
            if find_spec(f"neml2.{name}") is not None:
                found.append(name)
        except (ImportError, ValueError):  # a broken or half-installed sibling
            continue
    return found


def __dir__() -> list[str]:
    # The facade names come from __getattr__ (lazily), so list them for dir(neml2),
    # tab completion and help(): __all__, __version__ and the installed subpackages.
    return sorted({*globals(), *__all__, "__version__", *_installed_subpackages()})


def __getattr__(name: str):
    # Lazy, so that `import neml2.hit` does not pull in torch through neml2.models.
    import importlib

    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version(_DISTRIBUTION)
        except PackageNotFoundError:  # running from a source tree that is not installed
            value = "0+unknown"
        globals()["__version__"] = value
        return value
    if name in _FACADE:
        return getattr(importlib.import_module(_FACADE[name]), name)
    if name in _SUBPACKAGES:
        try:
            return importlib.import_module(f"neml2.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"neml2.{name}":
                raise AttributeError(
                    f"module 'neml2' has no attribute {name!r} (is its distribution installed?)"
                ) from e
            raise
    raise AttributeError(f"module 'neml2' has no attribute {name!r}")
