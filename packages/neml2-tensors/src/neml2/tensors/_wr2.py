"""``WR2``: a skew-symmetric second-order tensor stored as its axial vector, base ``(3,)``.

Convention (NEML2's): ``w = (W[2,1], W[0,2], W[1,0])``, i.e.
``W = [[0, -w2, w1], [w2, 0, -w0], [-w1, w0, 0]]`` and ``W v = w x v``.
"""

from __future__ import annotations

from neml2.tensors import _tangents as T
from neml2.tensors._mandel import skew_to_full
from neml2.tensors._vec import VecBase


class WR2(VecBase):
    """Skew tensor (axial vector). Storage ``(*batch, 3)``."""

    def to_R2(self):
        """The full skew 3x3 matrix.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow (linear).
        """
        from neml2.tensors._r2 import R2

        return self._lin(skew_to_full, R2)

    def exp(self):
        """Exponential map to a rotation.

        ``exp(W)`` is the rotation by ``theta = |w|`` about ``w/|w|``; its MRP is
        ``w tan(theta/4) / theta`` (Taylor series ``1/4 + theta^2/192 + theta^4/7680``
        near 0).

        Returns:
            (MRP): At ``(*B, *sub, 3)``; first- and second-order tangents follow.
        """
        from neml2.tensors._rotations import MRP

        return self._unary_dual(exp_map_dual, MRP)


def exp_map_dual(w: T.Dual) -> T.Dual:
    """MRP of ``exp(skew(w))`` on raw duals ``(..., 3)``."""
    import torch

    ns = w.bilin(w, lambda a, b: (a * b).sum(-1))
    small = ns.p < 1e-6
    safe = T.where(small, T.Dual(torch.ones_like(ns.p)), ns)
    th = T.sqrt(safe)
    actual = T.tan(th * 0.25) / th
    taylor = 0.25 + ns * (1.0 / 192.0) + ns * ns * (1.0 / 7680.0)
    f = T.where(small, taylor, actual)
    return w.bilin(f, lambda a, s: a * s.unsqueeze(-1))
