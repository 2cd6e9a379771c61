"""neml2.solvers.linear: DenseLU against torch.linalg.solve, the 1x1 division included;
SchurComplement (dense, and grain by grain) against one dense solve."""

from __future__ import annotations

import pytest
import torch

from neml2.solvers.linear import DenseLU, SchurComplement
from neml2.tensors import FatalError


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


def _grain_system(G=3, sizes=(2, 1), ns=4, batch=(7, 3), seed=0):
    """``A (*batch, n, n)`` whose primary block (the first ``p = G * sum(sizes)`` rows and
    columns) couples each grain's entries only: variables of ``sizes`` entries per grain,
    flattened variable by variable and grain-major within one (the layout of an implicit
    update's unknowns), then ``ns`` secondary unknowns coupled to everything. Returns
    ``A``, ``p``, the grains' positions ``(G, m)`` and the ``(p, p)`` mask of the grains'
    blocks."""
    m = sum(sizes)
    p = G * m
    offsets = [G * sum(sizes[:i]) for i in range(len(sizes))]
    pos = [
        [o + g * k + j for o, k in zip(offsets, sizes, strict=True) for j in range(k)]
        for g in range(G)
    ]
    g = torch.Generator().manual_seed(seed)
    A = torch.rand(*batch, p + ns, p + ns, generator=g, dtype=torch.float64)
    inside = torch.zeros(p, p, dtype=torch.bool)
    for idx in pos:
        inside[torch.tensor(idx)[:, None], torch.tensor(idx)[None, :]] = True
    A[..., :p, :p] = torch.where(inside, A[..., :p, :p], 0.0)
    A = A + 2.0 * (p + ns) ** 0.5 * torch.eye(p + ns, dtype=torch.float64)
    return A, p, torch.tensor(pos), inside


@pytest.mark.parametrize("rhs", ["vector", "matrix"])
@pytest.mark.parametrize("grains", [False, True])
def test_schur_complement_equals_one_dense_solve(rhs, grains):
    """Block elimination, dense or grain by grain (``split(p, (rows, cols))``: here 3
    grains of 3 unknowns each, two variables of 2 and 1 entries per grain), gives the
    solution of one dense solve."""
    A, p, pos, _ = _grain_system()
    g = torch.Generator().manual_seed(1)
    b = torch.rand(*A.shape[:-1], *((2,) if rhs == "matrix" else ()), generator=g, dtype=A.dtype)
    schur = SchurComplement()
    schur.split(p, (pos, pos) if grains else None)
    x = schur.solve(A, b)
    want = torch.linalg.solve(A, b.unsqueeze(-1) if rhs == "vector" else b)
    torch.testing.assert_close(x, want.squeeze(-1) if rhs == "vector" else want, rtol=0, atol=1e-13)


def test_schur_grains_read_only_the_grain_blocks():
    """Grain by grain, the entries of the primary block outside the grains' blocks are
    not read (the caller vouches they are zero): garbage there changes nothing."""
    A, p, pos, inside = _grain_system(batch=(5,))
    b = torch.ones(5, A.shape[-1], dtype=A.dtype)
    schur = SchurComplement()
    schur.split(p, (pos, pos))
    x0 = schur.solve(A, b)
    junk = A.clone()
    junk[..., :p, :p] = torch.where(inside, A[..., :p, :p], 1e3)
    assert torch.equal(schur.solve(junk, b), x0)


def test_schur_without_split_is_an_error():
    with pytest.raises(FatalError, match="did not set the group sizes"):
        SchurComplement().solve(
            torch.eye(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
        )
