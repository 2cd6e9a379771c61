"""Rotations: ``MRP`` (modified Rodrigues parameters, base ``(3,)``) and ``Quaternion``
(base ``(4,)``, scalar first).

An MRP ``r = n tan(theta/4)`` (axis ``n``, angle ``theta``) has the rotation matrix
``R = I + (8 W^2 + 4 (1 - r.r) W) / (1 + r.r)^2`` with ``W = skew(r)`` (NEML2's
``euler_rodrigues``).
"""

from __future__ import annotations

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._factories import FactoryMixin, _opts
from neml2.tensors._vec import Vec, VecBase


class MRP(VecBase):
    """Modified Rodrigues parameters of a rotation. Storage ``(*batch, 3)``."""

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity rotation ``(0, 0, 0)``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (MRP): Unbatched, shape ``(3,)``; no tangents.
        """
        return cls.zeros(dtype=dtype, device=device)

    @classmethod
    def from_axis_angle(cls, axis, angle):
        """The MRP ``n tan(theta/4)`` of a rotation by an angle about an axis.

        Args:
            axis (Vec): The axis ``(*B, *sub, 3)``; normalised here.
            angle (Scalar): The angle ``theta`` in radians, ``(*B, *sub)``.

        Returns:
            (MRP): At the broadcast ``(*B, *sub, 3)``; tangents follow.
        """
        from neml2.tensors._functions import tan

        n = axis / axis.norm()
        return cls(tan(angle * 0.25) * n)

    @classmethod
    def from_matrix(cls, R):
        """The MRP of a rotation matrix (angle < pi), via the axial vector of ``R``.

        Args:
            R (R2): A rotation matrix, ``(*B, *sub, 3, 3)``.

        Returns:
            (MRP): At ``(*B, *sub, 3)``; tangents follow.
        """
        from neml2.tensors._functions import arccos, sin, sqrt, tan, where
        from neml2.tensors._scalar import Scalar

        c = (R.tr() - 1.0) * 0.5
        theta = arccos(c)
        small = theta < 1e-6
        st = where(small, Scalar.ones_like(theta), sin(theta))
        # standard Rodrigues vector rho = n tan(theta/2) = axial(R) * tan(theta/2)/sin(theta)
        scale = where(small, 0.5 + theta * 0.0, tan(theta * 0.5) / st)
        w = R.skew()
        rho = scale * Vec(w)
        return cls(rho / (sqrt(rho.norm_sq() + 1.0) + 1.0))

    def to_R2(self):
        """The rotation matrix.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow.
        """
        from neml2.tensors._r2 import R2
        from neml2.tensors._wr2 import WR2

        rr = self.norm_sq()
        W = WR2(self).to_R2()
        f = 1.0 / ((1.0 + rr) * (1.0 + rr))
        eye = R2.identity(dtype=self.dtype, device=self.device)
        return eye + (8.0 * f) * W.matmul(W) + (4.0 * (1.0 - rr) * f) * W

    def to_quaternion(self):
        """The unit quaternion ``((1 - r.r), 2 r) / (1 + r.r)`` (scalar first).

        Returns:
            (Quaternion): At ``(*B, *sub, 4)``; tangents follow.
        """
        from neml2.tensors._factories import base_stack

        rr = self.norm_sq()
        d = 1.0 / (1.0 + rr)
        v = (2.0 * d) * Vec(self)
        return base_stack(Quaternion, [(1.0 - rr) * d] + [v[i] for i in range(3)])

    def inverse(self):
        """The inverse rotation ``-r``.

        Returns:
            (MRP): At ``(*B, *sub, 3)``; tangents follow.
        """
        return -self

    def compose(self, other: MRP):
        """The MRP of ``R(self) R(other)`` (apply ``other`` first, then ``self``).

        Args:
            other: The rotation applied first, broadcast against this one.

        Returns:
            (MRP): At the broadcast ``(*B, *sub, 3)``; tangents follow.
        """
        return _compose_mrp(self, other)

    def rotate(self, r):
        """Apply the rotation ``r`` after this one: ``R(r) R(self)``.

        Args:
            r (MRP | R2): The rotation applied second; an R2 is converted with
                :meth:`from_matrix`.

        Returns:
            (MRP): At the broadcast ``(*B, *sub, 3)``; tangents follow.
        """
        if not isinstance(r, MRP):
            r = MRP.from_matrix(r)
        return _compose_mrp(r, self)


def rotation_matrix(r) -> TensorWrapper:
    """The rotation matrix of a rotation.

    Args:
        r (MRP | Quaternion | R2): The rotation; an R2 is returned as is.

    Returns:
        The R2 at ``(*B, *sub, 3, 3)``; tangents follow.

    Raises:
        TypeError: If *r* is not an MRP, Quaternion or R2.
    """
    from neml2.tensors._r2 import R2

    if isinstance(r, R2):
        return r
    if isinstance(r, MRP | Quaternion):
        return r.to_R2()
    raise TypeError(f"expected a rotation (MRP, Quaternion or R2), got {type(r).__name__}")


def _compose_mrp(a: MRP, b: MRP) -> MRP:
    """``R(a) R(b)``: ``((1 - b.b) a + (1 - a.a) b - 2 b x a) / (1 + a.a b.b - 2 a.b)``."""
    aa, bb = a.norm_sq(), b.norm_sq()
    va, vb = Vec(a), Vec(b)
    num = (1.0 - bb) * va + (1.0 - aa) * vb - 2.0 * vb.cross(va)
    den = 1.0 + aa * bb - 2.0 * va.inner(vb)
    return MRP(num / den)


class Quaternion(TensorWrapper, FactoryMixin):
    """Quaternion ``(s, x, y, z)`` (scalar first). Storage ``(*batch, 4)``."""

    BASE_SHAPE = (4,)
    _base_ndim = 1

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity quaternion ``(1, 0, 0, 0)``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (Quaternion): Unbatched, shape ``(4,)``; no tangents.
        """
        dtype, device = _opts(dtype, device)
        return cls(torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=dtype, device=device))

    def __getitem__(self, i: int):
        """Component ``i`` (``0``: the scalar part) as a Scalar.

        Args:
            i: The component, 0..3.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        return self._lin(lambda x: x[..., i], Scalar)

    def to_R2(self):
        """The rotation matrix of a unit quaternion.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow.
        """
        from neml2.tensors._factories import base_stack
        from neml2.tensors._r2 import R2

        s, x, y, z = (self[i] for i in range(4))
        return base_stack(
            R2,
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - s * z),
                2.0 * (x * z + s * y),
                2.0 * (x * y + s * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - s * x),
                2.0 * (x * z - s * y),
                2.0 * (y * z + s * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
            (3, 3),
        )


def _mrp_matmul(self, other):
    """``a @ b`` of two MRPs composes them: ``R(a @ b) = R(a) R(b)``."""
    if isinstance(other, MRP):
        return _compose_mrp(self, other)
    return TensorWrapper.matmul(self, other)


MRP.matmul = _mrp_matmul
