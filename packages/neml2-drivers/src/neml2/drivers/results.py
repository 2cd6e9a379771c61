"""A transient run's result as one tensor per variable: :class:`TransientResult`.

A :class:`~neml2.drivers.TransientDriver` records its result step by step in a
flat ``dict[str, Tensor]`` (``input.<k>.<var>``, ``output.<k>.<var>``; see
:mod:`neml2.drivers.transient`). A :class:`TransientResult` holds the same
values with the steps stacked on a new leading axis: ``result["stress"]`` has
the shape ``(steps, *B, 6)``, ``result["t"]`` ``(steps, *B)``, where ``steps``
counts the initial state (step 0) too and ``B`` is the batch shape.

Entries the flat form does not record are filled with the values the driver
used for them:

* an output at step 0 without an initial condition (``ic_<Type>_*``): zero;
* a history input ``x~n`` at the first steps, before ``x`` had a value: zero;
* an initial condition of a variable the model never outputs: the same value at
  every step (the driver carries it unchanged);
* the time, which the flat form records at step 0 only when the model does not
  take it: the prescribed times (``times=`` of :meth:`TransientResult.from_flat`).

Steps whose batch shapes differ (an initial condition given as one number, the
later steps batched) are broadcast to one shape.

The file format (``TransientDriver`` writes it beside ``save_as``, see
:func:`stacked_path`; :meth:`TransientResult.save` writes it, :meth:`TransientResult.load`
reads it) is a ``torch.save`` dictionary that ``torch.load(path, weights_only=True)``
reads:

```text
{
    "format": "neml2.TransientResult",   # FORMAT
    "version": 1,                         # VERSION
    "time": "t",                          # the time variable's name (an input)
    "steps": 41,                          # the length of every leading axis
    "input": {"t": (steps, *B), "strain": (steps, *B, 6), ...},
    "output": {"stress": (steps, *B, 6), ...},
}
```

All tensors are on the CPU; the dictionaries keep the order of :meth:`TransientResult.names`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from difflib import get_close_matches
from pathlib import Path

import torch

from neml2.tensors import FatalError

#: The ``"format"`` entry of a saved stacked result.
FORMAT = "neml2.TransientResult"
#: The ``"version"`` entry of a saved stacked result (the layout above).
VERSION = 1
#: The sides of a flat key ``<side>.<step>.<var>``.
SIDES = ("input", "output")


def stacked_path(path: str | Path) -> Path:
    """Where the stacked result is saved beside the flat file *path*.

    ``result.pt`` -> ``result.stacked.pt``; ``out/run`` -> ``out/run.stacked``.

    Args:
        path: the flat result file (``save_as``)

    Returns:
        The sibling path with ``.stacked`` before the extension.
    """
    p = Path(path)
    return p.with_name(f"{p.stem}.stacked{p.suffix}")


def _history(name: str) -> bool:
    """True for a history name ``x~n`` (n >= 1)."""
    base, sep, n = name.rpartition("~")
    return bool(sep and base and n.isdigit() and int(n) >= 1)


class TransientResult(Mapping[str, torch.Tensor]):
    """A transient run's variables, each with the steps stacked first.

    A read-only mapping from a variable name to a tensor of shape
    ``(steps, *B, *base)``: ``result["stress"]`` is ``(steps, *B, 6)``, the time
    ``result["t"]`` is ``(steps, *B)``. Step 0 is the initial state. Inputs and
    outputs share the mapping; ``"input.x"`` / ``"output.x"`` pick a side
    explicitly, and :attr:`inputs` / :attr:`outputs` hold each side.

    Attributes:
        inputs: ``{name: (steps, *B, *base)}``, the model's inputs: the time, the
            prescribed variables, history inputs ``x~n``
        outputs: ``{name: (steps, *B, *base)}``, the model's outputs (and initial
            conditions)
        time: the name of the time variable (one of :attr:`inputs`)
    """

    def __init__(
        self,
        inputs: Mapping[str, torch.Tensor],
        outputs: Mapping[str, torch.Tensor],
        time: str = "t",
    ):
        """Hold *inputs* and *outputs*, which must share their leading (step) axis.

        Args:
            inputs: ``{name: (steps, *B, *base)}``
            outputs: ``{name: (steps, *B, *base)}``
            time: the time variable's name

        Raises:
            FatalError: a value that is not a tensor, or leading axes that differ.
        """
        self.inputs: dict[str, torch.Tensor] = dict(inputs)
        self.outputs: dict[str, torch.Tensor] = dict(outputs)
        self.time = str(time)
        lengths: dict[str, int] = {}
        for side, values in (("input", self.inputs), ("output", self.outputs)):
            for name, value in values.items():
                if not isinstance(value, torch.Tensor) or value.dim() < 1:
                    what = type(value).__name__
                    if isinstance(value, torch.Tensor):
                        what += f" of shape {tuple(value.shape)}"
                    raise FatalError(
                        f"TransientResult: {side} '{name}' must be a tensor with the steps "
                        f"first, not a {what}"
                    )
                lengths[f"{side}.{name}"] = int(value.shape[0])
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{k} {n}" for k, n in lengths.items())
            raise FatalError(f"TransientResult: the variables have different step counts: {listed}")
        self._steps = next(iter(lengths.values()), 0)

    # ------------------------------------------------------------------ mapping
    @property
    def steps(self) -> int:
        """The number of steps, the initial state (step 0) included."""
        return self._steps

    def names(self) -> list[str]:
        """Every variable name.

        Returns:
            The inputs (the time first), then the outputs that are not inputs.
        """
        out = [n for n in self.inputs if n == self.time]
        out += [n for n in self.inputs if n != self.time]
        out += [n for n in self.outputs if n not in self.inputs]
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __getitem__(self, key: str) -> torch.Tensor:
        """The stacked tensor of *key*: ``name``, ``input.name`` or ``output.name``.

        Raises:
            KeyError: an unknown name (the message suggests the closest), or a name
                that is both an input and an output (say which with the prefix).
        """
        if not isinstance(key, str):
            raise KeyError(key)
        side, _, name = key.partition(".")
        if side in SIDES and name:
            table = self.inputs if side == "input" else self.outputs
            if name in table:
                return table[name]
        elif key in self.inputs and key in self.outputs:
            raise KeyError(
                f"'{key}' is both an input and an output; write 'input.{key}' or 'output.{key}'"
            )
        elif key in self.outputs:
            return self.outputs[key]
        elif key in self.inputs:
            return self.inputs[key]
        known = [*self.names(), *(f"input.{n}" for n in self.inputs)]
        known += [f"output.{n}" for n in self.outputs]
        close = get_close_matches(key, known, n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise KeyError(
            f"'{key}' is not a variable of this result{hint}; inputs: "
            f"{', '.join(self.inputs) or '(none)'}; outputs: {', '.join(self.outputs) or '(none)'}"
        )

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        side, _, name = key.partition(".")
        if side in SIDES and name:
            return name in (self.inputs if side == "input" else self.outputs)
        return key in self.inputs or key in self.outputs

    def __repr__(self) -> str:
        def listing(values: dict[str, torch.Tensor]) -> str:
            return ", ".join(f"{n} {tuple(v.shape)}" for n, v in values.items()) or "(none)"

        return (
            f"TransientResult({self.steps} steps; inputs: {listing(self.inputs)}; "
            f"outputs: {listing(self.outputs)})"
        )

    # ------------------------------------------------------------------ flat form
    @classmethod
    def from_flat(
        cls,
        flat: Mapping[str, torch.Tensor],
        *,
        time: str = "t",
        times: torch.Tensor | None = None,
    ) -> TransientResult:
        """Stack a flat result ``{"input.<k>.<var>": ..., "output.<k>.<var>": ...}``.

        Keys of another form are ignored. The rules for entries the flat form does
        not record are in the module's description.

        Args:
            flat: the flat result, each value of shape ``(*B, *base)``
            time: the name of the time variable
            times: ``(steps, *B)``, the whole time history, for a flat result that
                records the time at step 0 only (a model that does not take it)

        Returns:
            The stacked result; ``steps`` is one more than the largest step in *flat*
            (0 for a *flat* without such keys).

        Raises:
            FatalError: naming the variable whose steps cannot be stacked (a step
                missing in the middle, batch shapes that do not broadcast), or a
                *times* whose length is not the number of steps.
        """
        by_var: dict[tuple[str, str], dict[int, torch.Tensor]] = {}
        for key, value in flat.items():
            if not isinstance(key, str):
                continue
            parts = key.split(".", 2)
            if len(parts) != 3 or parts[0] not in SIDES or not parts[1].isdigit():
                continue
            if not isinstance(value, torch.Tensor):
                raise FatalError(f"'{key}' is a {type(value).__name__}, not a tensor")
            by_var.setdefault((parts[0], parts[2]), {})[int(parts[1])] = value
        steps = 1 + max((k for values in by_var.values() for k in values), default=-1)
        if times is not None and steps and int(times.shape[0]) != steps:
            raise FatalError(
                f"times has {int(times.shape[0])} steps but the result has {steps} "
                "(the initial state included)"
            )
        sides: dict[str, dict[str, torch.Tensor]] = {"input": {}, "output": {}}
        # the time first, then the variables in the order the flat form lists them
        order = sorted(by_var, key=lambda sv: sv != ("input", time))
        for side, var in order:
            recorded = by_var[(side, var)]
            if side == "input" and var == time and len(recorded) < steps and times is not None:
                sides[side][var] = times.detach()
                continue
            sides[side][var] = _stack(side, var, recorded, steps, time)
        return cls(sides["input"], sides["output"], time)

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, object]:
        """The saved form (described in the module docstring).

        Returns:
            ``{"format", "version", "time", "steps", "input", "output"}``, every tensor
            on the CPU, each variable ``(steps, *B, *base)``.
        """
        return {
            "format": FORMAT,
            "version": VERSION,
            "time": self.time,
            "steps": self.steps,
            "input": {n: v.detach().cpu() for n, v in self.inputs.items()},
            "output": {n: v.detach().cpu() for n, v in self.outputs.items()},
        }

    def save(self, path: str | Path) -> Path:
        """Write the result to *path* with ``torch.save`` (the layout of :meth:`to_dict`).

        The drivers write it atomically themselves; this plain write is for scripts.

        Args:
            path: the file to write

        Returns:
            *path* as a :class:`~pathlib.Path`.
        """
        torch.save(self.to_dict(), path)
        return Path(path)

    @classmethod
    def load(cls, path: str | Path, map_location: str | torch.device = "cpu") -> TransientResult:
        """Read a stacked result file (``*.stacked.pt``, or any :meth:`save` wrote).

        A flat result file (``save_as`` itself) is accepted too and stacked (see
        :meth:`from_flat`).

        Args:
            path: the file to read
            map_location: where the tensors go (``torch.load``'s argument)

        Returns:
            The result.

        Raises:
            FatalError: naming *path*: unreadable, not a result, or a newer format version.
        """
        try:
            data = torch.load(path, map_location=map_location, weights_only=True)
        except Exception as e:  # torch raises many kinds for a bad file
            raise FatalError(f"{path}: cannot read a result file: {e}") from None
        if not isinstance(data, dict):
            raise FatalError(f"{path}: holds a {type(data).__name__}, not a result dictionary")
        if data.get("format") != FORMAT:
            try:
                return cls.from_flat(data)
            except FatalError as e:
                raise FatalError(f"{path}: {e}") from None
        if not isinstance(data.get("version"), int) or data["version"] > VERSION:
            raise FatalError(
                f"{path}: stacked result version {data.get('version')!r}; this neml2-drivers "
                f"reads version {VERSION} and older"
            )
        inputs, outputs = data.get("input"), data.get("output")
        if not isinstance(inputs, dict) or not isinstance(outputs, dict):
            raise FatalError(f"{path}: a stacked result needs 'input' and 'output' dictionaries")
        try:
            return cls(inputs, outputs, data.get("time", "t"))
        except FatalError as e:
            raise FatalError(f"{path}: {e}") from None


def _stack(
    side: str, var: str, recorded: dict[int, torch.Tensor], steps: int, time: str
) -> torch.Tensor:
    """The *steps* values of one variable, filled and broadcast (module description)."""
    first = min(recorded)
    present = sorted(recorded)
    values = [recorded[k] for k in present]
    where = f"{side} '{var}'"
    try:
        shape = torch.broadcast_shapes(*(v.shape for v in values))
    except RuntimeError:
        shapes = ", ".join(f"step {k}: {tuple(recorded[k].shape)}" for k in present[:6])
        raise FatalError(f"{where}: the steps' shapes do not broadcast ({shapes})") from None
    like = values[0]
    contiguous = present == list(range(first, steps))
    if present == [0] and steps > 1 and side == "output":
        # an initial condition of a variable the model does not output: carried unchanged
        full = [recorded[0].expand(shape)] * steps
    elif contiguous and (
        first == 0 or (side == "output" and first == 1) or (side == "input" and _history(var))
    ):
        zero = torch.zeros(shape, dtype=like.dtype, device=like.device)
        full = [zero] * first + [v.expand(shape) for v in values]
    else:
        missing = [k for k in range(steps) if k not in recorded]
        shown = ", ".join(str(k) for k in missing[:8]) + (" ..." if len(missing) > 8 else "")
        hint = (
            "; the model does not take the time, so the flat result records it at step 0 "
            "only: pass times= (the prescribed times)"
            if side == "input" and var == time
            else ""
        )
        raise FatalError(f"{where} is not recorded at step(s) {shown} of 0..{steps - 1}{hint}")
    return torch.stack(full)
