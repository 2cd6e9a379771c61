"""``run_loop`` under torch.export: carried state with broadcast (stride-0) tensors.

The J2 radial-return benchmark input failed to export with "Expected body_fn_output and
carried_inputs to have same metadata ... stride: (1,) vs (0,)": one of the tensors the
Newton loop carries was a batch-broadcast view. No AOT Inductor compile here (cheap).
"""

from __future__ import annotations

import torch

from neml2.solvers.newton import run_loop

F64 = torch.float64


class _Loop(torch.nn.Module):
    """Three passes of ``y <- y + s`` where ``s`` is a scalar broadcast over the batch."""

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        s_b = s.expand(x.shape[0])  # stride (0,): what tripped the export

        def cond(i, y, c):
            return i < 3

        def body(i, y, c):
            return i + 1, y + c, c

        return run_loop(cond, body, (torch.zeros((), dtype=torch.int64), x, s_b))[1]


def test_broadcast_carried_input_exports_and_runs():
    x = torch.arange(5, dtype=F64)
    s = torch.tensor(0.5, dtype=F64)
    b = torch.export.Dim("b", min=1)
    ep = torch.export.export(_Loop(), (x, s), dynamic_shapes=({0: b}, None), strict=False)
    torch.testing.assert_close(ep.module()(x, s), x + 1.5)
    # a batch of one through the same program (no 0/1 specialization)
    x1 = torch.tensor([2.0], dtype=F64)
    torch.testing.assert_close(ep.module()(x1, s), x1 + 1.5)


def test_eager_loop_is_the_same_function():
    x = torch.arange(5, dtype=F64)
    torch.testing.assert_close(_Loop()(x, torch.tensor(0.5, dtype=F64)), x + 1.5)
