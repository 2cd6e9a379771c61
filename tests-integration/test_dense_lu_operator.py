"""neml2-models' dense solver with the runtime installed: DenseLU calls
neml2::dense_lu_solve (libneml2, cpp/ops) where it applies and torch.linalg.solve_ex
where it does not (a gradient, vmap), and an implicit model gives the same results
either way; an eager Newton step hands it its Jacobian as blocks
(neml2::dense_lu_solve_blocks), bitwise the same as assembled. The operators' own tests
are neml2-aoti-runtime's test_dense_lu.py; the compiled routes call it inside their
graphs (test_routes)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2
import neml2.solvers.linear as linear
from neml2.models.implicit_update import ImplicitUpdate
from neml2.solvers._block_jacobian import BlockJacobian, as_dense
from neml2.solvers.linear import DenseLU

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def calls(monkeypatch):
    """The calls DenseLU made to the operators during the test: ``A``'s shape for
    ``dense_lu_solve``, ``("blocks", N, n)`` for ``dense_lu_solve_blocks``."""
    op = linear.dense_lu_operator()
    assert op is not None, "neml2-aoti-runtime is installed here: the operator must exist"
    blocks_op = linear._blocks_operator
    assert blocks_op is not None
    seen = []

    def counted(A, B):
        seen.append(tuple(A.shape))
        return op(A, B)

    def counted_blocks(blocks, rows, cols, B):
        seen.append(("blocks", B.shape[0], B.shape[1]))
        return blocks_op(blocks, rows, cols, B)

    monkeypatch.setattr(linear, "dense_lu_operator", lambda: counted)
    monkeypatch.setattr(linear, "_blocks_operator", counted_blocks)
    return seen


def _systems(batch, n, seed=0, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(*batch, n, n, generator=g, dtype=torch.float64) + 2 * n**0.5 * torch.eye(n)
    b = torch.randn(*batch, n, generator=g, dtype=torch.float64)
    return A.requires_grad_(requires_grad), b


@pytest.mark.parametrize("n", [2, 7, 19])
def test_dense_lu_calls_the_operator(calls, n):
    A, b = _systems((5, 3), n)
    x = DenseLU().solve(A, b)
    assert calls == [(5, 3, n, n)]
    want = torch.linalg.solve(A, b)
    assert ((x - want).abs().max() <= 1e-12 * want.abs().max()).item()


def test_one_unknown_stays_a_division(calls):
    A, b = _systems((4,), 1)
    DenseLU().solve(A, b)
    assert calls == []


def test_gradient_falls_back_to_solve_ex(calls):
    A, b = _systems((3,), 4, requires_grad=True)
    DenseLU().solve(A, b).sum().backward()
    assert calls == []  # the operator has no autograd formula
    A2 = A.detach().clone().requires_grad_(True)
    torch.linalg.solve(A2, b).sum().backward()
    torch.testing.assert_close(A.grad, A2.grad)


def test_vmap_falls_back_to_solve_ex(calls):
    A, b = _systems((6,), 3)
    x = torch.func.vmap(DenseLU().solve)(A, b)
    assert calls == []
    torch.testing.assert_close(x, torch.linalg.solve(A, b))


def _workload_step(workload):
    """A benchmark workload's model and one implicit step of it on 64 points (from the
    elastic range into plastic flow: the points take different numbers of Newton
    iterations), as a function returning the outputs' data."""
    model = neml2.load_model(ROOT / "benchmarks" / "suite" / "workloads" / f"{workload}.i", "model")
    n = 64
    frac = torch.linspace(0.2, 1.0, n, dtype=torch.float64).unsqueeze(-1)
    strain = frac * torch.tensor([0.1, -0.05, -0.05, 0, 0, 0], dtype=torch.float64)
    values = {
        name: torch.zeros((n, *t.BASE_SHAPE), dtype=torch.float64)
        for name, t in model.input_spec.items()
    }
    values["strain"] = strain
    values["t"] = (
        torch.full((n,), 1.0e-3, dtype=torch.float64)
        if workload == "chaboche2"
        else frac.squeeze(-1)
    )
    args = [model.input_spec[name](values[name]) for name in model.input_spec]

    def solve():
        with torch.no_grad():
            out = model(*args)
        return [o.data for o in (out if isinstance(out, tuple) else (out,))]

    return model, solve


