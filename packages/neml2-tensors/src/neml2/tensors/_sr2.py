"""``SR2``: a symmetric second-order tensor in Mandel notation, base shape ``(6,)``.

Components ``(xx, yy, zz, sqrt2*yz, sqrt2*xz, sqrt2*xy)`` (NEML2's convention), so
``inner`` of two SR2 is the full double contraction ``A : B`` and ``SSR4 @ SR2`` is the
6x6 matrix-vector product.
"""

from __future__ import annotations

import math

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._broadcast import _tracing, align
from neml2.tensors._factories import FactoryMixin, base_stack
from neml2.tensors._mandel import SQRT2, mandel_to_full
from neml2.tensors._vec import dot_raw, outer_raw

#: ``(dtype, device) -> (6,)`` mask ``(1, 1, 1, 0, 0, 0) / 3``, built once (eager path)
_VOL_MASKS: dict = {}


def _vol_mask(x: torch.Tensor) -> torch.Tensor:
    """The Mandel ``(6,)`` vector ``m = (1, 1, 1, 0, 0, 0) / 3``: ``vol(x) = tr(x) m``."""
    key = (x.dtype, x.device)
    m = _VOL_MASKS.get(key)
    if m is None:
        m = (torch.arange(6, device=x.device) < 3).to(x.dtype) / 3.0
        _VOL_MASKS[key] = m
    return m


def _eager_float(x: torch.Tensor) -> bool:
    return x.is_floating_point() and not _tracing()


def _plain_coefficient(c) -> torch.Tensor | float | None:
    """*c* as a number or 0-dim tensor when it is one value without tangents, else None."""
    if isinstance(c, (int, float)):
        return float(c)
    data = getattr(c, "data", None)
    if (
        isinstance(data, torch.Tensor)
        and data.dim() == 0
        and getattr(c, "tangents", None) is None
        and getattr(c, "tangents2", None) is None
    ):
        return data
    return None


def tr_raw(x: torch.Tensor) -> torch.Tensor:
    return x[..., 0] + x[..., 1] + x[..., 2]


def _vol_traced(x: torch.Tensor) -> torch.Tensor:
    # tr/3 broadcast against the mask (1, 1, 1, 0, 0, 0) built from an index range: a
    # single pointwise expression Inductor fuses into one pass over x. (A stack of the
    # six components made Inductor write two scratch (B, 6) buffers per call, 4-5x
    # slower at 1e6 points; a literal mask would be a graph constant, which loop bodies
    # must not hold.)
    mask = (torch.arange(6, device=x.device) < 3).to(x.dtype)
    return (tr_raw(x) / 3.0).unsqueeze(-1) * mask


# Eagerly, the volumetric part is the trace times a cached mask (dev: one fused
# ``addcmul``): no BLAS call. A ``(..., 6) @ (6, 6)`` projector product, the form before
# (2026-11-29), took as long on an idle machine, but BLAS runs even a product over 1e3
# points on every thread, and with another process busy on one of the two cores the
# J2 py-eager transient took 1.8x as long at 1e3 points (10 steps: 635 ms against
# 352 ms; at 1e4, 739 against 482). Traced graphs keep the form Inductor fuses.
def vol_raw(x: torch.Tensor) -> torch.Tensor:
    if _eager_float(x):
        return tr_raw(x).unsqueeze(-1) * _vol_mask(x)
    return _vol_traced(x)


def dev_raw(x: torch.Tensor) -> torch.Tensor:
    if _eager_float(x):
        return torch.addcmul(x, tr_raw(x).unsqueeze(-1), _vol_mask(x), value=-1.0)
    return x - _vol_traced(x)


def von_mises(A: SR2, eps: float):
    """``sqrt(3/2) sqrt(S:S + eps)``, ``S = dev(A)``: a Scalar at ``(*B, *sub)``.

    First derivatives in closed form: ``d vm = (3/2) S : dA / vm`` (``dev`` is a
    projection, so ``S : dev(dA) = S : dA``): one contraction per tangent, where the
    generic chain takes the deviator of every tangent, a second contraction and the
    square root's chain rule (33 operations per call with one seed, 19 here). With
    second-order tangents the generic chain runs (the same values).
    """
    from neml2.tensors._functions import sqrt
    from neml2.tensors._scalar import Scalar

    if A.tangents2 is not None:
        S = A.dev()
        return sqrt(S.inner(S) + eps) * math.sqrt(1.5)
    S = dev_raw(A.data)
    vm = torch.sqrt(dot_raw(S, S) + eps) * math.sqrt(1.5)
    t1 = None
    if A.tangents:
        c = 1.5 / vm
        t1 = {k: c * dot_raw(S, v) for k, v in A.tangents.items()}
    return Scalar._make(vm, A.sub_batch_ndim, t1, None)


