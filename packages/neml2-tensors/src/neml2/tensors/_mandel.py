"""Raw (untyped) conversions between Mandel / axial-vector storage and full 3x3 matrices.

All functions act on the trailing axes only and are linear, so they double as their own
tangent rules. Eagerly the four conversions go to libneml2's operators where installed
(:mod:`neml2.tensors._kernels`: one pass instead of a dozen torch operations, the same
values bit for bit).

* Mandel (``SR2``): ``(xx, yy, zz, sqrt2*yz, sqrt2*xz, sqrt2*xy)``.
* Axial vector (``WR2``): ``w = (W[2,1], W[0,2], W[1,0])``, i.e.
  ``W = [[0, -w2, w1], [w2, 0, -w0], [-w1, w0, 0]]`` so that ``W v = w x v``
  (NEML2's ``skew_to_full`` convention).
"""

from __future__ import annotations

import math

import torch

from neml2.tensors._kernels import kernel_for

SQRT2 = math.sqrt(2.0)
INV_SQRT2 = 1.0 / SQRT2


def mandel_to_full(x: torch.Tensor) -> torch.Tensor:
    """``(..., 6) -> (..., 3, 3)`` symmetric."""
    op = kernel_for("mandel_to_full", x)
    if op is not None:
        return op(x)
    a0, a1, a2, a3, a4, a5 = x.unbind(-1)
    a3, a4, a5 = a3 * INV_SQRT2, a4 * INV_SQRT2, a5 * INV_SQRT2
    return torch.stack([a0, a5, a4, a5, a1, a3, a4, a3, a2], -1).unflatten(-1, (3, 3))


def full_to_mandel(a: torch.Tensor) -> torch.Tensor:
    """``(..., 3, 3) -> (..., 6)``: Mandel vector of the symmetric part."""
    op = kernel_for("full_to_mandel", a)
    if op is not None:
        return op(a)
    return torch.stack(
        [
            a[..., 0, 0],
            a[..., 1, 1],
            a[..., 2, 2],
            (a[..., 1, 2] + a[..., 2, 1]) * INV_SQRT2,
            (a[..., 0, 2] + a[..., 2, 0]) * INV_SQRT2,
            (a[..., 0, 1] + a[..., 1, 0]) * INV_SQRT2,
        ],
        -1,
    )


def skew_to_full(w: torch.Tensor) -> torch.Tensor:
    """``(..., 3) -> (..., 3, 3)`` skew matrix with ``W v = w x v``."""
    op = kernel_for("skew_to_full", w)
    if op is not None:
        return op(w)
    w0, w1, w2 = w.unbind(-1)
    z = torch.zeros_like(w0)
    return torch.stack([z, -w2, w1, w2, z, -w0, -w1, w0, z], -1).unflatten(-1, (3, 3))


def full_to_skew(a: torch.Tensor) -> torch.Tensor:
    """``(..., 3, 3) -> (..., 3)``: axial vector of the skew part."""
    op = kernel_for("full_to_skew", a)
    if op is not None:
        return op(a)
    return 0.5 * torch.stack(
        [a[..., 2, 1] - a[..., 1, 2], a[..., 0, 2] - a[..., 2, 0], a[..., 1, 0] - a[..., 0, 1]],
        -1,
    )


def ssr4_to_full(c: torch.Tensor) -> torch.Tensor:
    """``(..., 6, 6) -> (..., 3, 3, 3, 3)`` with ``C[i,j,k,l]``."""
    t = mandel_to_full(c)  # (..., 6, 3, 3): [I, k, l]
    t = mandel_to_full(t.movedim(-3, -1))  # (..., 3, 3, 3, 3): [k, l, i, j]
    return t.movedim(-2, -4).movedim(-1, -3)


def full_to_ssr4(c: torch.Tensor) -> torch.Tensor:
    """``(..., 3, 3, 3, 3) -> (..., 6, 6)`` (minor-symmetrised)."""
    t = full_to_mandel(c)  # (..., 3, 3, 6): [i, j, J]
    t = full_to_mandel(t.movedim(-1, -3))  # (..., 6, 6): [J, I]
    return t.transpose(-1, -2)
