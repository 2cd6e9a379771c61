"""The Krylov linear solvers (GMRES, BiCGStab) and their preconditioners.

Batched random systems against ``torch.linalg.solve``, per-point stops and breakdown
guards, the compiled route, and inside a Newton solve of the J2 tutorial.
"""

import pathlib
import re

import pytest
import torch

from neml2.models._factory import load_input
from neml2.solvers import (
    GMRES,
    BiCGStab,
    BlockJacobiPreconditioner,
    FullPreconditioner,
    JacobiPreconditioner,
    NoPreconditioner,
)
from neml2.tensors import FatalError

SOLVERS = (GMRES, BiCGStab)
PRECONDITIONERS = (
    NoPreconditioner,
    JacobiPreconditioner,
    BlockJacobiPreconditioner,
    FullPreconditioner,
)
J2 = pathlib.Path(__file__).parents[3] / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"


def _make(solver, pre, **opts):
    p = pre()
    if isinstance(p, BlockJacobiPreconditioner):
        p.set_blocks((3, 6, 1, 2))  # n = 12
    return solver(preconditioner=p, **opts)


def _systems(cond: float, N=40, n=12, seed=0):
    """``N`` nonsymmetric ``n x n`` systems with condition number *cond*."""
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(N, n, n, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(N, n, n, generator=g, dtype=torch.float64))
    s = torch.logspace(0, -torch.log10(torch.tensor(cond)).item(), n, dtype=torch.float64)
    A = U @ torch.diag_embed(s) @ V.transpose(-1, -2)
    # nonuniform row scaling, as in a Newton matrix mixing stress and strain rows
    A = A * torch.logspace(0, 3, n, dtype=torch.float64).unsqueeze(-1)
    b = torch.randn(N, n, generator=g, dtype=torch.float64)
    return A, b


def _well_conditioned(N=40, n=12, seed=1):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(N, n, n, generator=g, dtype=torch.float64) + 2 * n**0.5 * torch.eye(
        n, dtype=torch.float64
    )
    return A, torch.randn(N, n, generator=g, dtype=torch.float64)


def _rel(x, y):
    return (torch.linalg.vector_norm(x - y, dim=-1) / torch.linalg.vector_norm(y, dim=-1)).max()


@pytest.mark.parametrize("pre", PRECONDITIONERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("solver", SOLVERS, ids=lambda c: c.__name__)
def test_well_conditioned_matches_direct(solver, pre):
    A, b = _well_conditioned()
    x = _make(solver, pre, rel_tol=1e-12).solve(A, b)
    # relative error at most 1e-10 per point (cond(A) ~ 10)
    assert _rel(x, torch.linalg.solve(A, b)) <= 1e-10


@pytest.mark.parametrize("pre", PRECONDITIONERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("solver", SOLVERS, ids=lambda c: c.__name__)
def test_ill_conditioned_matches_direct(solver, pre):
    A, b = _systems(cond=1e4)
    x = _make(solver, pre, rel_tol=1e-10).solve(A, b)
    # the true residual meets rel_tol = 1e-10 at every point; with the row scaling
    # cond(A) reaches 2e6, and the error, bounded by cond x 1e-10, is held to 1e-8
    # (seen: at most 8e-10)
    r = b - (A @ x.unsqueeze(-1)).squeeze(-1)
    assert _rel(r + b, b) <= 1e-10
    assert _rel(x, torch.linalg.solve(A, b)) <= 1e-8


def test_gmres_restarts():
    A, b = _well_conditioned()
    s = GMRES(restart=3, rel_tol=1e-12)
    assert _rel(s.solve(A, b), torch.linalg.solve(A, b)) <= 1e-10
    # too few iterations: not converged, but finite
    x = GMRES(restart=3, max_its=3, rel_tol=1e-12).solve(A, b)
    assert torch.isfinite(x).all() and ~(_rel(x, torch.linalg.solve(A, b)) <= 1e-6)


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda c: c.__name__)
def test_default_tolerance_is_relative(solver):
    A, b = _well_conditioned()
    x = solver().solve(A, b)  # rel_tol = 1e-4
    r = b - (A @ x.unsqueeze(-1)).squeeze(-1)
    assert _rel(r + b, b) <= 1e-4


@pytest.mark.parametrize("pre", PRECONDITIONERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("solver", SOLVERS, ids=lambda c: c.__name__)
def test_converged_and_singular_points_stay_finite(solver, pre):
    A, b = _well_conditioned(N=4)
    b[1] = 0.0  # converged before it starts
    A[2] = 0.0  # singular: no step can be taken
    x = _make(solver, pre, rel_tol=1e-12, max_its=50).solve(A, b)
    assert torch.isfinite(x).all()
    assert (x[1] == 0).all() and (x[2] == 0).all()
    ok = [0, 3]
    assert _rel(x[ok], torch.linalg.solve(A[ok], b[ok])) <= 1e-10


def test_bicgstab_recovers_from_breakdown():
    """``b = e_n`` with ``A_nn = 0``: the first ``r̂ · A p`` is exactly 0."""
    A = torch.eye(3, dtype=torch.float64).repeat(2, 1, 1)
    A[:, 0, 2] = 0.5
    A[:, 2, 0] = 2.0
    A[:, 2, 2] = 0.0
    b = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64).repeat(2, 1)
    x = BiCGStab(rel_tol=1e-12).solve(A, b)
    assert _rel(x, torch.linalg.solve(A, b)) <= 1e-12


def test_matrix_columns_and_operator():
    A, b = _well_conditioned(N=5)
    B = torch.stack([b, 2 * b], dim=-1)
    X = GMRES(rel_tol=1e-12).solve(A, B)
    assert _rel(X.transpose(-1, -2), torch.linalg.solve(A, B).transpose(-1, -2)) <= 1e-10
    # matrix-free: A only as a product
    x = BiCGStab(rel_tol=1e-12).solve(lambda v: (A @ v.unsqueeze(-1)).squeeze(-1), b)
    assert _rel(x, torch.linalg.solve(A, b)) <= 1e-10
    with pytest.raises(FatalError, match="JacobiPreconditioner needs the matrix"):
        GMRES(preconditioner=JacobiPreconditioner()).solve(lambda v: v, b)


def test_block_sizes_must_match():
    p = BlockJacobiPreconditioner()
    p.set_blocks((2, 2))
    with pytest.raises(FatalError, match="do not sum to the system size 5"):
        GMRES(preconditioner=p).solve(torch.eye(5).expand(2, 5, 5), torch.ones(2, 5))


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda c: c.__name__)
def test_compiled_matches_eager(solver):
    A, b = _well_conditioned(N=16, n=3)
    s = solver(preconditioner=JacobiPreconditioner(), rel_tol=1e-12)
    eager = s.solve(A, b)
    compiled = torch.compile(s.solve, fullgraph=True, dynamic=False)(A, b)
    assert _rel(eager, torch.linalg.solve(A, b)) <= 1e-10
    assert _rel(compiled, eager) <= 1e-12


