"""Factories: ``zeros/ones/full/identity`` (class methods), ``fill``-style base stacking,
``linspace/logspace``, ``stack/cat``.

Shapes: ``Type.zeros(batch_shape, sub_batch_ndim=0)`` gives ``(*batch_shape, *base)``
where the last ``sub_batch_ndim`` axes of ``batch_shape`` are sub-batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from neml2.tensors._base import TensorWrapper, as_tensor
from neml2.tensors._broadcast import _region_broadcast, align
from neml2.tensors._errors import ShapeError
from neml2.tensors._regions import RegionView, expand_full
from neml2.tensors._tangents import Dual


def _opts(dtype, device, like: TensorWrapper | None = None):
    if like is not None:
        dtype = dtype or like.dtype
        device = device or like.device
    return dtype or torch.get_default_dtype(), device


#: an argument that was not passed
_UNSET: Any = object()


def _shape(batch_shape) -> tuple[int, ...]:
    if isinstance(batch_shape, int):
        return (batch_shape,)
    return tuple(batch_shape)


class FactoryMixin:
    """Class-method factories shared by every fixed-base typed tensor."""

    BASE_SHAPE: tuple[int, ...]

    @classmethod
    def full(
        cls,
        value: Any = _UNSET,
        batch_shape: Any = _UNSET,
        sub_batch_ndim: Any = _UNSET,
        *sizes: int,
        fill_value: float | None = None,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ):
        """Every component equal to ``value``, shape ``(*batch_shape, *base)``.

        Called as ``full(value, batch_shape=(), sub_batch_ndim=0)``. The reference library's
        spelling with the batch sizes positional, ``full(*batch, fill_value=value)``
        (``Scalar.full(200, fill_value=0.01)``), is accepted too.

        Args:
            value: The value of every component (or, with *fill_value*, the first batch size).
            batch_shape: The batch shape ``(*B, *sub)`` (int or sequence); default ``()``.
            sub_batch_ndim: How many trailing axes of *batch_shape* are sub-batch; default 0.
            *sizes: Further batch sizes, with *fill_value* only.
            fill_value: The value, in the reference library's spelling.
            dtype: The dtype; default: torch's default dtype.
            device: The device; default: torch's default device.

        Returns:
            (TensorWrapper): This type at ``(*batch_shape, *base)``; no tangents.

        Raises:
            TypeError: If the arguments match neither form.
        """
        given = [a for a in (value, batch_shape, sub_batch_ndim) if a is not _UNSET]
        if fill_value is not None:
            batch = (*given, *sizes)
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in batch):
                raise TypeError(
                    f"{cls.__name__}.full(*batch, fill_value=...) takes integer batch sizes, "
                    f"got {batch}"
                )
            value, batch_shape, sub_batch_ndim = fill_value, batch, 0
        else:
            if value is _UNSET or sizes:
                raise TypeError(
                    f"{cls.__name__}.full takes (value, batch_shape=(), sub_batch_ndim=0) "
                    "or (*batch, fill_value=value)"
                )
            batch_shape = () if batch_shape is _UNSET else batch_shape
            sub_batch_ndim = 0 if sub_batch_ndim is _UNSET else sub_batch_ndim
        dtype, device = _opts(dtype, device)
        shape = _shape(batch_shape) + tuple(cls.BASE_SHAPE)
        return cls(torch.full(shape, value, dtype=dtype, device=device), sub_batch_ndim)

    @classmethod
    def zeros(cls, batch_shape=(), sub_batch_ndim: int = 0, *, dtype=None, device=None):
        """All-zero value of shape ``(*batch_shape, *base)``.

        Args:
            batch_shape (int | Sequence[int]): The batch shape ``(*B, *sub)``.
            sub_batch_ndim: How many trailing axes of *batch_shape* are sub-batch.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (TensorWrapper): This type; no tangents.
        """
        return cls.full(0.0, batch_shape, sub_batch_ndim, dtype=dtype, device=device)

    @classmethod
    def ones(cls, batch_shape=(), sub_batch_ndim: int = 0, *, dtype=None, device=None):
        """All-one value of shape ``(*batch_shape, *base)``.

        Args:
            batch_shape (int | Sequence[int]): The batch shape ``(*B, *sub)``.
            sub_batch_ndim: How many trailing axes of *batch_shape* are sub-batch.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (TensorWrapper): This type; no tangents.
        """
        return cls.full(1.0, batch_shape, sub_batch_ndim, dtype=dtype, device=device)

    @classmethod
    def zeros_like(cls, other: TensorWrapper):
        """Zeros of ``other``'s batch shape, dtype and device (no tangents).

        Args:
            other: The value whose batch shape, sub-batch rank, dtype and device are used.

        Returns:
            (TensorWrapper): This type at ``(*other.batch_shape, *base)``.
        """
        shape = tuple(other.batch_shape) + tuple(cls.BASE_SHAPE)
        z = torch.zeros(shape, dtype=other.dtype, device=other.device)
        return cls(z, other.sub_batch_ndim)

    @classmethod
    def ones_like(cls, other: TensorWrapper):
        """Ones of ``other``'s batch shape, dtype and device (no tangents).

        Args:
            other: The value whose batch shape, sub-batch rank, dtype and device are used.

        Returns:
            (TensorWrapper): This type at ``(*other.batch_shape, *base)``.
        """
        shape = tuple(other.batch_shape) + tuple(cls.BASE_SHAPE)
        return cls(torch.ones(shape, dtype=other.dtype, device=other.device), other.sub_batch_ndim)

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity element of the type (unbatched).

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (TensorWrapper): The identity, shape ``(*base)``.

        Raises:
            TypeError: If the type has no identity (types that have one override this).
        """
        raise TypeError(f"{cls.__name__} has no identity")


