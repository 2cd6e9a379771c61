"""``SSR4``: a fourth-order tensor with minor symmetries as a 6x6 Mandel matrix.

``(C @ e)`` is ``C : e`` on Mandel vectors; ``C @ D`` composes; ``identity_sym`` is the
6x6 identity (the symmetric fourth-order identity in Mandel form).
"""

from __future__ import annotations

import torch

from neml2.tensors import _small_matmul as small
from neml2.tensors import _tangents as T
from neml2.tensors._base import TensorWrapper, register_matmul
from neml2.tensors._broadcast import _tracing, align
from neml2.tensors._factories import FactoryMixin, _opts
from neml2.tensors._mandel import full_to_ssr4, ssr4_to_full


def _i_vol(dtype, device) -> torch.Tensor:
    one = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=dtype, device=device)
    return one.unsqueeze(-1) * one.unsqueeze(-2) / 3.0


class SSR4(TensorWrapper, FactoryMixin):
    """Minor-symmetric fourth-order tensor (6x6 Mandel). Storage ``(*batch, 6, 6)``."""

    BASE_SHAPE = (6, 6)
    _base_ndim = 2

    @classmethod
    def identity(cls, *, dtype=None, device=None):
        """The identity: the same as :meth:`identity_sym`.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): The unbatched value, shape ``(6, 6)``; no tangents.
        """
        return cls.identity_sym(dtype=dtype, device=device)

    @classmethod
    def identity_sym(cls, *, dtype=None, device=None):
        """``I_sym``: maps every SR2 to itself (the 6x6 identity).

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): The unbatched value, shape ``(6, 6)``; no tangents.
        """
        dtype, device = _opts(dtype, device)
        return cls(torch.eye(6, dtype=dtype, device=device))

    @classmethod
    def identity_vol(cls, *, dtype=None, device=None):
        """``I_vol = 1/3 I (x) I``: ``I_vol @ e = vol(e)``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): The unbatched value, shape ``(6, 6)``; no tangents.
        """
        dtype, device = _opts(dtype, device)
        return cls(_i_vol(dtype, device))

    @classmethod
    def identity_dev(cls, *, dtype=None, device=None):
        """``I_dev = I_sym - I_vol``: ``I_dev @ e = dev(e)``.

        Args:
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): The unbatched value, shape ``(6, 6)``; no tangents.
        """
        dtype, device = _opts(dtype, device)
        return cls(torch.eye(6, dtype=dtype, device=device) - _i_vol(dtype, device))

    @classmethod
    def isotropic_K_G(cls, K, G, *, dtype=None, device=None):
        """Isotropic stiffness ``3K I_vol + 2G I_dev`` from bulk and shear moduli.

        Args:
            K (Scalar | float): The bulk modulus; a Scalar's tangents propagate.
            G (Scalar | float): The shear modulus, likewise.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.
                Both default to those of *K* or *G* when one is typed.

        Returns:
            (SSR4): At the moduli's broadcast ``(*B, *sub, 6, 6)`` (unbatched for numbers).
        """
        from neml2.tensors._scalar import Scalar

        like = K if isinstance(K, TensorWrapper) else G if isinstance(G, TensorWrapper) else None
        dtype, device = _opts(dtype, device, like)
        iv = cls.identity_vol(dtype=dtype, device=device)
        idv = cls.identity_dev(dtype=dtype, device=device)
        if not isinstance(K, TensorWrapper) and not isinstance(G, TensorWrapper):
            return cls(3.0 * K * iv.data + 2.0 * G * idv.data)
        K = K if isinstance(K, TensorWrapper) else Scalar(torch.tensor(K, dtype=dtype))
        G = G if isinstance(G, TensorWrapper) else Scalar(torch.tensor(G, dtype=dtype))
        return (3.0 * K) * iv + (2.0 * G) * idv

    @classmethod
    def isotropic_E_nu(cls, E, nu, *, dtype=None, device=None):
        """Isotropic stiffness from Young's modulus and Poisson's ratio.

        Args:
            E (Scalar | float): Young's modulus; a Scalar's tangents propagate.
            nu (Scalar | float): Poisson's ratio, likewise.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): At the broadcast ``(*B, *sub, 6, 6)`` (unbatched for numbers).
        """
        K = E / (3.0 * (1.0 - 2.0 * nu))
        G = E / (2.0 * (1.0 + nu))
        return cls.isotropic_K_G(K, G, dtype=dtype, device=device)

    @classmethod
    def isotropic_lame(cls, lam, mu, *, dtype=None, device=None):
        """Isotropic stiffness from the Lamé constants ``lambda``, ``mu``.

        Args:
            lam (Scalar | float): The first Lamé constant ``lambda``.
            mu (Scalar | float): The shear modulus ``mu``.
            dtype (torch.dtype | None): The dtype; default: torch's default dtype.
            device (torch.device | str | None): The device; default: torch's default device.

        Returns:
            (SSR4): At the broadcast ``(*B, *sub, 6, 6)`` (unbatched for numbers).
        """
        return cls.isotropic_K_G(lam + 2.0 / 3.0 * mu, mu, dtype=dtype, device=device)

    def __getitem__(self, IJ):
        """Mandel component ``(I, J)`` as a Scalar.

        Args:
            IJ (tuple[int, int]): The Mandel row and column, each in 0..5.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        i, j = IJ
        return self._lin(lambda x: x[..., i, j], Scalar)

    def transpose(self):
        """Major transpose ``C_IJ -> C_JI``.

        Returns:
            (SSR4): At ``(*B, *sub, 6, 6)``; tangents follow (linear).
        """
        return self._lin(lambda x: x.transpose(-1, -2))

    def inv(self):
        """Inverse on the symmetric subspace (the 6x6 matrix inverse).

        Returns:
            (SSR4): At ``(*B, *sub, 6, 6)``; tangents follow.
        """
        return self._unary_dual(T.matrix_inverse)

    def inner(self, other: SSR4):
        """Quadruple contraction ``C :: D``.

        Args:
            other: The other tensor, broadcast against this one.

        Returns:
            (Scalar): At the broadcast ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._scalar import Scalar

        (a, b), S = align((self, other), "inner")
        return Scalar._from_dual(a.bilin(b, lambda x, y: (x * y).sum((-1, -2))), S)

    def norm_sq(self):
        """Squared norm ``C :: C``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        return self.inner(self)

    def norm(self, eps: float = 0.0):
        """Norm ``sqrt(C :: C + eps)``.

        Args:
            eps: Added under the square root; a positive value keeps the tangent finite at
                ``C = 0``.

        Returns:
            (Scalar): At ``(*B, *sub)``; tangents follow.
        """
        from neml2.tensors._functions import sqrt

        return sqrt(self.norm_sq() + eps) if eps else sqrt(self.norm_sq())

    def to_full(self):
        """The full ``C[i,j,k,l]``.

        Returns:
            (Tensor): A dynamic-base Tensor at ``(*B, *sub, 3, 3, 3, 3)``; tangents follow.
        """
        from neml2.tensors._tensor import Tensor

        return self._lin(ssr4_to_full, Tensor, base_ndim=4)

    def rotate(self, r):
        """Rotate: ``C'_ijkl = R_ip R_jq R_kr R_ls C_pqrs``.

        Args:
            r (MRP | Quaternion | R2): The rotation, broadcast against this tensor.

        Returns:
            (SSR4): At the broadcast ``(*B, *sub, 6, 6)``; tangents of both arguments follow.
        """
        from neml2.tensors._rotations import rotation_matrix

        q = rotation_matrix(r)
        (dc, dq), S = align((self, q), "rotate")
        full = dc.lin(ssr4_to_full)
        for spec in (
            "...ip,...pjkl->...ijkl",
            "...jq,...iqkl->...ijkl",
            "...kr,...ijrl->...ijkl",
            "...ls,...ijks->...ijkl",
        ):
            full = dq.bilin(full, lambda a, b, spec=spec: torch.einsum(spec, a, b))
        return SSR4._from_dual(full.lin(full_to_ssr4), S)


def _mv(c, e):
    return small.mv(c, e) if _tracing() else torch.einsum("...ij,...j->...i", c, e)


def _vm(e, c):
    return small.vm(e, c) if _tracing() else torch.einsum("...i,...ij->...j", e, c)


def _mm(c, d):
    return small.mm(c, d) if _tracing() else c @ d


def _register():
    from neml2.tensors._sr2 import SR2

    register_matmul(SSR4, SR2, SR2, _mv)
    register_matmul(SR2, SSR4, SR2, _vm)
    register_matmul(SSR4, SSR4, SSR4, _mm)


_register()
