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
        shape = tuple(batch_shape) if not isinstance(batch_shape, int) else (batch_shape,)
        data = torch.full((*shape, 3), int(value), dtype=torch.int64, device=device)
        return cls(data, sub_batch_ndim)

    def to_vec(self, dtype: torch.dtype | None = None):
        """The indices as a floating ``Vec`` (not normalised)."""
        from neml2.tensors._vec import Vec

        return Vec(self.data.to(dtype or torch.get_default_dtype()), self.sub_batch_ndim)

    def normalized(self, dtype: torch.dtype | None = None):
        """Unit ``Vec`` along the indices."""
        v = self.to_vec(dtype)
        return v / v.norm()
