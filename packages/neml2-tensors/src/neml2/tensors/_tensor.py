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
        """Wrap *data* as a Tensor with *base_ndim* trailing base axes.

        Args:
            data (Any): A tensor, array, nested list or number; or a typed value, whose
                tangents are kept (and whose base and sub-batch ranks are the defaults).
            base_ndim: The number of trailing base axes; default 0 (or *data*'s).
            sub_batch_ndim: The number of sub-batch axes before the base; default 0 (or
                *data*'s).
            dtype: Convert to this dtype; default: keep *data*'s.
            device: Move to this device; default: keep *data*'s.

        Raises:
            ShapeError: If *base_ndim* is negative or exceeds *data*'s rank.
        """
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
        """The base shape of this value (a tuple of ints; data, not a class constant)."""
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
        """Zeros of shape ``(*batch_shape, *base_shape)``.

        Args:
            batch_shape (Sequence[int]): The batch shape ``(*B, *sub)``.
            base_shape (Sequence[int]): The base shape.
            sub_batch_ndim (int): How many trailing axes of *batch_shape* are sub-batch.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (Tensor): With ``base_ndim = len(base_shape)``; no tangents.
        """
        dtype = dtype or torch.get_default_dtype()
        shape = tuple(batch_shape) + tuple(base_shape)
        return cls(torch.zeros(shape, dtype=dtype, device=device), len(base_shape), sub_batch_ndim)

    @classmethod
    def ones(cls, batch_shape=(), base_shape=(), sub_batch_ndim=0, *, dtype=None, device=None):
        """Ones of shape ``(*batch_shape, *base_shape)``.

        Args:
            batch_shape (Sequence[int]): The batch shape ``(*B, *sub)``.
            base_shape (Sequence[int]): The base shape.
            sub_batch_ndim (int): How many trailing axes of *batch_shape* are sub-batch.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (Tensor): With ``base_ndim = len(base_shape)``; no tangents.
        """
        dtype = dtype or torch.get_default_dtype()
        shape = tuple(batch_shape) + tuple(base_shape)
        return cls(torch.ones(shape, dtype=dtype, device=device), len(base_shape), sub_batch_ndim)

    @classmethod
    def identity(cls, n: int, *, dtype=None, device=None):
        """The ``n x n`` identity.

        Args:
            n: The size.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (Tensor): Unbatched, base ``(n, n)``; no tangents.
        """
        dtype = dtype or torch.get_default_dtype()
        return cls(torch.eye(n, dtype=dtype, device=device), 2)

    def transpose(self, d0: int = -2, d1: int = -1):
        """Swap two base axes.

        Args:
            d0: The first base axis, base-relative and negative (from the end of the base).
            d1: The second base axis, likewise.

        Returns:
            (Tensor): At ``(*B, *sub, *base)`` with the two axes swapped; tangents follow.

        Raises:
            ShapeError: If an axis is not a base axis (not in ``-base_ndim..-1``).
        """
        nb = self.base_ndim
        for d in (d0, d1):
            if not -nb <= d < 0:
                raise ShapeError(f"Tensor.transpose: base axis {d} out of range for base {nb}")
        return self._lin(lambda x: x.transpose(d0, d1))

    def matmul(self, other):
        """Contract with another typed value (the ``@`` operator).

        ``Tensor @ Tensor`` contracts the last base axis of the left with the first base axis
        of the right; other pairs use the registered matmul rules.

        Args:
            other (TensorWrapper): The right factor, broadcast against this one.

        Returns:
            (TensorWrapper): For two Tensors, a Tensor of base ``(*a_base[:-1], *b_base[1:])``
                at the broadcast batch shape; tangents follow.

        Raises:
            ShapeError: If the contracted axes differ in size or a base is a scalar.
        """
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
