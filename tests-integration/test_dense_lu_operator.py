"""neml2-models' dense solver with the runtime installed: DenseLU calls
neml2::dense_lu_solve (libneml2, cpp/ops) where it applies and torch.linalg.solve_ex
where it does not (a gradient, vmap), and an implicit model gives the same results
either way. The operator's own tests are neml2-aoti-runtime's test_dense_lu.py; the
compiled routes call it inside their graphs (test_routes)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2
import neml2.solvers.linear as linear
from neml2.solvers.linear import DenseLU

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def calls(monkeypatch):
    """How many times DenseLU called the operator during the test."""
    op = linear.dense_lu_operator()
    assert op is not None, "neml2-aoti-runtime is installed here: the operator must exist"
    seen = []

    def counted(A, B):
        seen.append(tuple(A.shape))
        return op(A, B)

    monkeypatch.setattr(linear, "dense_lu_operator", lambda: counted)
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


@pytest.mark.parametrize("workload", ["perzyna", "chaboche2"])
def test_implicit_model_agrees_with_solve_ex(calls, monkeypatch, workload):
    """One implicit step of a benchmark workload (7 and 19 unknowns), operator vs LAPACK."""
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

    with_op = solve()
    assert calls, "the Newton solve never called the operator"
    monkeypatch.setattr(linear, "dense_lu_operator", lambda: None)
    without = solve()
    for a, b in zip(with_op, without, strict=True):
        assert a.numel() and torch.isfinite(a).all()
        err = ((a - b).abs().max() / b.abs().max().clamp_min(1e-3)).item()
        assert err <= 1e-10, err
