"""``R2``: a full second-order tensor, base shape ``(3, 3)``."""

from __future__ import annotations

import torch

from neml2.tensors import _small_matmul as small
from neml2.tensors import _tangents as T
from neml2.tensors._base import TensorWrapper, register_matmul
from neml2.tensors._broadcast import _tracing, align
from neml2.tensors._factories import FactoryMixin, base_stack, constant
from neml2.tensors._mandel import full_to_mandel, full_to_skew
from neml2.tensors._tangents import Dual


def det3(a: Dual) -> Dual:
    """Determinant of ``(..., 3, 3)`` by cofactors (a polynomial: exact tangents)."""
    c = [[a.lin(lambda x, i=i, j=j: x[..., i, j]) for j in range(3)] for i in range(3)]
    return (
        c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1])
        - c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0])
        + c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0])
    )


class R2(TensorWrapper, FactoryMixin):
    """A full (not necessarily symmetric) second-order tensor. Storage ``(*batch, 3, 3)``."""

    BASE_SHAPE = (3, 3)
    _base_ndim = 2

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity ``I`` (3x3).

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (R2): The unbatched value, shape ``(3, 3)``; no tangents.
        """
        from neml2.tensors._factories import _opts

        dtype, device = _opts(dtype, device)
        return cls(torch.eye(3, dtype=dtype, device=device))

    @classmethod
    def fill(cls, *comps, **opts):
        """Build an R2 from components (numbers or Scalars).

        Args:
            *comps (float | Scalar): 1 value ``a``: ``a I``; 3 values: the diagonal; 9 values:
                the row-major components. Scalars are broadcast and their tangents follow.
            **opts (Any): ``dtype`` and ``device``, as for :meth:`SR2.fill`.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)`` with the components' common batch shape.

        Raises:
            TypeError: If the number of components is not 1, 3 or 9.
        """
        if len(comps) == 1:
            a = comps[0]
            comps = (a, 0.0, 0.0, 0.0, a, 0.0, 0.0, 0.0, a)
        elif len(comps) == 3:
            a, b, c = comps
            comps = (a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c)
        elif len(comps) != 9:
            raise TypeError(f"R2.fill takes 1, 3 or 9 components, got {len(comps)}")
        return base_stack(cls, list(comps), (3, 3), **opts)

    def __getitem__(self, ij):
        """Component ``(i, j)`` as a Scalar.

        Args:
            ij (tuple[int, int]): The row and column, each in 0..2.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        i, j = ij
        return self._lin(lambda x: x[..., i, j], Scalar)

    def tr(self):
        """Trace.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow (linear).
        """
        from neml2.tensors._scalar import Scalar

        return self._lin(lambda x: x.diagonal(dim1=-2, dim2=-1).sum(-1), Scalar)

    def vol(self):
        """Volumetric part ``tr/3 I``.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow (linear).
        """
        eye = constant(R2, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], like=self).data
        return self._lin(lambda x: x.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye / 3)

    def dev(self):
        """Deviatoric part ``A - vol(A)``.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow (linear).
        """
        eye = constant(R2, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], like=self).data
        return self._lin(
            lambda x: x - x.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye / 3
        )

    def transpose(self):
        """Transpose ``A^T``.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow (linear).
        """
        return self._lin(lambda x: x.transpose(-1, -2))

    @property
    def T(self):
        """Transpose ``A^T`` (R2, ``(*B, *sub, 3, 3)``), as :meth:`transpose`."""
        return self.transpose()

    def sym(self):
        """Symmetric part, in Mandel form.

        Returns:
            (SR2): At ``(*B, *sub, 6)``; tangents follow (linear).
        """
        from neml2.tensors._sr2 import SR2

        return self._lin(full_to_mandel, SR2)

    def skew(self):
        """Skew part, as its axial vector.

        Returns:
            (WR2): At ``(*B, *sub, 3)``; tangents follow (linear).
        """
        from neml2.tensors._wr2 import WR2

        return self._lin(full_to_skew, WR2)

    def det(self):
        """Determinant (by cofactors: exact tangents).

        Returns:
            (Scalar): At ``(*B, *sub)``; first- and second-order tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        return self._unary_dual(det3, Scalar)

    def inv(self):
        """Inverse.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow.
        """
        return self._unary_dual(T.matrix_inverse)

    def inner(self, other: R2):
        """Double contraction ``A : B``.

        Args:
            other: The other tensor, broadcast against this one.

        Returns:
            (Scalar): At the broadcast ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        (a, b), S = align((self, other), "inner")
        return Scalar._from_dual(a.bilin(b, lambda x, y: (x * y).sum((-1, -2))), S)

    def norm_sq(self):
        """Squared norm ``A : A``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        return self.inner(self)

    def norm(self, eps: float = 0.0):
        """Norm ``sqrt(A : A + eps)``.

        Args:
            eps: Added under the square root; a positive value keeps the tangent finite at
                ``A = 0``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._functions import sqrt

        return sqrt(self.norm_sq() + eps) if eps else sqrt(self.norm_sq())

    def rotate(self, r):
        """Rotate: ``R A R^T``.

        Args:
            r (MRP | Quaternion | R2): The rotation, broadcast against this tensor.

        Returns:
            (R2): At the broadcast ``(*B, *sub, 3, 3)``; tangents of both arguments follow.
        """
        from neml2.tensors._rotations import rotation_matrix

        q = rotation_matrix(r)
        return q.matmul(self).matmul(q.transpose())


def _mm(a, b):
    return small.mm(a, b) if _tracing() else small.eager_mm(a, b)


def _mv(a, v):
    return small.mv(a, v) if _tracing() else small.eager_mm(a, v.unsqueeze(-1)).squeeze(-1)


def _register():
    from neml2.tensors._vec import Vec

    register_matmul(R2, R2, R2, _mm)
    register_matmul(R2, Vec, Vec, _mv)


_register()