def constant(cls, values, *, dtype=None, device=None, like: TensorWrapper | None = None):
    """An unbatched constant of type ``cls`` from nested lists.

    Args:
        cls (type): The typed-tensor class.
        values (Any): Nested lists or numbers of the base shape.
        dtype (torch.dtype | None): The dtype; default: *like*'s, else torch's default.
        device (torch.device | str | None): The device; default: *like*'s, else torch's
            default.
        like: A value whose dtype and device are the defaults.

    Returns:
        (TensorWrapper): A *cls* of shape ``(*base)``; no tangents.
    """
    dtype, device = _opts(dtype, device, like)
    return cls(torch.tensor(values, dtype=dtype, device=device))


def base_stack(cls, comps: Sequence[Any], base_shape: tuple[int, ...] | None = None, **opts):
    """Stack Scalars (or numbers) into the base of ``cls`` (tangents follow).

    Numbers are broadcast; missing tangents of some components become zeros.

    Args:
        cls (type): The typed-tensor class.
        comps: The components in storage order, Scalars (``(*B, *sub)``) or numbers.
        base_shape: The base shape to unflatten the stacked axis into (e.g. ``(3, 3)``);
            default: one axis of ``len(comps)``.
        **opts (Any): ``dtype`` and ``device`` for the numbers (default: those of a typed
            component, else torch's defaults).

    Returns:
        (TensorWrapper): A *cls* at the components' broadcast ``(*B, *sub, *base)``.

    Raises:
        TypeError: If a component is neither a Scalar nor a number.
    """
    from neml2.tensors._scalar import Scalar

    like = next((c for c in comps if isinstance(c, TensorWrapper)), None)
    dtype, device = _opts(opts.get("dtype"), opts.get("device"), like)
    ws = [
        c if isinstance(c, TensorWrapper) else Scalar(as_tensor(c, dtype=dtype, device=device))
        for c in comps
    ]
    for c in ws:
        if not c._is_scalar:
            raise TypeError(f"{cls.__name__}.fill takes Scalars or numbers, got {type(c).__name__}")
    duals, S = align(tuple(ws), f"{cls.__name__}.fill")
    out = _stack_duals(duals, -1)
    if base_shape is not None and len(base_shape) > 1:
        out = out.lin(lambda x: x.unflatten(-1, base_shape))
    return cls._from_dual(out, S)


