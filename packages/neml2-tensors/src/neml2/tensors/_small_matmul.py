"""Products of the small matrices of the typed tensors (3 x 3, 6 x 6) in traced graphs.

Eagerly the typed tensors contract with ATen's batched matmul / einsum: for 3 x 3
products it is the fastest form there (30000 products on 2 cores: ``@`` 1.0 ms, three
``addcmul`` 2.1 ms, a broadcast product summed 6.2 ms). Traced (``torch.compile``,
``torch.export``: ``_broadcast._tracing``), they use the forms below, a broadcast
product summed over the contracted axis: Inductor fuses it into the kernels around it,
where ``@`` stays one external batched-matmul call per product with its operands
written out first (a compiled Newton iteration of the Taylor benchmark model made 84
such calls, and 18 % of its time went to ATen's small-matrix kernel).

All functions act on the trailing axes and broadcast the leading ones.
"""

from __future__ import annotations

import torch


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``(..., m, k) x (..., k, n) -> (..., m, n)``."""
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2)


def mv(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``(..., m, k) x (..., k) -> (..., m)``."""
    return (a * v.unsqueeze(-2)).sum(-1)


def vm(v: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """``(..., k) x (..., k, n) -> (..., n)``."""
    return (v.unsqueeze(-1) * a).sum(-2)