REFERENCE_SOLVERS = """\
[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-10
    rel_tol = 1e-8
    max_its = 20
    linear_solver = 'gmres'
  []
  [gmres]
    type = GMRES
    preconditioner = 'bjac'
    cache_strategy = 'chord'
  []
  [bjac]
    type = BlockJacobiPreconditioner
  []
  [bicg]
    type = BiCGStab
    max_its = 200
    abs_tol = 1e-14
    rel_tol = 1e-10
    preconditioner = 'jac'
  []
  [jac]
    type = JacobiPreconditioner
  []
  [full]
    type = FullPreconditioner
  []
  [none]
    type = NoPreconditioner
  []
[]"""


def _j2_with(tmp_path, solvers: str, name: str):
    text = J2.read_text()
    text = re.sub(r"\[Solvers\].*?\n\[\]", lambda _: solvers, text, count=1, flags=re.S)
    p = tmp_path / f"{name}.i"
    p.write_text(text)
    return p


def test_reference_style_input_loads(tmp_path):
    ctx = load_input(_j2_with(tmp_path, REFERENCE_SOLVERS, "ref"))
    newton = ctx.object("Solvers", "newton")
    assert isinstance(newton.linear, GMRES)
    assert isinstance(newton.linear.preconditioner, BlockJacobiPreconditioner)
    assert newton.linear.opts["restart"] == 40 and newton.linear.opts["rel_tol"] == 1e-4
    assert newton.linear.opts["cache_strategy"] == "chord"
    bicg = ctx.object("Solvers", "bicg")
    assert isinstance(bicg.preconditioner, JacobiPreconditioner)
    assert bicg.opts["max_its"] == 200 and bicg.opts["abs_tol"] == 1e-14


def test_preconditioner_must_be_one(tmp_path):
    bad = REFERENCE_SOLVERS.replace("preconditioner = 'bjac'", "preconditioner = 'bicg'")
    ctx = load_input(_j2_with(tmp_path, bad, "bad"))
    with pytest.raises(FatalError, match="'bicg' is not a preconditioner"):
        ctx.object("Solvers", "gmres")
    bad = REFERENCE_SOLVERS.replace("'chord'", "'sometimes'")
    ctx = load_input(_j2_with(tmp_path, bad, "bad2"))
    with pytest.raises(FatalError, match="cache_strategy"):
        ctx.object("Solvers", "gmres")


def _run_j2(path):
    ctx = load_input(path)
    driver = ctx.object("Drivers", "uniaxial")
    assert driver.run()
    return driver.result


@pytest.mark.needs_sibling  # the tutorial's TransientDriver (neml2.drivers): run by integration
@pytest.mark.parametrize(
    ("linear", "pre"),
    [
        ("GMRES", "BlockJacobiPreconditioner"),
        ("GMRES", "NoPreconditioner"),
        ("BiCGStab", "JacobiPreconditioner"),
        ("BiCGStab", "FullPreconditioner"),
    ],
)
def test_newton_with_krylov_matches_dense_lu(tmp_path, linear, pre):
    ref = _run_j2(J2)
    solvers = (
        "[Solvers]\n  [newton]\n    type = Newton\n    abs_tol = 1e-10\n    rel_tol = 1e-8\n"
        "    max_its = 20\n    linear_solver = 'ks'\n  []\n"
        f"  [ks]\n    type = {linear}\n    rel_tol = 1e-12\n    preconditioner = 'pc'\n  []\n"
        f"  [pc]\n    type = {pre}\n  []\n[]"
    )
    res = _run_j2(_j2_with(tmp_path, solvers, "krylov"))
    keys = [k for k in ref if k.startswith("output.") and ref[k].is_floating_point()]
    assert keys and set(keys) <= set(res)
    for k in keys:
        # the converged state to 1e-9 of its scale (Newton's rel_tol is 1e-8)
        scale = ref[k].abs().max().clamp(min=1e-12)
        assert (res[k] - ref[k]).abs().max() <= 1e-9 * scale, k
