"""``MillerIndex``: integer crystallographic direction/plane indices, base ``(3,)``."""

from __future__ import annotations

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._factories import FactoryMixin


class MillerIndex(TensorWrapper, FactoryMixin):
    """Integer Miller indices. Storage ``(*batch, 3)`` of ``torch.int64``.

    Float input is rounded to the nearest integer (``MillerIndex(torch.tensor([1.0, 1.0,
    0.0]))``). No algebra: convert with :meth:`to_vec`.
    """

    BASE_SHAPE = (3,)
    _base_ndim = 1
    #: the storage dtype, fixed by the type (not the model's floating dtype)
    STORAGE_DTYPE = torch.int64

    @classmethod
    def _coerce(cls, t: torch.Tensor) -> torch.Tensor:
        if t.is_floating_point():
            t = torch.round(t)
        return t.to(torch.int64)

    @classmethod
    def full(cls, value, batch_shape=(), sub_batch_ndim=0, *, dtype=None, device=None):
        """Every index equal to ``int(value)``, shape ``(*batch_shape, 3)``.

        Args:
            value (int | float): The index value, truncated to an integer.
            batch_shape (int | Sequence[int]): The batch shape.
            sub_batch_ndim (int): How many trailing axes of *batch_shape* are sub-batch.
            dtype (torch.dtype | None): Ignored: the storage is always ``torch.int64``.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (MillerIndex): The indices.
        """
        shape = tuple(batch_shape) if not isinstance(batch_shape, int) else (batch_shape,)
        data = torch.full((*shape, 3), int(value), dtype=torch.int64, device=device)
        return cls(data, sub_batch_ndim)

    def to_vec(self, dtype: torch.dtype | None = None):
        """The indices as a floating ``Vec`` (not normalised).

        Args:
            dtype: The floating dtype; default: torch's default dtype.

        Returns:
            (Vec): At ``(*B, *sub, 3)``.
        """
        from neml2.tensors._vec import Vec

        return Vec(self.data.to(dtype or torch.get_default_dtype()), self.sub_batch_ndim)

    def normalized(self, dtype: torch.dtype | None = None):
        """The unit ``Vec`` along the indices.

        Args:
            dtype: The floating dtype; default: torch's default dtype.

        Returns:
            (Vec): At ``(*B, *sub, 3)``, of norm 1.
        """
        v = self.to_vec(dtype)
        return v / v.norm()
