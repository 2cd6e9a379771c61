"""Sub-batch-aware alignment of typed operands.

Storage of every typed value is ``(*dynamic_batch, *sub_batch, *base)``. Before two
values are combined their batch regions are aligned *region by region*:

1. the sub-batch regions are right-aligned against each other (the one with fewer
   sub-batch axes gets singleton axes at the *start* of its sub-batch region), then
2. the dynamic-batch regions are broadcast the ordinary (torch, right-aligned) way.

So a per-grain ``(20, 5; base)`` value (dynamic ``(20,)``, sub ``(5,)``) combines with a
global ``(20; base)`` value as ``(20, 1; base)``, never as ``(1, 20; base)``.

Tangents get the same singleton axes, inserted *after* their leading seed axes, and also
the dynamic padding (the primal gets it implicitly from torch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from neml2.tensors._errors import ShapeError
from neml2.tensors._tangents import Dual, _tracing

if TYPE_CHECKING:
    from neml2.tensors._base import TensorWrapper


def insert_singletons(t: torch.Tensor, right: int, count: int) -> torch.Tensor:
    """Insert ``count`` singleton axes just left of the last ``right`` axes of ``t``."""
    for _ in range(count):
        t = t.unsqueeze(-right - 1)
    return t


def describe(w: TensorWrapper) -> str:
    """``SR2(dynamic=(20,), sub=(5,), base=(6,))``."""
    return (
        f"{type(w).__name__}(dynamic={tuple(w.dynamic_shape)}, "
        f"sub_batch={tuple(w.sub_batch_shape)}, base={tuple(w.base_shape)})"
    )


def _region_broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    # a plain loop: Dynamo cannot trace max(generator, default=) inside while_loop bodies
    n = 0
    for s in shapes:
        n = len(s) if len(s) > n else n
    out = [1] * n
    for s in shapes:
        for i, d in enumerate(s):
            j = n - len(s) + i
            if d == 1:
                continue
            if out[j] != 1 and out[j] != d:
                return None
            out[j] = d
    return tuple(out)


def check_broadcastable(ws: tuple[TensorWrapper, ...], op: str) -> None:
    """Raise :class:`ShapeError` naming the region that does not broadcast."""
    if _tracing():
        return
    for region, getter in (
        ("sub-batch", lambda w: tuple(w.sub_batch_shape)),
        ("dynamic batch", lambda w: tuple(w.dynamic_shape)),
    ):
        if _region_broadcast([getter(w) for w in ws]) is None:
            raise ShapeError(
                f"{op}: {region} shapes do not broadcast: " + " vs ".join(describe(w) for w in ws)
            )


def align(ws: tuple[TensorWrapper, ...], op: str = "operation") -> tuple[list[Dual], int]:
    """Align the batch regions of ``ws``; return their :class:`Dual` views and sub-batch ndim.

    Primal tensors get only the sub-batch padding (torch pads the dynamic region on the
    left by itself); tangents get both so that they have exactly
    ``seed axes + dyn + sub + base`` dimensions.

    Two eager operands with the same batch shape, sub-batch rank and dtype (most
    operations of a model evaluation) are returned as they are without the general
    pass: 1.5 instead of 4.6 us per call.
    """
    if len(ws) == 2 and _lined_up(ws[0], ws[1]):
        return [_as_dual(ws[0]), _as_dual(ws[1])], ws[0].sub_batch_ndim
    w0 = ws[0]
    dt = w0.data.dtype
    S = S0 = w0.sub_batch_ndim
    simple = w0.tangents is None
    same_dtype = same_sub = True
    for w in ws[1:]:
        if w.data.dtype is not dt:
            same_dtype = False
        s = w.sub_batch_ndim
        if s != S0:
            simple = same_sub = False
            if s > S:
                S = s
        if w.tangents is not None:
            simple = False
    if not same_dtype:
        ws = _promote(ws)
    if simple:
        if len(ws) > 1:
            _quick_check(ws, op)
        return [Dual(w.data) for w in ws], S
    if len(ws) > 1:
        if same_sub:
            _quick_check(ws, op)
        else:
            check_broadcastable(ws, op)
    D = 0
    for w in ws:
        d = w.dynamic_ndim
        D = d if d > D else D
    out = []
    for w in ws:
        nb, s, d = w.base_ndim, w.sub_batch_ndim, w.dynamic_ndim
        p = insert_singletons(w.data, nb + s, S - s)
        if w.tangents is None:
            out.append(Dual(p))
            continue
        if s == S and d == D:  # nothing to pad: the tangents as they are (Dual never
            out.append(Dual(p, w.tangents, w.tangents2))  # mutates an operand's dicts)
            continue

        def pad(t, nb=nb, s=s, d=d):
            t = insert_singletons(t, nb + s, S - s)
            return insert_singletons(t, nb + S + d, D - d)

        t1 = {k: pad(v) for k, v in w.tangents.items()}
        t2 = None if w.tangents2 is None else {k: pad(v) for k, v in w.tangents2.items()}
        out.append(Dual(p, t1, t2))
    return out, S


def _lined_up(a: TensorWrapper, b: TensorWrapper) -> bool:
    """Do two operands need no alignment: eager, the same sub-batch rank, dtype and batch
    shape? Then neither needs padding (their tangents have ``K`` + the same number of
    axes as well), no dtype is promoted, and they broadcast."""
    da, db = a.data, b.data
    if a.sub_batch_ndim != b.sub_batch_ndim or da.dtype is not db.dtype or _tracing():
        return False
    na = da.dim() - a._base_ndim
    return na == db.dim() - b._base_ndim and da.shape[:na] == db.shape[:na]


def _as_dual(w: TensorWrapper) -> Dual:
    """``w`` as :func:`align` hands an operand that needs no padding to the arithmetic."""
    return Dual(w.data) if w.tangents is None else Dual(w.data, w.tangents, w.tangents2)


def _quick_check(ws, op: str) -> None:
    """Cheap path of :func:`check_broadcastable` for operands with equal sub-batch ndim."""
    if _tracing():
        # comparing symbolic batch sizes adds guards (e.g. batch != 12 against a per-slip
        # axis) that torch.export rejects; torch checks the broadcast itself when tracing
        return
    ref = None
    for w in ws:
        d = w.data
        b = d.shape[: d.dim() - w._base_ndim]
        if not b:
            continue
        if ref is None:
            ref = b
        elif b != ref:
            check_broadcastable(ws, op)
            return


def _promote(ws):
    """Cast floating operands to their promoted dtype (matmul/einsum do not promote)."""
    dt = ws[0].data.dtype
    if all(w.data.dtype == dt for w in ws[1:]):
        return ws
    fl = [w.data.dtype for w in ws if w.data.is_floating_point()]
    if len(set(fl)) <= 1:
        return ws
    target = fl[0]
    for d in fl[1:]:
        target = torch.promote_types(target, d)
    return tuple(w.to(target) if w.data.is_floating_point() else w for w in ws)


def pad_tangents_to(w: TensorWrapper, dyn_ndim: int) -> TensorWrapper:
    """Return ``w`` with its tangents padded so its dynamic region spans ``dyn_ndim`` axes."""
    d = w.dynamic_ndim
    if w.tangents is None or d >= dyn_ndim:
        return w
    right = w.base_ndim + w.sub_batch_ndim + d
    t1 = {k: insert_singletons(v, right, dyn_ndim - d) for k, v in w.tangents.items()}
    t2 = None
    if w.tangents2 is not None:
        t2 = {k: insert_singletons(v, right, dyn_ndim - d) for k, v in w.tangents2.items()}
    p = insert_singletons(w.data, right, dyn_ndim - d)
    return w._new(p, w.sub_batch_ndim, t1, t2)
