"""THE table of capability gaps of the route matrix: ``(route, model, op) -> reason``.

Every entry becomes ``xfail(strict=True)``: when a gap gets fixed the test XPASSes and
fails the run, so the entry must be deleted. ``"*"`` matches any model or operation.
Entries with a ``when`` condition are only active while it holds (a route that is not
built yet); they light up by themselves once the route exists.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


def _missing_dispatch() -> bool:
    try:
        import neml2.aoti
    except ImportError:
        return True
    return not hasattr(neml2.aoti, "DispatchedModel")


def _missing_eager() -> bool:
    try:
        importlib.import_module("neml2.aoti.cpp_eager")
    except ImportError:
        return True
    return False


@dataclass(frozen=True)
class Gap:
    route: str
    model: str
    op: str
    reason: str
    when: Callable[[], bool] | None = None

    def matches(self, route: str, model: str, op: str) -> bool:
        return (
            self.route == route
            and self.model in ("*", model)
            and self.op in ("*", op)
            and (self.when is None or self.when())
        )


GAPS: tuple[Gap, ...] = (
    Gap(
        "cpp-dispatch",
        "*",
        "*",
        "neml2.aoti.DispatchedModel is not built (cpp-dispatch binding missing)",
        when=_missing_dispatch,
    ),
    Gap(
        "cpp-eager",
        "*",
        "*",
        "neml2.aoti.cpp_eager (binding of neml2::eager::Model) is not built",
        when=_missing_eager,
    ),
)


def gap(route: str, model: str, op: str) -> str | None:
    """The declared reason why *route* cannot do *op* on *model*, or None."""
    for g in GAPS:
        if g.matches(route, model, op):
            return g.reason
    return None
