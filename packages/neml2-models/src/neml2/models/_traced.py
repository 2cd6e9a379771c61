"""A model evaluated on flattened raw tensors: what the traced routes trace.

py-jit (:mod:`neml2.models._jit`, under ``torch.compile``) and neml2-compile's
graphs (``neml2.compiler._graphs``, under ``torch.export``) both call these
functions, so both routes trace one body per operation.

Every input arrives as a raw tensor at ``(N, *sub, *base)``: one batch axis ``N``
(the caller's batch, flattened), then the variable's sub-batch axes (``subs[i]`` of
them: slip systems, grains; often none), then its base shape. (py-jit keeps the
caller's ``(*B)`` unflattened where a parameter with a batch of its own fixes it; the
functions take any common batch ``(*B)`` in place of ``(N,)``.) The functions

1. rebuild the typed inputs (the types of ``model.input_spec``);
2. call the model: the outputs, or with ``v=`` seeds (a direction for ``jvp``, the
   identity for ``jacobian``), with the promoted parameters through
   ``torch.func.functional_call`` where *params* is given;
3. bring every output to its full ``(N, *sub, *base)`` (an output need not depend on
   every batch axis; the callers reshape ``N`` back to the caller's batch);
4. return plain tensors and the solve status: every Newton solve of the model's
   implicit updates, in the order they ran (:func:`with_status`). py-jit turns it into
   a ``ConvergenceError`` naming the failed points; the compiled graphs return its
   :func:`failed_points`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch.func import functional_call

from neml2.models._model import _as_tuple
from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import TensorWrapper

#: one Newton solve: ``(converged (N) bool, residual_norm (N), iterations ())``
Solve = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
#: per implicit update (module order), its solves in the order they ran; ``()`` for a
#: model without one
Status = tuple[tuple[Solve, ...], ...]


def typed_inputs(
    model: torch.nn.Module, xs: Sequence[torch.Tensor], subs: Sequence[int]
) -> list[TensorWrapper]:
    """The typed inputs of *model* from raw tensors.

    Args:
        model: The model (a :class:`neml2.models.Model`).
        xs: One raw tensor per input, in ``model.input_spec`` order, at
            ``(N, *sub, *base)``.
        subs: The number of sub-batch axes of each input.

    Returns:
        The inputs as values of their declared types, in the same order.
    """
    types = model.input_spec.values()
    return [t(x, s) for t, x, s in zip(types, xs, subs, strict=True)]


def with_status(
    model: torch.nn.Module,
    fn: Callable[[], Any],
    reduce: Callable[[Status], Any] | None = None,
) -> tuple[Any, Any]:
    """Call *fn* with the solves of *model*'s implicit updates recorded, not checked.

    A traced graph cannot raise on a failed solve, so each update logs its solves
    (:func:`neml2.models.implicit_update.record_solves`) and the status is returned
    with the result; the callers decide what a failure is.

    Args:
        model: The model *fn* evaluates.
        fn: The evaluation, without arguments.
        reduce: Applied to the status right after *fn* (e.g. :func:`failed_points`);
            ``None``: the status itself. Where the reduction is traced is part of the
            graph (its code, hence neml2-compile's cache key), so it is done here, the
            one place, before anything the callers do with the outputs.

    Returns:
        ``(fn(), status)``: *status* holds, per implicit update of *model* (module
            order), the ``(converged (N), residual_norm (N), iterations ())`` of each
            of its solves, ``()`` for a model without an implicit update; or what
            *reduce* makes of it.
    """
    updates = implicit_updates(model)
    logs = record_solves(updates)
    try:
        out = fn()
    finally:
        stop_recording(updates)
    status = tuple(tuple(log) for log in logs)
    return out, status if reduce is None else reduce(status)


def failed_points(status: Status) -> torch.Tensor:
    """How many points failed to converge, over every solve of *status*.

    Args:
        status: What :func:`with_status` returned.

    Returns:
        A 0-dim int64 tensor: the sum over the solves of their non-converged points
            (a point failing in two solves counts twice); 0 without a solve.
    """
    counts = [(~converged).sum() for solves in status for converged, _, _ in solves]
    return torch.stack(counts).sum() if counts else torch.zeros((), dtype=torch.int64)


def forward(
    model: torch.nn.Module,
    xs: Sequence[torch.Tensor],
    subs: Sequence[int],
    params: Mapping[str, torch.Tensor] | None = None,
    reduce: Callable[[Status], Any] | None = None,
) -> tuple[tuple[torch.Tensor, ...], Any]:
    """The outputs of *model*.

    Args:
        model: The model.
        xs: The inputs at ``(N, *sub, *base)``, in ``model.input_spec`` order.
        subs: The number of sub-batch axes of each input.
        params: Parameter name (dotted) -> value at its stored shape, used in place of
            the model's own; ``None`` or empty: the model's.
        reduce: What to make of the solve status (as for :func:`with_status`).

    Returns:
        ``(outputs, status)``: the outputs at ``(N, *sub, *base)`` in
            ``model.output_spec`` order, and the solve status (:func:`with_status`).
    """
    typed = typed_inputs(model, xs, subs)
    outs, status = with_status(model, lambda: _as_tuple(_call(model, typed, params)), reduce)
    return _full_outputs(model, outs, typed), status


def jvp(
    model: torch.nn.Module,
    xs: Sequence[torch.Tensor],
    subs: Sequence[int],
    tangents: Mapping[str, torch.Tensor],
    params: Mapping[str, torch.Tensor] | None = None,
    reduce: Callable[[Status], Any] | None = None,
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], Any]:
    """The outputs of *model* and their derivatives along one direction.

    Args:
        model: The model.
        xs: The inputs at ``(N, *sub, *base)``, in ``model.input_spec`` order.
        subs: The number of sub-batch axes of each input.
        tangents: Input name -> direction at the input's shape; a missing input has
            the zero direction.
        params: Parameter values in place of the model's own (as for :func:`forward`).
        reduce: What to make of the solve status (as for :func:`with_status`).

    Returns:
        ``(outputs, jvps, status)``: the outputs and ``sum_i dy/dx_i . t_i`` of each,
            both at ``(N, *sub, *base)`` in ``model.output_spec`` order, and the solve
            status.
    """
    typed = typed_inputs(model, xs, subs)
    v = {}
    for (name, t), x in zip(model.input_spec.items(), typed, strict=True):
        if name in tangents:
            v[name] = {"d": t(tangents[name].unsqueeze(0), x.sub_batch_ndim)}
    (*outs, v_out), status = with_status(model, lambda: _call(model, typed, params, v=v), reduce)
    ys = _full_outputs(model, outs, typed)
    dys = []
    for name, y in zip(model.output_spec, ys, strict=True):
        d = v_out[name].get("d")
        dys.append(d.data[0].expand_as(y) if d is not None else torch.zeros_like(y))
    return ys, tuple(dys), status


def jacobian(
    model: torch.nn.Module,
    xs: Sequence[torch.Tensor],
    subs: Sequence[int],
    pairs: Sequence[tuple[str, str]],
    *,
    couple_sub_batch: bool,
    params: Mapping[str, torch.Tensor] | None = None,
    reduce: Callable[[Status], Any] | None = None,
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], Any]:
    """The outputs of *model* and the Jacobian blocks ``d out / d in`` of *pairs*.

    The model is called once with identity seeds on exactly the inputs *pairs* name.

    Args:
        model: The model.
        xs: The inputs at ``(N, *sub, *base)``, in ``model.input_spec`` order.
        subs: The number of sub-batch axes of each input.
        pairs: The ``(output, input)`` blocks wanted, in the order they are returned.
        couple_sub_batch: ``True``: seed every ``(*sub, *base)`` entry of an input, so a
            block couples each sub-batch entry with every other (neml2-compile's
            graphs); ``False``: seed ``(*base)`` only, the diagonal across sub-batch
            entries, as :meth:`neml2.models.Model.jacobian` (py-jit).
        params: Parameter values in place of the model's own (as for :func:`forward`).
        reduce: What to make of the solve status (as for :func:`with_status`).

    Returns:
        ``(outputs, blocks, status)``: the outputs at ``(N, *out_sub, *out_base)`` in
            ``model.output_spec`` order; one block per pair at
            ``(N, *out_sub, *out_base, *in_sub, *in_base)`` (*couple_sub_batch*) or
            ``(N, *out_sub, *out_base, *in_base)``, zeros where the output does not
            depend on the input; the solve status.
    """
    typed = typed_inputs(model, xs, subs)
    names = list(model.input_spec)
    wrt = {i for _, i in pairs}
    # what each block ends in for its input
    trail = {
        n: (*x.sub_batch_shape, *x.base_shape) if couple_sub_batch else tuple(x.base_shape)
        for n, x in zip(names, typed, strict=True)
    }
    v = {n: {n: _identity(x, trail[n])} for n, x in zip(names, typed, strict=True) if n in wrt}
    (*outs, v_out), status = with_status(model, lambda: _call(model, typed, params, v=v), reduce)
    ys = dict(zip(model.output_spec, _full_outputs(model, outs, typed), strict=True))
    blocks = []
    for o, i in pairs:
        y, d = ys[o], v_out[o].get(i)
        if d is None:  # a structural zero
            blocks.append(y.new_zeros((*y.shape, *trail[i])))
            continue
        t = d.data.expand(d.data.shape[0], *y.shape)
        blocks.append(t.movedim(0, -1).reshape((*y.shape, *trail[i])))
    return tuple(ys.values()), tuple(blocks), status


def _call(model, typed: list[TensorWrapper], params: Mapping[str, torch.Tensor] | None, **kw):
    if params:
        return functional_call(model, dict(params), tuple(typed), kw, strict=False)
    return model(*typed, **kw)


def _full_outputs(
    model: torch.nn.Module, outs: Sequence[TensorWrapper], typed: Sequence[TensorWrapper]
) -> tuple[torch.Tensor, ...]:
    """The outputs' data, each at exactly ``(*B, *sub, *base)``, ``B`` the first input's
    batch (``(N,)`` for the flattened inputs): an output with fewer batch axes (one that
    depends on no input) is expanded, as the callers rely on the full shape."""
    batch = tuple(typed[0].dynamic_shape) if typed else ()
    res = []
    for t, o in zip(model.output_spec.values(), outs, strict=True):
        y = o.data
        shape = (*o.sub_batch_shape, *t.BASE_SHAPE)
        if y.dim() - len(shape) < len(batch):
            y = y.expand((*batch, *shape))
        res.append(y)
    return tuple(res)


def _identity(x: TensorWrapper, shape: tuple[int, ...]) -> torch.Tensor:
    """The identity seed over *shape*: ``(K, *shape)``, ``K = prod(shape)``."""
    k = 1
    for s in shape:
        k *= s
    return torch.eye(k, dtype=x.dtype, device=x.device).reshape(k, *shape)
