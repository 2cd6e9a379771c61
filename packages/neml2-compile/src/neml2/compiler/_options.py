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
    """One requested Jacobian block pattern, ``-d OUT:IN``; see :func:`parse_derivative`.

    An empty side means *all*: ``stress:`` (stress w.r.t. every input),
    ``:strain``, ``:`` (the full Jacobian). ``str(pair)`` gives ``OUT:IN`` back.
    Instances are frozen.

    Attributes:
        output: the output variable name, or ``None`` for every output.
        input: the input variable name, or ``None`` for every input.
    """

    output: str | None
    input: str | None

    def __str__(self) -> str:
        return f"{self.output or ''}:{self.input or ''}"


def parse_derivative(spec: str) -> DerivativePair:
    """Parse one ``-d`` value.

    Args:
        spec: ``OUT:IN``, ``OUT:``, ``:IN`` or ``:``; each name a variable
            name (letters, digits, ``_``, ``.`` and ``~``, not starting with a
            digit).

    Returns:
        The pair, an empty side as ``None``.

    Raises:
        FatalError: *spec* has no ``:`` or more than one, or a side that is
            not a valid variable name; the message quotes *spec* and says the
            accepted forms.
    """
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
    """Everything that selects what a compile builds (part of the cache key).

    Construct it with the fields below as keyword arguments, or from strings as
    the command line gives them with :meth:`from_strings`.

    Attributes:
        model: the ``[Models]`` block to compile (required).
        derivatives: the Jacobian blocks to compile (``-d``); empty: no
            ``jacobian`` graph.
        parameters: the parameters to promote to run-time inputs (``-p``),
            e.g. ``"E"`` or ``"elasticity.E"``.
        devices: the target devices, ``"cpu"`` and/or ``"cuda"`` (default
            ``["cpu"]``).
        dtypes: the target dtypes, ``"float64"`` and/or ``"float32"`` (default
            ``["float64"]``).
        sub_batch: sub-batch shapes by variable name
            (``{"dislocation_density": (12,)}``; ``x`` also covers its history
            ``x~1``); the others are inferred.
        write_into: also compile ``forward_into``, the forward graph storing
            into caller-provided outputs (``Model::forward_into``;
            ``DispatchedModel`` on CPU workers then writes every chunk in place
            instead of copying it into the gathered result). Default ``False``.

    Raises:
        FatalError: an empty *model*, a device or dtype not in the lists above
            or given twice, a parameter that is not a valid name, or a
            derivative pair given twice.
    """

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
        """Make options from strings, as the command line gives them.

        Args:
            model: the ``[Models]`` block to compile.
            derivatives: ``-d`` values, each parsed by :func:`parse_derivative`
                (default: none).
            parameters: ``-p`` values, parameter names to promote (default: none).
            devices: the target devices (default ``None``: ``["cpu"]``).
            dtypes: the target dtypes (default ``None``: ``["float64"]``).
            write_into: also compile ``forward_into`` (default ``False``).

        Returns:
            The options, with no declared sub-batch shapes.

        Raises:
            FatalError: a malformed ``-d`` value, or anything the
                :class:`CompileOptions` checks reject.
        """
        return cls(
            model=model,
            derivatives=[parse_derivative(d) for d in derivatives],
            parameters=list(parameters),
            devices=list(devices or ["cpu"]),
            dtypes=list(dtypes or ["float64"]),
            write_into=write_into,
        )
