"""The sub-batch shape of every input and output of a model (e.g. the per-slip axis).

Raw tensors at the compiled boundary are ``(*B, *sub_batch, *base)``: ``B`` is the
caller's batch (flattened to the graph's one dynamic axis), ``sub_batch`` a fixed
shape per variable that the model's physics owns (12 slip systems, N grains).

Where the shapes come from, in order:

1. ``sub_batch`` given to the compiler (``{name: shape}``), e.g. from
   ``[Settings]/example_batch_shape/<name> = '(dyn; sub)'`` (``x~1`` inherits ``x``);
2. a history input ``x~k`` takes the sub-batch of output ``x``;
3. every other input has none.

The output shapes are then read off one eager probe call of the model at those input
shapes, at small positive values or, where the model refuses those, at zero (a
sub-batched parameter such as the slip-system geometry gives its outputs a per-slip
axis even when no input has one), and step 2 is repeated until nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager

import torch

from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import FatalError

Shape = tuple[int, ...]


def _history_base(name: str) -> str | None:
    base, sep, lag = name.rpartition("~")
    return base if sep and lag.isdigit() else None


def probe_inputs(
    model, batch: int, sub: Mapping[str, Shape], dtype, device, *, zeros: bool = False
) -> list:
    """Deterministic typed inputs at ``(batch, *sub, *base)``: non-degenerate values in
    ``[1e-3, 2e-3)``, or all zeros (*zeros*)."""
    g = torch.Generator().manual_seed(1234)
    xs = []
    for name, t in model.input_spec.items():
        s = tuple(sub.get(name, ()))
        shape = (batch, *s, *t.BASE_SHAPE)
        if zeros:
            x = torch.zeros(shape, dtype=torch.float64)
        else:
            x = 1e-3 * (1.0 + torch.rand(shape, generator=g, dtype=torch.float64))
        xs.append(t(x.to(dtype=dtype, device=device), len(s)))
    return xs


@contextmanager
def _unchecked_solvers(model):
    """The implicit updates of *model* solve without raising on a failed solve inside the
    block (the probe inputs are arbitrary; only the output shapes matter)."""
    updates = implicit_updates(model)
    record_solves(updates, check=False)
    try:
        yield
    finally:
        stop_recording(updates)


def _outputs_sub(model, sub: Mapping[str, Shape]) -> dict[str, Shape]:
    """The output sub-batch shapes of one probe call. A model may refuse the probe's
    values (a tabulated function whose argument leaves its table: the KWN driving force
    of a matrix concentration that a number density of 1e-3 per bin depletes), so on
    an error the probe is repeated at zero inputs; the first error is reported if that
    fails too."""
    with torch.no_grad(), _unchecked_solvers(model):
        try:
            outs = model(*probe_inputs(model, 2, sub, model.dtype, model.device))
        except Exception as first:
            try:
                outs = model(*probe_inputs(model, 2, sub, model.dtype, model.device, zeros=True))
            except Exception:
                raise first from None
    outs = outs if isinstance(outs, tuple) else (outs,)
    return {n: tuple(o.sub_batch_shape) for n, o in zip(model.output_spec, outs, strict=True)}


def infer_sub_batch(
    model, given: Mapping[str, Shape] | None = None
) -> tuple[dict[str, Shape], dict[str, Shape]]:
    """``(inputs, outputs)``: ``{name: sub_batch_shape}`` for every variable of *model*."""
    given = {k: tuple(int(s) for s in v) for k, v in (given or {}).items()}
    unknown = [
        k for k in given if k not in model.input_spec and _history_base(k) not in model.input_spec
    ]
    ins: dict[str, Shape] = {}
    for name in model.input_spec:
        base = _history_base(name)
        if name in given:
            ins[name] = given[name]
        elif base is not None and base in given:
            ins[name] = given[base]
        else:
            ins[name] = ()
    fixed = {n for n in model.input_spec if n in given or _history_base(n) in given}
    # names declared for outputs (e.g. 'dislocation_density' for its '~1' lag) are fine
    unknown = [k for k in unknown if k not in model.output_spec]
    if unknown:
        raise FatalError(
            f"sub-batch shape given for {', '.join(unknown)}, which the model has neither as "
            f"input nor output; inputs: {', '.join(model.input_spec)}"
        )
    for _ in range(4):
        try:
            outs = _outputs_sub(model, ins)
        except Exception as e:  # the model's own shape errors, reported with the shapes tried
            tried = {n: s for n, s in ins.items() if s}
            raise FatalError(
                f"could not evaluate the model with input sub-batch shapes {tried or 'none'} "
                f"to find its output shapes ({type(e).__name__}: {e}); declare them with "
                "[Settings]/example_batch_shape/<variable> = '(N; sub...)'"
            ) from e
        changed = False
        for name in model.input_spec:
            base = _history_base(name)
            if name in fixed or base is None or base not in outs:
                continue
            if ins[name] != outs[base]:
                ins[name], changed = outs[base], True
        if not changed:
            return ins, outs
    raise FatalError("the sub-batch shapes of the model's history inputs do not settle")
