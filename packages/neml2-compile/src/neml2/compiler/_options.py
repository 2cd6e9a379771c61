"""Options of an AOTI compile: which derivative graphs, promoted parameters, targets.

The ``neml2-compile`` command line and the Python API share this parser, so a
bad option gets the same message either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from neml2.tensors import FatalError

DEVICES = ("cpu", "cuda")
DTYPES = ("float64", "float32")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_~.]*$")


@dataclass(frozen=True)
class DerivativePair:
    """``-d OUT:IN``. An empty side means *all*: ``stress:`` (stress w.r.t. every
    input), ``:strain``, ``:`` (the full Jacobian)."""

    output: str | None
    input: str | None

    def __str__(self) -> str:
        return f"{self.output or ''}:{self.input or ''}"


def parse_derivative(spec: str) -> DerivativePair:
    """Parse one ``-d`` value; the error quotes it and says the accepted forms."""
    if spec.count(":") != 1:
        raise FatalError(
            f"-d {spec!r}: expected OUT:IN (e.g. stress:strain, stress:, :strain or :)"
        )
    out, inp = spec.split(":")
    for side, name in (("output", out), ("input", inp)):
        if name and not _NAME.match(name):
            raise FatalError(f"-d {spec!r}: {name!r} is not a valid {side} variable name")
    return DerivativePair(out or None, inp or None)


@dataclass
class CompileOptions:
    """Everything that selects what a compile builds (part of the cache key)."""

    model: str
    derivatives: list[DerivativePair] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    dtypes: list[str] = field(default_factory=lambda: ["float64"])
    #: sub-batch shapes by variable name (``{"dislocation_density": (12,)}``; ``x`` also
    #: covers its history ``x~1``); the rest are inferred (see ``_sub_batch``)
    sub_batch: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: also compile ``forward_into``: the forward graph storing into caller-provided
    #: outputs (``Model::forward_into``; ``DispatchedModel`` on CPU workers then writes
    #: every chunk in place instead of copying it into the gathered result)
    write_into: bool = False

    def __post_init__(self) -> None:
        if not self.model:
            raise FatalError("--model: a model name is required")
        for opt, values, allowed in (
            ("--device", self.devices, DEVICES),
            ("--dtype", self.dtypes, DTYPES),
        ):
            for v in values:
                if v not in allowed:
                    raise FatalError(f"{opt} {v!r}: choose from {', '.join(allowed)}")
            if len(set(values)) != len(values):
                raise FatalError(f"{opt}: duplicate values {values}")
        for p in self.parameters:
            if not _NAME.match(p):
                raise FatalError(f"-p {p!r}: not a parameter name (e.g. elasticity.E)")
        seen: set[str] = set()
        for d in self.derivatives:
            if str(d) in seen:
                raise FatalError(f"-d {d}: given twice")
            seen.add(str(d))

    @classmethod
    def from_strings(
        cls,
        model: str,
        derivatives: list[str] = (),  # type: ignore[assignment]
        parameters: list[str] = (),  # type: ignore[assignment]
        devices: list[str] | None = None,
        dtypes: list[str] | None = None,
        write_into: bool = False,
    ) -> CompileOptions:
        return cls(
            model=model,
            derivatives=[parse_derivative(d) for d in derivatives],
            parameters=list(parameters),
            devices=list(devices or ["cpu"]),
            dtypes=list(dtypes or ["float64"]),
            write_into=write_into,
        )
