"""``Vec``: base shape ``(3,)``."""

from __future__ import annotations

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._broadcast import _tracing, align
from neml2.tensors._factories import FactoryMixin, base_stack


def cross_raw(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a x b`` on the last axis (bilinear)."""
    a0, a1, a2 = a.unbind(-1)
    b0, b1, b2 = b.unbind(-1)
    return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


#: eager :func:`dot_raw` contracts with ``einsum`` above this many broadcast products
_EINSUM_MIN = 16384


def _broadcast_numel(a: torch.Tensor, b: torch.Tensor) -> int:
    """Number of elements of ``a * b`` (plain Python: no ``torch.broadcast_shapes``)."""
    sa, sb = a.shape, b.shape
    n = 1
    for i in range(1, max(len(sa), len(sb)) + 1):
        da = sa[-i] if i <= len(sa) else 1
        db = sb[-i] if i <= len(sb) else 1
        n *= da if db == 1 else db
    return n


def _seed_rows(t: torch.Tensor, p: torch.Tensor) -> bool:
    """Whether *t* is ``(K, 1, ..., 1, n)`` against *p* ``(*batch, n)``: a tangent that
    is the same at every point (a seed) against a batched value."""
    return (
        t.dim() == p.dim() + 1
        and t.shape[-1] == p.shape[-1]
        and t.numel() == t.shape[0] * t.shape[-1]
        and t.dtype == p.dtype
    )


def _seed_dot(t: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """``(K, *batch)``: each of the K rows of *t* dotted with every point of *p*, as one
    ``(K, n) @ (n, points)`` product."""
    k, n = t.shape[0], t.shape[-1]
    return (t.reshape(k, n) @ p.reshape(-1, n).T).reshape(k, *p.shape[:-1])


def dot_raw(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``sum_i a_i b_i`` on the last axis (bilinear; leading axes broadcast).

    Eagerly, a seed (a tangent with one row per seed and no batch) against a batched
    value is one small matrix product; another large broadcast contraction (a
    second-order tangent pair is an outer product over two seed axes) goes through
    ``einsum``, which does not materialise the products and is many times faster than
    ``(a * b).sum(-1)`` there. Traced graphs keep ``mul`` + ``sum``, which Inductor
    fuses into one loop.
    """
    if not _tracing():
        if _seed_rows(a, b):
            return _seed_dot(a, b)
        if _seed_rows(b, a):
            return _seed_dot(b, a)
        if _broadcast_numel(a, b) >= _EINSUM_MIN:
            return torch.einsum("...i,...i->...", a, b)
    return (a * b).sum(-1)


def outer_raw(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.unsqueeze(-1) * b.unsqueeze(-2)


class VecBase(TensorWrapper, FactoryMixin):
    """Shared algebra of the 3-vectors ``Vec``, ``WR2``, ``MRP``."""

    BASE_SHAPE = (3,)
    _base_ndim = 1

    @classmethod
    def fill(cls, x, y, z, **opts):
        """Build from three components.

        Args:
            x (float | Scalar): The first component; a Scalar's tangents follow.
            y (float | Scalar): The second component.
            z (float | Scalar): The third component.
            **opts (Any): ``dtype`` and ``device`` (default: those of a typed component, else
                torch's defaults).

        Returns:
            (VecBase): This type at the components' broadcast ``(*B, *sub, 3)``.
        """
        return base_stack(cls, [x, y, z], **opts)

    def _pair(self, other, fn, out, op):
        (a, b), S = align((self, other), op)
        return out._from_dual(a.bilin(b, fn), S)

    def inner(self, other: VecBase):
        """Dot product ``a . b``.

        Args:
            other: The other 3-vector, broadcast against this one.

        Returns:
            (Scalar): At the broadcast ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        return self._pair(other, dot_raw, Scalar, "inner")

    dot = inner

    def norm_sq(self):
        """Squared norm ``|a|^2``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        return self.inner(self)

    def norm(self, eps: float = 0.0):
        """Norm ``sqrt(|a|^2 + eps)``.

        Args:
            eps: Added under the square root; a positive value keeps the tangent finite at
                ``a = 0``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._functions import sqrt

        return sqrt(self.norm_sq() + eps) if eps else sqrt(self.norm_sq())

    def cross(self, other: VecBase):
        """Cross product ``a x b``.

        Args:
            other: The right factor, broadcast against this one.

        Returns:
            (Vec): At the broadcast ``(*B, *sub, 3)``; tangents follow.
        """
        return self._pair(other, cross_raw, Vec, "cross")

    def outer(self, other: VecBase):
        """Outer product ``a (x) b``.

        Args:
            other: The right factor, broadcast against this one.

        Returns:
            (R2): At the broadcast ``(*B, *sub, 3, 3)``; tangents follow.
        """
        from neml2.tensors._r2 import R2

        return self._pair(other, outer_raw, R2, "outer")

    def __getitem__(self, i: int):
        """Component ``i`` as a Scalar.

        Args:
            i: The component, 0..2.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        return self._lin(lambda x: x[..., i], Scalar)


class Vec(VecBase):
    """A 3-vector. Storage ``(*batch, 3)``."""

    def rotate(self, r):
        """Rotate: ``R v``.

        Args:
            r (MRP | Quaternion | R2): The rotation, broadcast against this value.

        Returns:
            (Vec): At the broadcast ``(*B, *sub, 3)``; tangents of both arguments follow.
        """
        from neml2.tensors._rotations import rotation_matrix

        return rotation_matrix(r).matmul(self)
