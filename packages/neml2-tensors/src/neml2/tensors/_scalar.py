"""``Scalar``: base shape ``()``."""

from __future__ import annotations

from neml2.tensors._base import TensorWrapper
from neml2.tensors._factories import FactoryMixin


class Scalar(TensorWrapper, FactoryMixin):
    """A scalar per batch entry. Storage ``(*dynamic, *sub_batch)``.

    ``Scalar(1500.0)``, ``Scalar([1.0, 4.0])`` (one dynamic axis),
    ``Scalar(t, sub_batch_ndim=1)``. Elementwise arithmetic and math functions
    (``sqrt``, ``exp``, ``pow``, ``macaulay``, ...) are defined; ``Scalar * X`` scales any
    typed ``X``.
    """

    BASE_SHAPE = ()
    _base_ndim = 0
    _is_scalar = True
    _elementwise = True

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The multiplicative identity ``1``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (Scalar): The unbatched value, shape ``()``; no tangents.
        """
        return cls.ones(dtype=dtype, device=device)

    def item(self) -> float:
        """The value of a one-element Scalar as a Python float.

        Returns:
            The value (tangents are dropped).
        """
        return self.data.item()

    def __float__(self) -> float:
        return float(self.data)
