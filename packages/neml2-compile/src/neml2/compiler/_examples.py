"""Example inputs of a model, read from its input file: the points a compile traces at.

``torch.export`` traces a model at example inputs, and ``neml2-compile`` first calls
the model once eagerly at them to learn the sub-batch shape of every output
(:mod:`neml2.compiler._sub_batch`). Made-up values fail for two kinds of model:

* a model whose input carries an intermediate axis the model cannot guess (the cells
  of a finite-volume grid, the size bins of a KWN model, the slip systems of a
  per-slip crystal model): its input needs ``(N, *sub, *base)`` with the right ``sub``;
* a model defined on part of the real line (a ``ScalarLinearInterpolation`` table
  covering 300 to 1200 K): an argument outside refuses the eager call.

The input file knows both, in its ``[Drivers]`` blocks: the values a driver feeds the
model are valid points by construction, at the shapes the model runs with. They are
read generically from the HIT tree, without ``neml2.drivers``, by the option names the
drivers share (the reference library's spelling):

* ``input_<Type>_names`` / ``input_<Type>_values`` (``ModelUnitTest``): the values,
  as they are;
* ``prescribed_time``, ``time`` (default ``t``), ``prescribed_<Type>_names/_values``
  (formerly ``force_<Type>_*``) and ``ic_<Type>_names/_values``
  (``TransientDriver``): what the driver feeds the model at its first step (step 1):
  the time and the prescribed values at step 1, a history input ``x~m`` the value of
  ``x`` at step ``1 - m`` (the time or a prescribed value at step 0, or ``x``'s
  initial condition), else zero.

A value is a number (every component equal to it) or a ``[Tensors]`` name. The
first driver block naming the model (``model = NAME``) that gives a value for one of
its inputs is used; ``[Settings]/example_batch_shape`` still overrides the sub-batch
shapes it gives (:func:`neml2.compiler._sub_batch.infer_sub_batch`).

The values are laid out on the compile's one batch axis by :func:`tile`: the inputs'
batch shapes broadcast together (so that the ``t`` and ``t~1`` of one point stay
together), flattened, and repeated up to the example batch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import torch

from neml2.tensors import TensorWrapper

#: ``<prefix>_<Type>_names``: the driver options that name model inputs
_NAMES = re.compile(r"^(input|prescribed|force|ic)_([A-Za-z0-9]+)_names$")


@dataclass
class ExampleInputs:
    """Example values of some of a model's inputs, and where they came from.

    Attributes:
        values: input name -> typed value at ``(*B, *sub, *base)``: any batch shape
            ``B`` (:func:`tile` lays it out), the input's sub-batch shape and its type's
            base shape.
        source: where the values came from, for the progress output (e.g.
            ``"[Drivers/driver] (step 1 of a transient run)"``); empty when none.
        notes: why a driver block could not be read, one line each (they are shown in
            the progress output; the compile then uses made-up values).
    """

    values: dict[str, TensorWrapper] = field(default_factory=dict)
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.values)


def _history(name: str) -> tuple[str, int] | None:
    base, sep, lag = name.rpartition("~")
    return (base, int(lag)) if sep and base and lag.isdigit() and int(lag) >= 1 else None


def _tokens(node, name: str) -> list[str]:
    p = node.param(name)
    return p.as_str().split() if p is not None else []


def _typed(ctx, typ: type, token: str) -> TensorWrapper:
    """The value *token* (a number or a ``[Tensors]`` name) as a *typ*."""
    try:
        number = float(token)
    except ValueError:
        number = None
    if number is not None:
        t = torch.full(typ.BASE_SHAPE, number, dtype=ctx.dtype, device=ctx.device)
        return typ(t)
    if not ctx.has_tensor(token):
        raise ValueError(f"'{token}' is neither a number nor a [Tensors] block")
    value = ctx.tensor(token)
    if not isinstance(value, TensorWrapper):
        value = typ(torch.as_tensor(value, dtype=ctx.dtype, device=ctx.device))
    if tuple(value.base_shape) != tuple(typ.BASE_SHAPE):
        raise ValueError(
            f"[Tensors/{token}] is a {type(value).__name__} of base {tuple(value.base_shape)}, "
            f"not a {typ.__name__}"
        )
    return value if isinstance(value, typ) else typ(value)


def _pairs(node) -> dict[str, dict[str, str]]:
    """``{prefix: {variable: value token}}`` of a driver block's ``<prefix>_<T>_*``
    options (``force`` read as ``prescribed``)."""
    out: dict[str, dict[str, str]] = {}
    for p in node.params():
        m = _NAMES.match(p.name)
        if m is None:
            continue
        prefix = "prescribed" if m.group(1) == "force" else m.group(1)
        names = p.as_str().split()
        values = _tokens(node, p.name[: -len("names")] + "values")
        if len(names) != len(values):
            raise ValueError(f"{p.name} has {len(names)} entries, its _values {len(values)}")
        out.setdefault(prefix, {}).update(zip(names, values, strict=True))
    return out


def _step(value: TensorWrapper, k: int) -> TensorWrapper:
    """Step *k* of a history stored with the steps as its leading batch axis."""
    return type(value)(value.data[k], value.sub_batch_ndim)


def _unit_values(ctx, model, pairs) -> dict[str, TensorWrapper]:
    spec = model.input_spec
    return {n: _typed(ctx, spec[n], tok) for n, tok in pairs.get("input", {}).items() if n in spec}


def _transient_values(ctx, node, model, pairs) -> tuple[dict[str, TensorWrapper], int]:
    """The inputs a transient driver feeds *model* at its first step, and that step."""
    spec = model.input_spec
    tname = (_tokens(node, "time") or ["t"])[0]
    times = ctx.tensor(_tokens(node, "prescribed_time")[0])
    if not isinstance(times, TensorWrapper) or times.dynamic_ndim < 1:
        raise ValueError("prescribed_time is not a Scalar with the steps first")
    nsteps = int(times.data.shape[0])
    k = min(1, nsteps - 1)
    forces: dict[str, TensorWrapper] = {}
    for n, tok in pairs.get("prescribed", {}).items():
        typ = spec.get(n) or spec.get(f"{n}~1")  # a value read only as history
        if typ is None:
            continue
        v = _typed(ctx, typ, tok)
        if v.dynamic_ndim < 1 or v.data.shape[0] != nsteps:
            raise ValueError(f"prescribed '{n}' does not have the {nsteps} steps of the time")
        forces[n] = v
    ics: dict[str, str] = pairs.get("ic", {})
    out: dict[str, TensorWrapper] = {}
    for n, typ in spec.items():
        if n == tname:
            out[n] = typ(times.data[k], times.sub_batch_ndim)
            continue
        if n in forces:
            out[n] = _step(forces[n], k)
            continue
        hist = _history(n)
        if hist is None:
            continue  # neither prescribed nor history: the driver refuses it too
        base, lag = hist
        j = k - lag
        if j >= 0 and base == tname:
            out[n] = typ(times.data[j], times.sub_batch_ndim)
        elif j >= 0 and base in forces:
            out[n] = _step(forces[base], j)
        elif j == 0 and base in ics:
            out[n] = _typed(ctx, typ, ics[base])
        else:  # zero, as the driver gives it (its sub-batch shape is inferred)
            out[n] = typ(torch.zeros(typ.BASE_SHAPE, dtype=ctx.dtype, device=ctx.device))
    return out, k


def from_drivers(ctx, model_name: str, model) -> ExampleInputs:
    """Example inputs of *model* from the ``[Drivers]`` blocks of *ctx* that run it.

    Args:
        ctx (neml2.models.InputFile): the loaded input file.
        model_name: the ``[Models]`` block compiled; only driver blocks with
            ``model = model_name`` are read.
        model (neml2.models.Model): that model (its ``input_spec`` types the values).

    Returns:
        The values of the first driver block that gives one for an input of *model*
        (see the module docstring), empty when none does. A block that cannot be read
        (a missing ``[Tensors]`` block, a value of the wrong type) is skipped with a note.
    """
    result = ExampleInputs()
    sec = ctx.section("Drivers")
    for node in sec.children() if sec is not None else []:
        p = node.param("model")
        if p is None or p.as_str().strip() != model_name:
            continue
        where = f"[Drivers/{node.name}]"
        try:
            pairs = _pairs(node)
            if node.param("prescribed_time") is not None:
                values, k = _transient_values(ctx, node, model, pairs)
                how = f"{where} (the inputs of step {k} of its transient run)"
            else:
                values, how = _unit_values(ctx, model, pairs), f"{where} (its input values)"
        except Exception as e:  # a driver the compile cannot read: made-up values instead
            result.notes.append(f"{where}: not used for example inputs: {e}")
            continue
        if values:
            result.values, result.source = values, how
            return result
    return result


def tile(
    model,
    n: int,
    examples: Mapping[str, TensorWrapper],
    sub: Mapping[str, tuple[int, ...]],
    dtype: torch.dtype,
    device: torch.device | str,
) -> dict[str, torch.Tensor]:
    """The example values of *model*'s inputs at ``(n, *sub, *base)``, as raw tensors.

    The values' batch shapes are broadcast together when they can be (one point's
    values stay together), flattened and repeated cyclically up to *n* points; each
    value is broadcast to its input's sub-batch shape *sub*. A value that does not
    broadcast to it is left out (the caller makes one up).

    Args:
        model (neml2.models.Model): the model (``input_spec``: names and base shapes).
        n: the number of points.
        examples: input name -> typed value (:class:`ExampleInputs` ``values``).
        sub: input name -> its sub-batch shape in the compile.
        dtype: the dtype of the tensors returned.
        device: their device.

    Returns:
        Input name -> tensor ``(n, *sub, *base)``, for the inputs of *examples* that fit.
    """
    split: dict[str, tuple[torch.Tensor, tuple[int, ...], tuple[int, ...]]] = {}
    for name, v in examples.items():
        if name not in model.input_spec:
            continue
        base = tuple(model.input_spec[name].BASE_SHAPE)
        s, vsub = tuple(sub.get(name, ())), tuple(v.sub_batch_shape)
        lead = tuple(v.dynamic_shape)
        if len(vsub) > len(s):
            continue  # more sub-batch axes than the compile gives the input
        ones = (1,) * (len(s) - len(vsub))
        try:
            data = v.data.reshape((*lead, *ones, *vsub, *base)).expand((*lead, *s, *base))
        except RuntimeError:
            continue  # the value's sub-batch does not broadcast to the compile's
        split[name] = (data, lead, (*s, *base))
    try:
        common = torch.broadcast_shapes(*(lead for _, lead, _ in split.values()))
    except RuntimeError:
        common = None
    out: dict[str, torch.Tensor] = {}
    for name, (data, _, inner) in split.items():
        if common is not None:
            data = data.expand((*common, *inner))
        flat = data.reshape((-1, *inner))
        if flat.shape[0] == 0:
            continue
        idx = torch.arange(n, device=flat.device) % flat.shape[0]
        out[name] = flat[idx].to(dtype=dtype, device=device).contiguous()
    return out


def describe(examples: ExampleInputs) -> str:
    """One line for the progress output: which inputs have example values, from where."""
    if not examples:
        return ""
    return f"example inputs from {examples.source}: {', '.join(examples.values)}"