def _stack_duals(duals: list[Dual], dim: int) -> Dual:
    """Stack/cat aligned duals (``dim`` < 0: from the right; else after ``lead`` seed axes)."""
    ps = torch.broadcast_tensors(*[d.p for d in duals])
    shape = ps[0].shape
    op = torch.stack

    def at(lead):
        return dim if dim < 0 else lead + dim

    p = op(list(ps), at(0))
    keys1 = {k: v for d in duals for k, v in (d.t1 or {}).items()}
    if not keys1 and all(d.t2 is None for d in duals):
        return Dual(p)

    def gather(lead, get, key, ref):
        parts = []
        for d in duals:
            t = get(d).get(key) if get(d) else None
            if t is None:
                t = torch.zeros((), dtype=ref.dtype, device=ref.device)
            parts.append(t)
        seed = ref.shape[:lead]
        return op([t.expand(*seed, *shape) for t in parts], at(lead))

    t1 = {k: gather(1, lambda d: d.t1, k, v) for k, v in keys1.items()}
    t2 = None
    if any(d.t2 is not None for d in duals):
        keys2 = {k: v for d in duals for k, v in (d.t2 or {}).items()}
        t2 = {k: gather(2, lambda d: d.t2, k, v) for k, v in keys2.items()}
    return Dual(p, t1, t2)


def stack(values: Sequence[TensorWrapper], dim: int = 0) -> TensorWrapper:
    """Stack same-typed values along a new *dynamic* batch axis ``dim`` (0 = leading).

    Args:
        values: The values, of one type; broadcast against each other.
        dim: The position of the new axis among the dynamic axes, ``0..D`` with ``D`` the
            largest dynamic rank.

    Returns:
        The stacked value at ``(*B[:dim], n, *B[dim:], *sub, *base)``; tangents follow.

    Raises:
        TypeError: If the values are of mixed types.
        ShapeError: If *dim* is out of range.
    """
    values = list(values)
    cls = type(values[0])
    for v in values:
        if type(v) is not cls:
            raise TypeError(f"stack: mixed types {cls.__name__} and {type(v).__name__}")
    duals, S = align(tuple(values), "stack")
    D = max(v.dynamic_ndim for v in values)
    if not 0 <= dim <= D:
        raise ShapeError(f"stack: dim {dim} out of range for {D} dynamic axes")
    out = _stack_duals(duals, dim)
    return cls._from_dual(out, S, values[0].base_ndim)


def cat(values: Sequence[TensorWrapper], dim: int = 0) -> TensorWrapper:
    """Concatenate same-typed values along the existing dynamic batch axis ``dim``.

    Args:
        values: The values, of one type; the other axes are broadcast.
        dim: The dynamic axis, ``0..D - 1``.

    Returns:
        The concatenated value; tangents follow (zeros where a value had none).

    Raises:
        TypeError: If the values are of mixed types.
        ShapeError: If *dim* is out of range or the shapes do not fit.
    """
    values = list(values)
    cls = type(values[0])
    for v in values:
        if type(v) is not cls:
            raise TypeError(f"cat: mixed types {cls.__name__} and {type(v).__name__}")
    D = max(v.dynamic_ndim for v in values)
    if not 0 <= dim < D:
        raise ShapeError(f"cat: dim {dim} out of range for {D} dynamic axes")
    duals, S = align(tuple(values), "cat")
    n = max(d.p.dim() for d in duals)
    ps = []
    for d in duals:
        p = d.p
        while p.dim() < n:
            p = p.unsqueeze(0)
        ps.append(p)
    shapes = [(*p.shape[:dim], 1, *p.shape[dim + 1 :]) for p in ps]
    merged = _region_broadcast(shapes)
    if merged is None:
        raise ShapeError(f"cannot concatenate values of shapes {[tuple(p.shape) for p in ps]}")
    common = list(merged)
    outs = []
    for d, p in zip(duals, ps, strict=True):
        tgt = list(common)
        tgt[dim] = p.shape[dim]
        outs.append(_expand_dual(Dual(p, d.t1, d.t2), tuple(tgt)))
    out = _cat_duals(outs, dim)
    return cls._from_dual(out, S, values[0].base_ndim)


