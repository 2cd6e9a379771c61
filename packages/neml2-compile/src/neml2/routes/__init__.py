"""neml2.routes: the six routes by name, and one way to open a model on any of them.

A model authored once runs on six routes (docs/routes.md)::

    import neml2.routes
    neml2.routes.NAMES  # ('py-eager', 'py-jit', 'py-aoti', 'cpp-aoti', 'cpp-dispatch', 'cpp-eager')
    m = neml2.routes.open_model("py-jit", "model.i", "elasticity")
    out = m.forward({"strain": strain})

:func:`open_model` compiles where the route needs it (``torch.compile`` for py-jit,
``neml2-compile`` through the content-hashed cache for the AOTI routes) and returns a
:class:`RouteModel` with the name-keyed surface every route shares. :data:`ROUTES` is
the one list of routes in the tree: tests, benchmarks, nox and the docs read it.
"""

from neml2.routes._open import RouteModel, build_artifact, open_model
from neml2.routes._registry import NAMES, ROUTES, Route, parse, route

__all__ = [
    "NAMES",
    "ROUTES",
    "Route",
    "RouteModel",
    "build_artifact",
    "open_model",
    "parse",
    "route",
]
