"""Region views: ``x.batch``, ``x.dynamic_batch``, ``x.sub_batch``, ``x.base``.

A view names one region of a typed value's storage ``(*dynamic, *sub_batch, *base)``;
its methods act on that region only, with region-relative dims, and return a new typed
value whose ``sub_batch_ndim`` is kept right. Tangents follow (they are the same linear
maps, applied after the leading seed axes).

>>> SR2.fill(0.1, -0.05, -0.05, 0, 0, 0).dynamic_batch.expand(20).shape
torch.Size([20, 6])
>>> Scalar([1.0, 4.0, 9.0]).sub_batch.retag(1).sub_batch_ndim
1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from neml2.tensors._errors import ShapeError

if TYPE_CHECKING:
    from neml2.tensors._base import TensorWrapper

_NAMES = {"batch": "batch", "dynamic": "dynamic batch", "sub": "sub-batch", "base": "base"}


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], tuple | list | torch.Size):
        return tuple(shape[0])
    return tuple(shape)


def expand_full(t: torch.Tensor, lead: int, shape) -> torch.Tensor:
    """Expand a tangent with ``lead`` seed axes to the full primal ``shape``."""
    return t.expand(*t.shape[:lead], *shape)


class RegionView:
    """One region of a typed value (see module docstring)."""

    __slots__ = ("kind", "value")

    def __init__(self, value: TensorWrapper, kind: str):
        """View one region of *value*.

        Args:
            value: The typed value.
            kind: ``"batch"``, ``"dynamic"``, ``"sub"`` or ``"base"``.
        """
        self.value = value
        self.kind = kind

    # ---------------------------------------------------------------- geometry
    def _span(self) -> tuple[int, int]:
        w = self.value
        d, s = w.dynamic_ndim, w.sub_batch_ndim
        return {
            "batch": (0, d + s),
            "dynamic": (0, d),
            "sub": (d, s),
            "base": (d + s, w.base_ndim),
        }[self.kind]

    @property
    def ndim(self) -> int:
        """The number of axes in this region (int)."""
        return self._span()[1]

    @property
    def shape(self) -> torch.Size:
        """The sizes of this region's axes (torch.Size)."""
        start, n = self._span()
        return self.value.data.shape[start : start + n]

    def size(self, i: int | None = None):
        """The region's shape, or the size of one of its axes.

        Args:
            i: A region-relative axis; ``None`` for the whole shape.

        Returns:
            (torch.Size | int): The shape, or the axis size.
        """
        return self.shape if i is None else self.shape[i]

    def __len__(self) -> int:
        return self.ndim

    def __repr__(self) -> str:
        return f"<{_NAMES[self.kind]} region {tuple(self.shape)} of {type(self.value).__name__}>"

    def _err(self, msg: str) -> ShapeError:
        from neml2.tensors._broadcast import describe

        return ShapeError(f"{_NAMES[self.kind]} region of {describe(self.value)}: {msg}")

    def _apply(
        self,
        fn: Callable[[torch.Tensor, int], torch.Tensor],
        sub_delta: int = 0,
        base_delta: int = 0,
        full: bool = False,
    ):
        """Apply ``fn(t, lead)`` to the primal (lead 0) and tangents (lead 1 / 2)."""
        w = self.value
        shape = w.data.shape
        p = fn(w.data, 0)
        t1 = t2 = None
        if w.tangents is not None:
            t1 = {k: fn(expand_full(v, 1, shape) if full else v, 1) for k, v in w.tangents.items()}
        if w.tangents2 is not None:
            t2 = {k: fn(expand_full(v, 2, shape) if full else v, 2) for k, v in w.tangents2.items()}
        return type(w)._make(p, w.sub_batch_ndim + sub_delta, t1, t2, w.base_ndim + base_delta)

    def _check_base_change(self, new_ndim: int, same_shape: bool = False) -> None:
        if self.kind == "base" and not self.value._is_dynamic_base and not same_shape:
            raise self._err(
                f"the base of {type(self.value).__name__} is fixed to "
                f"{type(self.value).BASE_SHAPE}; use Tensor for a dynamic base"
            )

    def _sub_delta_for_new_dims(self, count: int) -> tuple[int, int]:
        """(sub_delta, base_delta) when ``count`` axes are added to this region."""
        if self.kind == "sub":
            return count, 0
        if self.kind == "base":
            return 0, count
        return 0, 0

    # ---------------------------------------------------------------- shape ops
    def expand(self, *shape):
        """Expand this region to *shape* (torch semantics: new axes on the left, -1 keeps).

        Args:
            *shape (int): The target sizes of the region, as integers or one sequence.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If *shape* is shorter than the region, a size cannot be expanded, or
                the base of a fixed-base type would change.
        """
        shape = _shape_args(shape)
        start, n = self._span()
        m = len(shape)
        if m < n:
            raise self._err(f"cannot expand {n} axes to the shorter shape {shape}")
        cur = tuple(self.shape)
        for i, (c, s) in enumerate(zip(cur, shape[m - n :], strict=True)):
            if s != -1 and c != 1 and c != s:
                raise self._err(f"cannot expand size {c} at axis {i} to {s} (target {shape})")
        self._check_base_change(
            m, same_shape=(m == n and all(s in (-1, c) for s, c in zip(shape, cur, strict=True)))
        )
        extra = m - n
        rest = self.value.data.dim() - start - n

        def fn(t, lead):
            for _ in range(extra):
                t = t.unsqueeze(lead + start)
            return t.expand(*([-1] * (lead + start)), *shape, *([-1] * rest))

        sd, bd = self._sub_delta_for_new_dims(extra)
        return self._apply(fn, sd, bd)

    def unsqueeze(self, dim: int):
        """Insert a singleton axis at region-relative position ``dim``.

        Args:
            dim: The position, in ``-(ndim + 1)..ndim``.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If *dim* is out of range, or the base of a fixed-base type would
                change.
        """
        start, n = self._span()
        if not -(n + 1) <= dim <= n:
            raise self._err(f"unsqueeze dim {dim} out of range [{-(n + 1)}, {n}]")
        if dim < 0:
            dim += n + 1
        self._check_base_change(n + 1)
        sd, bd = self._sub_delta_for_new_dims(1)
        if self.kind == "batch" and dim > self.value.dynamic_ndim:
            sd = 1
        return self._apply(lambda t, lead: t.unsqueeze(lead + start + dim), sd, bd)

    def squeeze(self, dim: int):
        """Remove the singleton axis at region-relative position ``dim``.

        Args:
            dim: The position, in ``-ndim..ndim - 1``.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If *dim* is out of range or the axis is not of size 1, or the base of
                a fixed-base type would change.
        """
        start, n = self._span()
        if not -n <= dim < n:
            raise self._err(f"squeeze dim {dim} out of range for {n} axes")
        if dim < 0:
            dim += n
        if self.shape[dim] != 1:
            raise self._err(f"cannot squeeze axis {dim} of size {self.shape[dim]}")
        self._check_base_change(n - 1)
        sd, bd = self._sub_delta_for_new_dims(-1)
        if self.kind == "batch" and dim >= self.value.dynamic_ndim:
            sd = -1
        return self._apply(lambda t, lead: t.squeeze(lead + start + dim), sd, bd)

    def movedim(self, source: int, destination: int):
        """Move this region's axis ``source`` to position ``destination`` (region-relative).

        Only within a region: a sub-batch axis stays a sub-batch axis.

        Args:
            source: The axis to move.
            destination: Its new position.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If an axis is out of range.
        """
        start, n = self._span()
        for name, i in (("source", source), ("destination", destination)):
            if not -n <= i < n:
                raise self._err(f"movedim {name} {i} out of range for {n} axes")
        s, d = source % n, destination % n
        if s == d:
            return self.value
        return self._apply(lambda t, lead: t.movedim(lead + start + s, lead + start + d))

    def retag(self, n: int):
        """Re-declare how many axes this region has; the data is untouched.

        ``sub_batch.retag(n)``: the last ``n`` batch axes are sub-batch.
        ``dynamic_batch.retag(n)``: the first ``n`` batch axes are dynamic, the rest sub-batch.
        ``base.retag(n)`` / ``batch.retag(n)``: only for the dynamic-base ``Tensor``.

        Args:
            n: The new number of axes of the region.

        Returns:
            (TensorWrapper): The same data with the new split; tangents kept.

        Raises:
            ShapeError: If *n* is out of range, or the base of a fixed-base type would
                change.
        """
        w = self.value
        b = w.batch_ndim
        if self.kind in ("sub", "dynamic"):
            if not 0 <= n <= b:
                raise self._err(f"cannot retag to {n} axes: only {b} batch axes")
            sub = n if self.kind == "sub" else b - n
            return type(w)._make(w.data, sub, w.tangents, w.tangents2, w.base_ndim)
        nd = w.data.dim()
        base = n if self.kind == "base" else nd - n
        if base == w.base_ndim:
            return w
        if not w._is_dynamic_base:
            raise self._err(f"the base of {type(w).__name__} is fixed to {type(w).BASE_SHAPE}")
        if not 0 <= base <= nd or nd - base < w.sub_batch_ndim:
            raise self._err(f"cannot retag to {n} axes")
        return type(w)._make(w.data, w.sub_batch_ndim, w.tangents, w.tangents2, base)

    def reshape(self, *shape):
        """Reshape this region (dynamic or sub-batch).

        Args:
            *shape (int): The new sizes of the region, as integers or one sequence.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If the sizes do not fit, or the region is ``batch`` (reshape the
                dynamic_batch or sub_batch region instead) or a fixed base.
        """
        shape = _shape_args(shape)
        start, n = self._span()
        if self.kind == "base":
            self._check_base_change(len(shape))
        head = self.value.data.shape[:start]
        tail = self.value.data.shape[start + n :]
        new_n = len(shape)

        def fn(t, lead):
            return t.reshape(*t.shape[:lead], *head, *shape, *tail)

        sd, bd = self._sub_delta_for_new_dims(new_n - n)
        if self.kind == "batch":
            raise self._err("reshape the dynamic_batch or sub_batch region instead")
        return self._apply(fn, sd, bd, full=True)

    def __getitem__(self, idx):
        """Basic indexing (ints, slices, None) of this region's axes.

        Args:
            idx (int | slice | None | tuple): The index, region-relative.

        Returns:
            (TensorWrapper): A new value of the same type, ``sub_batch_ndim`` kept right;
                tangents follow.

        Raises:
            ShapeError: If an index is not an int, slice or None, there are too many, or the
                base of a fixed-base type would change.
        """
        if not isinstance(idx, tuple):
            idx = (idx,)
        start, n = self._span()
        d = self.value.dynamic_ndim
        pos = 0
        sd = bd = 0
        for i in idx:
            if i is None:
                if self.kind == "sub" or (self.kind == "batch" and pos > d):
                    sd += 1
                elif self.kind == "base":
                    bd += 1
                continue
            if i is Ellipsis or not isinstance(i, int | slice):
                raise self._err(f"only ints, slices and None can index a region, got {i!r}")
            if isinstance(i, int):
                if self.kind == "sub" or (self.kind == "batch" and pos >= d):
                    sd -= 1
                elif self.kind == "base":
                    bd -= 1
            pos += 1
        if pos > n:
            raise self._err(f"too many indices ({pos}) for {n} axes")
        if bd:
            self._check_base_change(n + bd)

        def fn(t, lead):
            return t[(slice(None),) * (lead + start) + idx]

        return self._apply(fn, sd, bd, full=True)

    # ---------------------------------------------------------------- reductions
    def _dims(self, dim) -> list[int]:
        n = self.ndim
        if dim is None:
            dims = list(range(n))
        else:
            dims = [dim] if isinstance(dim, int) else list(dim)
            for i, x in enumerate(dims):
                if not -n <= x < n:
                    raise self._err(f"dim {x} out of range for {n} axes")
                dims[i] = x + n if x < 0 else x
        return sorted(set(dims))

    def _reduce(self, dim, red):
        start, _ = self._span()
        dims = self._dims(dim)
        if self.kind == "base":
            self._check_base_change(0)
        d = self.value.dynamic_ndim
        sd = bd = 0
        for x in dims:
            if self.kind == "sub" or (self.kind == "batch" and x >= d):
                sd -= 1
            elif self.kind == "base":
                bd -= 1

        def fn(t, lead):
            if not dims:
                return t
            return red(t, [lead + start + x for x in dims])

        return self._apply(fn, sd, bd, full=True)

    def sum(self, dim=None):
        """Sum over region axes.

        Args:
            dim (int | Sequence[int] | None): Region-relative axes; ``None`` for all of them.

        Returns:
            (TensorWrapper): The same type without those axes; tangents follow (linear).
        """
        return self._reduce(dim, lambda t, ds: t.sum(ds))

    def mean(self, dim=None):
        """Mean over region axes.

        Args:
            dim (int | Sequence[int] | None): Region-relative axes; ``None`` for all of them.

        Returns:
            (TensorWrapper): The same type without those axes; tangents follow (linear).
        """
        return self._reduce(dim, lambda t, ds: t.mean(ds))
