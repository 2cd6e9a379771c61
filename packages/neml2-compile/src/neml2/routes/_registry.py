"""The six routes by name: what each is, what it needs, how it is reached.

This module is the one list of routes in the tree: tests, benchmarks, nox and the docs
read :data:`ROUTES` (or :data:`NAMES`), never a copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from neml2.tensors import FatalError


@dataclass(frozen=True)
class Route:
    """One way to evaluate a model.

    Attributes:
        name: the codename a bug report names (``"py-aoti"``).
        host: the language that calls the model, ``"Python"`` or ``"C++"``.
        compile: how the model is compiled: ``"none"``, ``"torch.compile"`` (in
            process, on first call) or ``"AOTInductor"`` (offline, ``neml2-compile``).
        artifact: whether the route runs a ``neml2-compile`` artifact.
        typed: whether the opened model is also a typed ``neml2.models.Model`` drop-in
            (``m(*typed, v=...)``), so the drivers of an input file can run it.
        entry: the public entry point a user calls to get there.
    """

    name: str
    host: str
    compile: str
    artifact: bool
    typed: bool
    entry: str


#: every route, in the order tables list them
ROUTES: tuple[Route, ...] = (
    Route("py-eager", "Python", "none", False, True, "neml2.load_model(path, name)"),
    Route("py-jit", "Python", "torch.compile", False, True, "neml2.compile(model)"),
    Route(
        "py-aoti",
        "Python",
        "AOTInductor",
        True,
        True,
        "neml2.load_model('NAME_aoti.i', name) (the stub neml2-compile writes)",
    ),
    Route("cpp-aoti", "C++", "AOTInductor", True, False, "neml2.aoti.Model(artifact)"),
    Route(
        "cpp-dispatch",
        "C++",
        "AOTInductor",
        True,
        False,
        "neml2.aoti.DispatchedModel(artifact, workers=...)",
    ),
    Route("cpp-eager", "C++", "none", False, False, "neml2.aoti.cpp_eager.Model(path, name)"),
)

#: the route names, in :data:`ROUTES` order
NAMES: tuple[str, ...] = tuple(r.name for r in ROUTES)

_BY_NAME = {r.name: r for r in ROUTES}


def route(name: str | Route) -> Route:
    """The route called *name*.

    Args:
        name: a route name (``"py-jit"``) or a :class:`Route` (returned as is).

    Returns:
        The route.

    Raises:
        FatalError: *name* is no route; the message lists the routes and the closest one.
    """
    if isinstance(name, Route):
        return name
    found = _BY_NAME.get(name)
    if found is None:
        from difflib import get_close_matches

        close = get_close_matches(str(name), NAMES, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise FatalError(f"unknown route {name!r}{hint}; routes: {', '.join(NAMES)}")
    return found


def parse(text: str, *, what: str = "routes") -> tuple[Route, ...]:
    """Routes from a comma-separated list (``"py-jit,cpp-aoti"``; ``""`` or ``"all"``: every
    route), as environment variables and command lines give them.

    Args:
        text: the list.
        what: what the list is called in an error (an environment variable's name).

    Returns:
        The routes, in the order given.

    Raises:
        FatalError: an unknown name, named with *what*.
    """
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names or names == ["all"]:
        return ROUTES
    try:
        return tuple(route(n) for n in names)
    except FatalError as e:
        raise FatalError(f"{what}: {e}") from None
