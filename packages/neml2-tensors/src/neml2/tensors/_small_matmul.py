"""Products of the small matrices of the typed tensors (3 x 3, 6 x 6).

Eagerly the typed tensors contract with ATen's batched matmul / einsum: for 3 x 3
products it is the fastest form torch has there (30000 products on 2 cores: ``@`` 1.0 ms,
three ``addcmul`` 2.1 ms, a broadcast product summed 6.2 ms). Where a kernel for them is
installed (:mod:`neml2.tensors._kernels`; neml2-models installs ``neml2::small_mm`` of
libneml2 where neml2-aoti-runtime is present), the eager ``R2`` products
(:func:`eager_mm`) go to it on CPU: ATen's loop takes 30-60 ns per 3 x 3 product and
copies a broadcast operand out first (a rotation times the tangents of a crystal model:
the rotation once per tangent), the kernel a few ns reading both in place. Traced
(``torch.compile``, ``torch.export``: ``_broadcast._tracing``), they use the forms below,
a broadcast product summed over the contracted axis: Inductor fuses it into the kernels
around it, where ``@`` stays one external batched-matmul call per product with its
operands written out first (a compiled Newton iteration of the Taylor benchmark model
made 84 such calls, and 18 % of its time went to ATen's small-matrix kernel).

All functions act on the trailing axes and broadcast the leading ones.
"""

from __future__ import annotations

import torch

from neml2.tensors._kernels import kernel_for


def eager_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for an untraced product: the installed kernel where it applies."""
    op = kernel_for("small_mm", a, b)
    return a @ b if op is None else op(a, b)


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``(..., m, k) x (..., k, n) -> (..., m, n)``."""
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2)


def mv(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``(..., m, k) x (..., k) -> (..., m)``."""
    return (a * v.unsqueeze(-2)).sum(-1)


def vm(v: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """``(..., k) x (..., k, n) -> (..., n)``."""
    return (v.unsqueeze(-1) * a).sum(-2)
