"""The operators libneml2 registers (``cpp/ops``), as torch's tracers see them.

``neml2::dense_lu_solve(A, B) -> (X, info)``: ``A (*batch, n, n)``, ``B (*batch, n, k)``
with the same batch shape; ``X (*batch, n, k)`` contiguous, ``info (*batch)`` int32
(0, or ``c + 1`` where column ``c`` has a zero pivot). A batched LU solve vectorized across
the systems, for the Newton updates of implicit models.

``neml2::small_mm(A, B) -> C``: ``torch.matmul(A, B)`` for small matrices (``m, k, n <= 8``,
broadcast batch axes), contiguous, summed in ATen's order; a loop that reads both operands
in place, for the eager typed tensors' 3 x 3 products on CPU.

``neml2::mandel_to_full``, ``full_to_mandel``, ``skew_to_full``, ``full_to_skew`` ``(x) ->
y``: the typed tensors' storage conversions (Mandel and axial vectors to and from 3 x 3
matrices) at every batch point, the values of ``neml2.tensors._mandel``'s forms bit for bit;
CPU float32 / float64 (another device or dtype is an error), eager only.

Importing :mod:`neml2.aoti` loads libneml2 (the binding links it), which registers the
operator and its kernels; this module adds the fake kernel that ``torch.export`` and
Inductor trace with (shapes only, symbolic batch sizes kept symbolic).
"""

from __future__ import annotations

import torch

from neml2.aoti import _core  # noqa: F401  (loads libneml2: the operator exists after this)
from neml2.tensors._kernels import NAMES as KERNEL_NAMES

#: the batched LU solve, ``torch.ops.neml2.dense_lu_solve``
dense_lu_solve = torch.ops.neml2.dense_lu_solve

#: the same solve with ``A`` given by its blocks, ``torch.ops.neml2.dense_lu_solve_blocks``
#: (eager only: no fake kernel, no autograd formula)
dense_lu_solve_blocks = torch.ops.neml2.dense_lu_solve_blocks

#: the batched small-matrix product, ``torch.ops.neml2.small_mm`` (eager only: no fake
#: kernel, no autograd formula)
small_mm = torch.ops.neml2.small_mm

#: the eager kernels of the typed tensors (``neml2.tensors.use_cpu_kernels``), name ->
#: operator: the small products and the storage conversions
cpu_kernels = {name: getattr(torch.ops.neml2, name) for name in KERNEL_NAMES}


@torch.library.register_fake("neml2::dense_lu_solve")
def _dense_lu_solve_fake(A: torch.Tensor, B: torch.Tensor):
    torch._check(
        A.dim() >= 2 and A.shape[-1] == A.shape[-2],
        lambda: f"neml2::dense_lu_solve: A must be (*batch, n, n), got {tuple(A.shape)}",
    )
    torch._check(
        B.dim() == A.dim() and B.shape[-2] == A.shape[-1] and B.shape[:-2] == A.shape[:-2],
        lambda: (
            "neml2::dense_lu_solve: B must be (*batch, n, k) with A's batch shape "
            f"{tuple(A.shape)}, got {tuple(B.shape)}"
        ),
    )
    return B.new_empty(B.shape), A.new_empty(A.shape[:-2], dtype=torch.int32)
