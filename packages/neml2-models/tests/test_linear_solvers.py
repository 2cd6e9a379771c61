"""neml2.solvers.linear: DenseLU against torch.linalg.solve, the 1x1 division included."""

from __future__ import annotations

import pytest
import torch

from neml2.solvers.linear import DenseLU


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("rhs", ["vector", "matrix"])
def test_dense_lu_solves(n, rhs):
    g = torch.Generator().manual_seed(n)
    A = torch.rand(7, 3, n, n, generator=g, dtype=torch.float64) + n * torch.eye(n)
    b = torch.rand(7, 3, n, *((2,) if rhs == "matrix" else ()), generator=g, dtype=A.dtype)
    x = DenseLU().solve(A, b)
    assert x.shape == b.shape
    want = torch.linalg.solve(A, b.unsqueeze(-1) if rhs == "vector" else b)
    torch.testing.assert_close(x, want.squeeze(-1) if rhs == "vector" else want)


@pytest.mark.parametrize("n", [1, 3])
def test_dense_lu_broadcasts_batches(n):
    """One matrix for every right-hand side, as torch.linalg.solve broadcasts."""
    A = torch.eye(n, dtype=torch.float64) * 2.0
    b = torch.arange(4.0 * n, dtype=torch.float64).reshape(4, n)
    torch.testing.assert_close(DenseLU().solve(A.expand(1, n, n), b), b / 2)


@pytest.mark.parametrize("n", [1, 3])
def test_dense_lu_singular_point_is_non_finite(n):
    """A singular matrix at one point: non-finite there, no exception, others exact."""
    A = torch.eye(n, dtype=torch.float64).repeat(2, 1, 1)
    A[1] = 0.0
    x = DenseLU().solve(A, torch.ones(2, n, dtype=torch.float64))
    torch.testing.assert_close(x[0], torch.ones(n, dtype=torch.float64))
    assert not torch.isfinite(x[1]).all()
