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