def _expand_dual(d: Dual, shape) -> Dual:
    p = d.p.expand(*shape)
    t1 = None if d.t1 is None else {k: expand_full(v, 1, shape) for k, v in d.t1.items()}
    t2 = None if d.t2 is None else {k: expand_full(v, 2, shape) for k, v in d.t2.items()}
    return Dual(p, t1, t2)


def _cat_duals(duals: list[Dual], dim: int) -> Dual:
    p = torch.cat([d.p for d in duals], dim)
    if all(d.t1 is None for d in duals):
        return Dual(p)

    def gather(lead, get, key):
        ref = next(get(e)[key] for e in duals if get(e) and key in get(e))
        parts = []
        for d in duals:
            t = (get(d) or {}).get(key)
            if t is None:
                t = torch.zeros(*ref.shape[:lead], *d.p.shape, dtype=ref.dtype, device=ref.device)
            parts.append(t)
        return torch.cat(parts, lead + dim)

    t1 = {k: gather(1, lambda d: d.t1, k) for d in duals for k in (d.t1 or {})}
    t2 = None
    if any(d.t2 is not None for d in duals):
        t2 = {k: gather(2, lambda d: d.t2, k) for d in duals for k in (d.t2 or {})}
    return Dual(p, t1, t2)


def linspace(start, end, steps: int) -> TensorWrapper:
    """``start + (end - start) * i / (steps - 1)`` along a new batch axis.

    ``start``/``end`` are typed values or region views of them: with ``x.dynamic_batch``
    (or a plain value) the new axis leads the dynamic region, with ``x.sub_batch`` it leads
    the sub-batch region (``sub_batch_ndim`` grows by one).

    Args:
        start (TensorWrapper | RegionView | float): The first value.
        end (TensorWrapper | RegionView | float): The last value, broadcast against *start*.
        steps: The number of values.

    Returns:
        The values, of *start*'s type, at ``(steps, *B, *sub, *base)`` (dynamic) or
            ``(*B, steps, *sub, *base)`` (sub-batch); tangents of *start* and *end* follow.

    Raises:
        ShapeError: If the view is of the base region.
    """
    kind = "dynamic"
    if isinstance(start, RegionView):
        kind = start.kind
        start = start.value
    if isinstance(end, RegionView):
        end = end.value
    if kind not in ("dynamic", "sub", "batch"):
        raise ShapeError(f"linspace: cannot insert the new axis into the {kind} region")
    from neml2.tensors._scalar import Scalar

    if not isinstance(start, TensorWrapper):
        start = (
            Scalar(start)
            if not isinstance(end, TensorWrapper)
            else type(end).full(float(start), dtype=end.dtype)
        )
    if not isinstance(end, TensorWrapper):
        end = type(start).full(float(end), dtype=start.dtype, device=start.device)
    diff = end - start
    S = diff.sub_batch_ndim
    w = torch.linspace(0.0, 1.0, steps, dtype=diff.dtype, device=diff.device)
    if kind == "sub":
        base = start.sub_batch.unsqueeze(0)
        diff = diff.sub_batch.unsqueeze(0)
        w = Scalar(w.reshape(steps, *([1] * S)), S + 1)
    else:
        base = start.dynamic_batch.unsqueeze(0)
        diff = diff.dynamic_batch.unsqueeze(0)
        w = Scalar(w.reshape(steps, *([1] * (diff.batch_ndim - 1))), diff.sub_batch_ndim)
    return base + w * diff


def logspace(start, end, steps: int, base: float = 10.0) -> TensorWrapper:
    """``base ** linspace(start, end, steps)`` (Scalar).

    Args:
        start (Scalar | RegionView | float): The first exponent.
        end (Scalar | RegionView | float): The last exponent.
        steps: The number of values.
        base: The base of the powers.

    Returns:
        The Scalar values, shaped as :func:`linspace` shapes them; tangents follow.
    """
    return base ** linspace(start, end, steps)
