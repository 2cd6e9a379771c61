"""``Tensor``: dynamic base shape (Jacobian blocks ``(*batch; *out_base, *in_base)``)."""

from __future__ import annotations

from typing import Any

import torch

from neml2.tensors._base import TensorWrapper, as_tensor, register_matmul
from neml2.tensors._errors import ShapeError


class Tensor(TensorWrapper):
    """A typed tensor whose base rank is data: ``Tensor(data, base_ndim, sub_batch_ndim)``.

    Storage ``(*dynamic, *sub_batch, *base)`` with ``base_ndim`` trailing base axes.
    Elementwise arithmetic between Tensors of equal base shape; ``Tensor @ Tensor``
    contracts the last base axis of the left with the first base axis of the right.
    """

    _is_dynamic_base = True
    _elementwise = True

    def __init__(
        self,
        data: Any,
        base_ndim: int | None = None,
        sub_batch_ndim: int | None = None,
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ):
        if isinstance(data, TensorWrapper):
            t = data.data if dtype is None and device is None else data.data.to(dtype, device)
            nb = data.base_ndim if base_ndim is None else base_ndim
            self._base_ndim = nb
            self._set(t, data.sub_batch_ndim if sub_batch_ndim is None else sub_batch_ndim)
            self.tangents, self.tangents2 = data.tangents, data.tangents2
            return
        t = as_tensor(data, dtype, device)
        nb = 0 if base_ndim is None else base_ndim
        if not 0 <= nb <= t.dim():
            raise ShapeError(f"Tensor: base_ndim={nb} out of range for shape {tuple(t.shape)}")
        self._base_ndim = nb
        self._set(t, 0 if sub_batch_ndim is None else sub_batch_ndim)

    @property
    def BASE_SHAPE(self):
        return tuple(self.base_shape)

    @classmethod
    def _make(cls, data, sub, t1=None, t2=None, base_ndim=None):
        obj = cls.__new__(cls)
        obj.data = data
        obj.sub_batch_ndim = sub
        obj.tangents = t1
        obj.tangents2 = t2
        obj._base_ndim = 0 if base_ndim is None else base_ndim
        return obj

    @classmethod
    def zeros(cls, batch_shape=(), base_shape=(), sub_batch_ndim=0, *, dtype=None, device=None):
        """Zeros of shape ``(*batch_shape, *base_shape)``."""
        dtype = dtype or torch.get_default_dtype()
        shape = tuple(batch_shape) + tuple(base_shape)
        return cls(torch.zeros(shape, dtype=dtype, device=device), len(base_shape), sub_batch_ndim)

    @classmethod
    def ones(cls, batch_shape=(), base_shape=(), sub_batch_ndim=0, *, dtype=None, device=None):
        """Ones of shape ``(*batch_shape, *base_shape)``."""
        dtype = dtype or torch.get_default_dtype()
        shape = tuple(batch_shape) + tuple(base_shape)
        return cls(torch.ones(shape, dtype=dtype, device=device), len(base_shape), sub_batch_ndim)

    @classmethod
    def identity(cls, n: int, *, dtype=None, device=None):
        """``n x n`` identity, base ``(n, n)``."""
        dtype = dtype or torch.get_default_dtype()
        return cls(torch.eye(n, dtype=dtype, device=device), 2)

    def transpose(self, d0: int = -2, d1: int = -1):
        """Swap two base axes (base-relative, negative from the end)."""
        nb = self.base_ndim
        for d in (d0, d1):
            if not -nb <= d < 0:
                raise ShapeError(f"Tensor.transpose: base axis {d} out of range for base {nb}")
        return self._lin(lambda x: x.transpose(d0, d1))

    def matmul(self, other):
        if not isinstance(other, Tensor):
            return super().matmul(other)
        from neml2.tensors._broadcast import align

        na, nb = self.base_ndim, other.base_ndim
        if na < 1 or nb < 1 or self.base_shape[-1] != other.base_shape[0]:
            raise ShapeError(
                f"Tensor @ Tensor: cannot contract base {tuple(self.base_shape)} with "
                f"{tuple(other.base_shape)}"
            )
        (a, b), S = align((self, other), "@")

        def fn(x, y):
            y2 = y.flatten(-nb + 1) if nb > 1 else y.unsqueeze(-1)
            x2 = x.flatten(-na, -2) if na > 1 else x.unsqueeze(-2)
            r = x2 @ y2
            out_shape = tuple(x.shape[x.dim() - na : -1]) + tuple(y.shape[y.dim() - nb + 1 :])
            return r.reshape(*r.shape[:-2], *out_shape)

        return Tensor._from_dual(a.bilin(b, fn), S, na + nb - 2)


del register_matmul
