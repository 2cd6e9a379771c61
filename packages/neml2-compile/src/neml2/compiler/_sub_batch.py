"""The sub-batch shape of every input and output of a model (e.g. the per-slip axis).

Raw tensors at the compiled boundary are ``(*B, *sub_batch, *base)``: ``B`` is the
caller's batch (flattened to the graph's one dynamic axis), ``sub_batch`` a fixed
shape per variable that the model's physics owns (12 slip systems, N grains).

Where the shapes come from, in order:

1. ``sub_batch`` given to the compiler (``{name: shape}``), e.g. from
   ``[Settings]/example_batch_shape/<name> = '(dyn; sub)'`` (``x~1`` inherits ``x``);
2. the example value of the input (``examples``, e.g. what the input file's driver
   feeds the model, :mod:`neml2.compiler._examples`): its sub-batch shape; for a
   history input only a non-empty one (a driver's first step feeds a zero there);
3. a history input ``x~k`` takes the sub-batch of output ``x``;
4. every other input has none.

Where the probe call (below) refuses those shapes, a few inputs that none of this
settles are given the sub-batch shape of the model's parameters (the ``[Tensors]``
they name), the smallest sets first (:func:`_parameter_guess`).

The output shapes are then read off one eager probe call of the model at those input
shapes, at the example values where there are some, elsewhere at small positive values
or, where the model refuses those, at zero (a sub-batched parameter such as the
slip-system geometry gives its outputs a per-slip axis even when no input has one),
and step 3 is repeated until nothing changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from contextlib import contextmanager
from itertools import combinations

import torch

from neml2.compiler._examples import tile
from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import FatalError, TensorWrapper

Shape = tuple[int, ...]


def _history_base(name: str) -> str | None:
    base, sep, lag = name.rpartition("~")
    return base if sep and lag.isdigit() else None


def probe_inputs(
    model,
    batch: int,
    sub: Mapping[str, Shape],
    dtype,
    device,
    *,
    zeros: bool = False,
    examples: Mapping[str, TensorWrapper] | None = None,
) -> list:
    """Deterministic typed inputs at ``(batch, *sub, *base)``: the *examples* laid out
    on the batch (:func:`neml2.compiler._examples.tile`) where given, elsewhere
    non-degenerate values in ``[1e-3, 2e-3)``, or all zeros (*zeros*)."""
    g = torch.Generator().manual_seed(1234)
    given = tile(model, batch, examples or {}, sub, dtype, device)
    xs = []
    for name, t in model.input_spec.items():
        s = tuple(sub.get(name, ()))
        shape = (batch, *s, *t.BASE_SHAPE)
        if name in given:
            x = given[name]
        elif zeros:
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


def _outputs_sub(model, sub: Mapping[str, Shape], examples=None) -> dict[str, Shape]:
    """The output sub-batch shapes of one probe call. A model may refuse the probe's
    made-up values (a tabulated function whose argument leaves its table: the KWN
    driving force of a matrix concentration that a number density of 1e-3 per bin
    depletes), so on an error the probe is repeated with zeros for the inputs that have
    no example value; the first error is reported if that fails too."""
    with torch.no_grad(), _unchecked_solvers(model):
        args = (model, 2, sub, model.dtype, model.device)
        try:
            outs = model(*probe_inputs(*args, examples=examples))
        except Exception as first:
            try:
                outs = model(*probe_inputs(*args, zeros=True, examples=examples))
            except Exception:
                raise first from None
    outs = outs if isinstance(outs, tuple) else (outs,)
    return {n: tuple(o.sub_batch_shape) for n, o in zip(model.output_spec, outs, strict=True)}


def infer_sub_batch(
    model,
    given: Mapping[str, Shape] | None = None,
    examples: Mapping[str, TensorWrapper] | None = None,
    notes: list[str] | None = None,
) -> tuple[dict[str, Shape], dict[str, Shape]]:
    """``(inputs, outputs)``: ``{name: sub_batch_shape}`` for every variable of *model*.

    Args:
        model (neml2.models.Model): the model.
        given: declared sub-batch shapes by variable name (``x`` covers ``x~1``); they
            win over *examples*.
        examples: example values of inputs (typed, any batch shape), e.g. what the
            input file's driver feeds the model; their sub-batch shapes are used where
            nothing is declared (see the module docstring), their values in the probe.
        notes: where given, a line is appended for each sub-batch shape guessed from
            the model's parameters (the progress output shows it).

    Returns:
        The sub-batch shape of every input and of every output.

    Raises:
        FatalError: a declared name that is no variable of the model, a probe call
            that fails (naming the shapes tried), shapes that do not settle.
    """
    given = {k: tuple(int(s) for s in v) for k, v in (given or {}).items()}
    examples = dict(examples or {})
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
        elif name in examples and (base is None or examples[name].sub_batch_ndim):
            ins[name] = tuple(examples[name].sub_batch_shape)
        else:
            ins[name] = ()
    fixed = {
        n
        for n in model.input_spec
        if n in given or _history_base(n) in given or (n in examples and examples[n].sub_batch_ndim)
    }
    # names declared for outputs (e.g. 'dislocation_density' for its '~1' lag) are fine
    unknown = [k for k in unknown if k not in model.output_spec]
    if unknown:
        raise FatalError(
            f"sub-batch shape given for {', '.join(unknown)}, which the model has neither as "
            f"input nor output; inputs: {', '.join(model.input_spec)}"
        )
    for attempt in range(4):
        try:
            outs = _outputs_sub(model, ins, examples)
        except Exception as e:  # the model's own shape errors, reported with the shapes tried
            free = [n for n in model.input_spec if n not in fixed and n not in examples]
            guess = _parameter_guess(model, ins, free, examples) if attempt == 0 else None
            if guess is None:
                tried = {n: s for n, s in ins.items() if s}
                raise FatalError(
                    f"could not evaluate the model with input sub-batch shapes "
                    f"{tried or 'none'} to find its output shapes ({type(e).__name__}: {e}); "
                    "declare them with [Settings]/example_batch_shape/<variable> = "
                    "'(N; sub...)'"
                ) from e
            ins, outs, chosen = guess
            fixed |= chosen
            if notes is not None:
                for n in sorted(chosen):
                    spec = "; ".join(str(x) for x in ins[n])
                    notes.append(
                        f"sub-batch shape of input '{n}' taken from the model's parameters: "
                        f"{ins[n]} (if wrong, declare it: [Settings]/example_batch_shape/{n} "
                        f"= '(N; {spec})')"
                    )
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


#: how many probe calls :func:`_parameter_guess` makes at most
GUESSES = 32


def parameter_sub_shapes(model) -> list[Shape]:
    """The distinct non-empty sub-batch shapes of *model*'s parameters (the ``[Tensors]``
    they name: the cells of a grid, the bins of a size distribution, the slip systems),
    the most frequent first."""
    count: Counter[Shape] = Counter()
    for m in model.modules():
        param = getattr(m, "param", None)
        if not callable(param):
            continue
        for n, _ in (*m.named_parameters(recurse=False), *m.named_buffers(recurse=False)):
            try:
                v = param(n)
            except Exception:  # a buffer that is no declared parameter
                continue
            if isinstance(v, TensorWrapper) and v.sub_batch_ndim:
                count[tuple(v.sub_batch_shape)] += 1
    return [s for s, _ in count.most_common()]


def _parameter_guess(model, ins, free, examples):
    """Give the sub-batch shape of the model's parameters to a few of the *free*
    inputs (those neither declared nor with an example value) until the probe call
    succeeds: ``(inputs, outputs, chosen inputs)``, or None.

    A model whose inputs carry an axis it cannot guess (a finite-volume model's cell
    values, a KWN model's number density per size bin) without ``[Settings]`` or a
    driver to say so: the ``[Tensors]`` that its parameters name carry that axis
    (the cell widths, the bin edges). The smallest sets of inputs are tried first,
    history inputs (the model's state) before the others, at most :data:`GUESSES`
    probe calls.
    """
    order = sorted(free, key=lambda n: _history_base(n) is None)
    tries = 0
    for shape in parameter_sub_shapes(model):
        for size in range(1, len(order) + 1):
            for chosen in combinations(order, size):
                tries += 1
                if tries > GUESSES:
                    return None
                trial = {**ins, **dict.fromkeys(chosen, shape)}
                try:
                    return trial, _outputs_sub(model, trial, examples), set(chosen)
                except Exception:
                    continue
    return None
