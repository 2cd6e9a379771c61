"""History inputs and the one-step helper that zero-fills them.

A model that integrates in time reads the previous step's values as inputs named
``<variable>~1`` (``plastic_strain~1``, ``t~1``). A driver supplies them step after
step. For one step from a virgin state (the tangent of a material point at the start
of loading, a batch of trial states) they are all zero, and
:func:`with_zero_history` fills them in::

    inputs = with_zero_history(model, {"strain": strain, "t": 1.0})
    out, J = model.jacobian(inputs, wrt="strain")

The filling is opt-in: a call without a history input is an error that names the
missing inputs and this function (:func:`missing_inputs_message`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from neml2.models._naming import history_of
from neml2.tensors import FatalError, TensorWrapper


def is_history(name: str) -> bool:
    """Whether the input *name* is a previous step's value (``x~1``, ``t~1``)."""
    return history_of(name) is not None


def missing_inputs_message(label: str, missing: list[str]) -> str:
    """The error for a call without the inputs *missing* (names, in input order).

    Names the inputs, and when some are history inputs, says how to zero-fill them.
    """
    message = f"{label}: missing input(s) {', '.join(missing)}"
    if any(is_history(n) for n in missing):
        message += (
            "; a name ending in ~N is a history input (the value N steps back): for one "
            "step from a zero state, neml2.models.with_zero_history(model, inputs) fills "
            "those with zeros"
        )
    return message


def _model_surface(model: Any) -> tuple[list[str], list[tuple[int, ...]], dict[str, type]]:
    """``(input names, input base shapes, input types by name)`` of a model of any route
    (the types only where the model has ``input_spec``: py-eager, py-jit)."""
    try:
        names = list(model.input_names)
        bases = [tuple(b) for b in model.input_base_shapes]
        _ = (model.dtype, model.device)  # part of the surface every route has
    except AttributeError as e:
        raise FatalError(
            f"with_zero_history: expected a neml2 model (input_names, input_base_shapes, "
            f"dtype, device), got {type(model).__name__}"
        ) from e
    spec = getattr(model, "input_spec", None)
    return names, bases, dict(spec) if isinstance(spec, Mapping) else {}


def _sub_batch_ndim(model: Any, name: str, index: int, value: Any) -> int:
    """How many sub-batch axes the input *name* (position *index*) has in *value*."""
    if isinstance(value, TensorWrapper):
        return value.sub_batch_ndim
    shapes = getattr(model, "input_sub_batch_shapes", None)  # an AOTI artifact
    if shapes is not None:
        return len(shapes[index])
    declared = getattr(model, "sub_batch", None)  # neml2.compile(model, sub_batch=)
    if isinstance(declared, Mapping):
        return int(declared.get(name, 0))
    return 0


def with_zero_history(model: Any, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """*inputs* completed with zeros for every history input they lack.

    For one step from a zero state: every missing input whose name ends in ``~N``
    (``plastic_strain~1``, ``t~1``) becomes zeros. Other missing inputs stay missing
    (the model's call then names them): the current time ``t`` in particular, since
    ``t = t~1 = 0`` is a zero time step.

    Args:
        model: a neml2 model of any route (``neml2.load_model``, ``neml2.compile``,
            ``neml2.aoti.Model``).
        inputs: the inputs given, by name: tensors at ``(*B, *base)`` (or typed values,
            or Python numbers), as ``model.forward`` takes them.

    Returns:
        A new dict: the given inputs (the same objects) and, for each missing history
            input ``x~N``, ``torch.zeros(*B, *sub, *base)`` in the model's dtype and on its
            device. ``B`` is the batch shape the given inputs broadcast to, ``base`` the
            input's base shape (``(6,)`` for an SR2, ``()`` for a Scalar). ``sub`` is the
            input's sub-batch shape: the artifact's for a compiled model, else that of the
            current value ``x`` when it is given as a typed value with sub-batch axes (the
            zeros are then a typed value of the same sub-batch), else none.

    Raises:
        FatalError: *model* is not a neml2 model; *inputs* names an input the model does
            not have; the given batch shapes do not broadcast.
    """
    names, bases, types = _model_surface(model)
    label = getattr(model, "_label", lambda: type(model).__name__)()
    unknown = [n for n in inputs if n not in names]
    if unknown:
        raise FatalError(
            f"{label}: with_zero_history: unknown input(s) {', '.join(unknown)}; inputs: "
            f"{', '.join(names)}"
        )
    index = {n: i for i, n in enumerate(names)}
    batches: dict[str, tuple[int, ...]] = {}
    subs: dict[str, tuple[type | None, tuple[int, ...]]] = {}
    for name, value in inputs.items():
        i = index[name]
        data = value.data if isinstance(value, TensorWrapper) else torch.as_tensor(value)
        nsub = _sub_batch_ndim(model, name, i, value)
        ndyn = max(data.dim() - nsub - len(bases[i]), 0)
        batches[name] = tuple(data.shape[:ndyn])
        typ = type(value) if isinstance(value, TensorWrapper) else None
        subs[name] = (typ, tuple(data.shape[ndyn : ndyn + nsub]))
    try:
        batch = tuple(torch.broadcast_shapes(*batches.values()))
    except RuntimeError as e:
        shapes = ", ".join(f"{n} {s}" for n, s in batches.items())
        raise FatalError(
            f"{label}: with_zero_history: the batch shapes of the given inputs do not "
            f"broadcast ({shapes})"
        ) from e
    artifact_subs = getattr(model, "input_sub_batch_shapes", None)  # fixed by an artifact
    dtype, device = model.dtype, model.device
    out = dict(inputs)
    for i, (name, base) in enumerate(zip(names, bases, strict=True)):
        lag = history_of(name)
        if name in inputs or lag is None:
            continue
        typ, sub = subs.get(lag[0], (None, ()))
        # an artifact fixes the sizes; a size of -1 (cpp-eager: known only at call time)
        # is taken, as for a Python model, from the current value given beside the lag
        if artifact_subs is not None and all(int(d) >= 0 for d in artifact_subs[i]):
            typ, sub = None, tuple(artifact_subs[i])
        want = getattr(types.get(name), "STORAGE_DTYPE", None) or dtype
        zeros = torch.zeros((*batch, *sub, *base), dtype=want, device=device)
        if typ is not None and sub:  # a typed value, so the model sees the sub-batch
            zeros = types.get(name, typ)(zeros, len(sub))
        out[name] = zeros
    return out