class SR2(TensorWrapper, FactoryMixin):
    """Symmetric second-order tensor (Mandel). Storage ``(*batch, 6)``."""

    BASE_SHAPE = (6,)
    _base_ndim = 1

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity ``I`` in Mandel form ``(1, 1, 1, 0, 0, 0)``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SR2): The unbatched value, shape ``(6,)``; no tangents.
        """
        from neml2.tensors._factories import constant

        return constant(cls, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=dtype, device=device)

    @classmethod
    def fill(cls, *comps, dtype=None, device=None):
        """Build an SR2 from tensor components; the shear components get the sqrt2 factor.

        Args:
            *comps (float | Scalar): 1 value ``a``: ``a I``; 3 values: the diagonal
                ``(xx, yy, zz)``; 6 values: ``(xx, yy, zz, yz, xz, xy)``. Scalars are broadcast
                against each other and their tangents follow.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SR2): The tensor, at ``(*B, *sub, 6)`` with the components' common batch shape.

        Raises:
            TypeError: If the number of components is not 1, 3 or 6, or one is not a Scalar
                or number.
        """
        if len(comps) == 1:
            a = comps[0]
            comps = (a, a, a, 0.0, 0.0, 0.0)
        elif len(comps) == 3:
            comps = (*comps, 0.0, 0.0, 0.0)
        elif len(comps) != 6:
            raise TypeError(f"SR2.fill takes 1, 3 or 6 components, got {len(comps)}")
        comps = list(comps[:3]) + [c * SQRT2 for c in comps[3:]]
        return base_stack(cls, comps, dtype=dtype, device=device)

    def __getitem__(self, ij):
        """Tensor component ``(i, j)`` as a Scalar (Mandel factor removed).

        Args:
            ij (tuple[int, int]): The row and column, each in 0..2.

        Returns:
            (Scalar): The component, at ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        i, j = ij
        idx = [[0, 5, 4], [5, 1, 3], [4, 3, 2]][i][j]
        f = 1.0 if i == j else 1.0 / SQRT2
        return self._lin(lambda x: x[..., idx] * f, Scalar)

    def tr(self):
        """Trace.

        Returns:
            (Scalar): ``xx + yy + zz``, at ``(*B, *sub)``; tangents follow (linear).
        """
        from neml2.tensors._scalar import Scalar

        return self._lin(tr_raw, Scalar)

    def vol(self):
        """Volumetric part ``tr/3 I``.

        Returns:
            (SR2): At ``(*B, *sub, 6)``; tangents follow (linear).
        """
        return self._lin(vol_raw)

    def dev(self):
        """Deviatoric part ``A - tr/3 I``.

        Returns:
            (SR2): At ``(*B, *sub, 6)``; tangents follow (linear).
        """
        return self._lin(dev_raw)

    def isotropic_map(self, c_vol, c_dev):
        """The action of an isotropic fourth-order tensor: ``c_vol vol(A) + c_dev dev(A)``.

        Linear isotropic elasticity is ``ε.isotropic_map(3K, 2G)`` (its compliance
        ``σ.isotropic_map(1/(3K), 1/(2G))``). Where both coefficients are plain numbers or
        unbatched Scalars without tangents, an eager call maps ``A`` and each of its tangents
        as ``c_dev A + (c_vol - c_dev) vol(A)`` (no BLAS call; see ``vol_raw``); otherwise,
        and in traced graphs (where Inductor fuses the pointwise form), the sum as written.

        Args:
            c_vol (Scalar | float): The eigenvalue on the volumetric part, e.g. ``3K``.
            c_dev (Scalar | float): The eigenvalue on the deviatoric part, e.g. ``2G``.

        Returns:
            (SR2): At the broadcast ``(*B, *sub, 6)``; tangents follow.
        """
        a, b = _plain_coefficient(c_vol), _plain_coefficient(c_dev)
        if a is not None and b is not None and _eager_float(self.data):
            c = (a - b) * _vol_mask(self.data)  # c_dev A + (c_vol - c_dev) vol(A)
            return self._lin(lambda x: torch.addcmul(x * b, tr_raw(x).unsqueeze(-1), c))
        return c_vol * self.vol() + c_dev * self.dev()

    def inner(self, other: SR2):
        """Double contraction ``A : B``.

        Args:
            other: The other tensor, broadcast against this one.

        Returns:
            (Scalar): At the broadcast ``(*B, *sub)``; first- and second-order tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        (a, b), S = align((self, other), "inner")
        return Scalar._from_dual(a.bilin(b, dot_raw), S)

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

    def outer(self, other: SR2):
        """Outer product ``A (x) B`` (the 6x6 Mandel matrix).

        Args:
            other: The right factor, broadcast against this one.

        Returns:
            (SSR4): At the broadcast ``(*B, *sub, 6, 6)``; tangents follow.
        """
        from neml2.tensors._ssr4 import SSR4

        (a, b), S = align((self, other), "outer")
        return SSR4._from_dual(a.bilin(b, outer_raw), S)

    def to_R2(self):
        """The full symmetric 3x3 matrix.

        Returns:
            (R2): At ``(*B, *sub, 3, 3)``; tangents follow (linear).
        """
        from neml2.tensors._r2 import R2

        return self._lin(mandel_to_full, R2)

    def det(self):
        """Determinant.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        return self.to_R2().det()

    def inv(self):
        """Inverse.

        Returns:
            (SR2): At ``(*B, *sub, 6)``; tangents follow.
        """
        return self.to_R2().inv().sym()

    def transpose(self):
        """Transpose: an SR2 is its own transpose.

        Returns:
            (SR2): This value itself.
        """
        return self

    def rotate(self, r):
        """Rotate: ``R A R^T``.

        Args:
            r (MRP | Quaternion | R2): The rotation, broadcast against this tensor.

        Returns:
            (SR2): At the broadcast ``(*B, *sub, 6)``; tangents of both arguments follow.
        """
        return self.to_R2().rotate(r).sym()