@pytest.mark.parametrize("workload", ["perzyna", "chaboche2"])
def test_implicit_model_agrees_with_solve_ex(calls, monkeypatch, workload):
    """One implicit step of a benchmark workload (7 and 19 unknowns), operator vs LAPACK."""
    _, solve = _workload_step(workload)
    with_op = solve()
    assert calls, "the Newton solve never called the operator"
    monkeypatch.setattr(linear, "dense_lu_operator", lambda: None)
    without = solve()
    for a, b in zip(with_op, without, strict=True):
        assert a.numel() and torch.isfinite(a).all()
        err = ((a - b).abs().max() / b.abs().max().clamp_min(1e-3)).item()
        assert err <= 1e-10, err


@pytest.mark.parametrize("workload", ["perzyna", "chaboche4"])
def test_eager_newton_solves_from_the_blocks(calls, workload):
    """Eagerly, the Newton steps hand DenseLU their Jacobian as its blocks (no assembled
    matrix), and the results are bitwise those of the assembled one; points leave the
    solve at different iterations (the blocks' rows of the others are taken)."""
    model, solve = _workload_step(workload)
    updates = [m for m in model.modules() if isinstance(m, ImplicitUpdate)]
    assert updates and all(u._block_lu is not None for u in updates)
    blocks = solve()
    n = {"perzyna": 7, "chaboche4": 31}[workload]
    assert calls and all(c[0] == "blocks" and c[2] == n for c in calls), calls
    assert len({c[1] for c in calls}) > 1, "no point left the solve early: not the subset path"
    calls.clear()
    for u in updates:
        u._block_lu = None
    dense = solve()
    assert calls and all(c[0] != "blocks" for c in calls)
    for a, b in zip(blocks, dense, strict=True):
        assert a.numel() and torch.equal(a, b)


def test_block_jacobian_as_dense_lu_sees_it():
    """A BlockJacobian (a left-out block, a block shared by every point): its matrix,
    its points' rows, and DenseLU's solve with it."""
    g = torch.Generator().manual_seed(3)
    N, cuts = 11, [(0, 6), (6, 1), (7, 6)]
    blocks = []
    A = torch.zeros(N, 13, 13, dtype=torch.float64)
    for r0, rs in cuts:
        for c0, cs in cuts:
            if (r0, c0) == (6, 0):
                continue
            if (r0, c0) == (0, 7):
                d = torch.randn(cs, 1, rs, generator=g, dtype=torch.float64).expand(cs, N, rs)
            else:
                d = torch.randn(cs, N, rs, generator=g, dtype=torch.float64)
                if r0 == c0:
                    d = d + 8.0 * torch.eye(rs, dtype=torch.float64).unsqueeze(1)
            A[:, r0 : r0 + rs, c0 : c0 + cs] = d.permute(1, 2, 0)
            blocks.append((r0, c0, d))
    J = BlockJacobian(blocks, 13, N)
    assert J.shape == (N, 13, 13) and J.dtype == torch.float64
    assert torch.equal(J.dense(), A) and torch.equal(as_dense(J), A)
    idx = torch.tensor([9, 0, 4])
    sub = J[idx]
    assert sub.points == 3 and torch.equal(sub.dense(), A[idx])
    assert any(d.stride(1) == 0 for _, _, d in sub.blocks)  # the shared block stays shared
    b = torch.randn(N, 13, generator=g, dtype=torch.float64)
    x = DenseLU().solve(J, b)
    assert torch.equal(x, DenseLU().solve(A, b))
    want = torch.linalg.solve(A, b)
    assert ((x - want).abs().max() <= 1e-12 * want.abs().max()).item()
