"""``R2``: a full second-order tensor, base shape ``(3, 3)``."""

from __future__ import annotations

import torch

from neml2.tensors import _tangents as T
from neml2.tensors._base import TensorWrapper, register_matmul
from neml2.tensors._broadcast import align
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
        """``I`` (3x3)."""
        from neml2.tensors._factories import _opts

        dtype, device = _opts(dtype, device)
        return cls(torch.eye(3, dtype=dtype, device=device))

    @classmethod
    def fill(cls, *comps, **opts):
        """1 value: ``a I``; 3: diagonal; 9: row-major components (numbers or Scalars)."""
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
        """Component ``(i, j)`` as a Scalar."""
        from neml2.tensors._scalar import Scalar

        i, j = ij
        return self._lin(lambda x: x[..., i, j], Scalar)

    def tr(self):
        """Trace -> Scalar."""
        from neml2.tensors._scalar import Scalar

        return self._lin(lambda x: x.diagonal(dim1=-2, dim2=-1).sum(-1), Scalar)

    def vol(self):
        """``tr/3 I`` -> R2."""
        eye = constant(R2, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], like=self).data
        return self._lin(lambda x: x.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye / 3)

    def dev(self):
        """``A - vol(A)`` -> R2."""
        eye = constant(R2, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], like=self).data
        return self._lin(
            lambda x: x - x.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye / 3
        )

    def transpose(self):
        """``A^T``."""
        return self._lin(lambda x: x.transpose(-1, -2))

    @property
    def T(self):
        return self.transpose()

    def sym(self):
        """Symmetric part as SR2 (Mandel)."""
        from neml2.tensors._sr2 import SR2

        return self._lin(full_to_mandel, SR2)

    def skew(self):
        """Skew part as WR2 (axial vector)."""
        from neml2.tensors._wr2 import WR2

        return self._lin(full_to_skew, WR2)

    def det(self):
        """Determinant -> Scalar."""
        from neml2.tensors._scalar import Scalar

        return self._unary_dual(det3, Scalar)

    def inv(self):
        """Inverse -> R2."""
        return self._unary_dual(T.matrix_inverse)

    def inner(self, other: R2):
        """``A : B`` -> Scalar."""
        from neml2.tensors._scalar import Scalar

        (a, b), S = align((self, other), "inner")
        return Scalar._from_dual(a.bilin(b, lambda x, y: (x * y).sum((-1, -2))), S)

    def norm_sq(self):
        """``A : A`` -> Scalar."""
        return self.inner(self)

    def norm(self, eps: float = 0.0):
        """``sqrt(A : A + eps)`` -> Scalar."""
        from neml2.tensors._functions import sqrt

        return sqrt(self.norm_sq() + eps) if eps else sqrt(self.norm_sq())

    def rotate(self, r):
        """``R A R^T`` for an ``MRP`` or ``R2`` rotation."""
        from neml2.tensors._rotations import rotation_matrix

        q = rotation_matrix(r)
        return q.matmul(self).matmul(q.transpose())


def _mm(a, b):
    return a @ b


def _mv(a, v):
    return (a @ v.unsqueeze(-1)).squeeze(-1)


def _register():
    from neml2.tensors._vec import Vec

    register_matmul(R2, R2, R2, _mm)
    register_matmul(R2, Vec, Vec, _mv)


_register()
