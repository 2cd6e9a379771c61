"""NewtonWithLineSearch (the reference library's backtracking rule) and the crystal-plasticity
warm-up predictor."""

from __future__ import annotations

import pytest
import torch

from neml2.models import load_input
from neml2.models.predictors import CrystalPlasticityStrainPredictor
from neml2.solvers import Newton, NewtonWithLineSearch
from neml2.tensors import SR2, FatalError, Scalar

torch.set_default_dtype(torch.float64)


def _atan(u):
    """r = atan(u) per component: full Newton steps diverge from |u0| > 1.39."""
    r = torch.atan(u)
    J = torch.diag_embed(1.0 / (1.0 + u * u))
    return r, J


def _hand_step(u, c=1e-3, cut=2.0, miter=5):
    """One reference line-search step on a single scalar system, written out by hand."""
    r0 = torch.atan(u)
    du = -r0 * (1.0 + u * u)
    crit0 = float(r0 * r0)
    alpha, last = 1.0, None
    for _ in range(1, miter):
        up = u + alpha * du
        rp = torch.atan(up)
        last = up
        if float(rp * rp) <= crit0 + 2.0 * c * alpha * float(r0 * du):
            break
        alpha /= cut
    return last


def test_step_matches_hand_rule_per_point():
    s = NewtonWithLineSearch(max_linesearch_iterations=5, max_its=1)
    u = torch.tensor([[0.5], [2.0], [5.0], [-20.0]])
    res = s.solve(_atan, u)
    assert int(res.iterations) == 1
    for i in range(u.shape[0]):
        assert torch.allclose(res.u[i], _hand_step(u[i]), rtol=0, atol=1e-14)
    # the reported residual belongs to the returned point
    torch.testing.assert_close(res.residual_norm, torch.atan(res.u).norm(dim=-1), rtol=0, atol=0)


def test_line_search_converges_where_plain_newton_diverges():
    u0 = torch.tensor([[3.0, -4.0], [0.1, 10.0]])
    res = NewtonWithLineSearch(max_linesearch_iterations=10).solve(_atan, u0)
    assert bool(res.converged.all())
    assert res.u.abs().max() < 1e-8
    plain = Newton(max_its=10).solve(_atan, u0)
    assert not bool(plain.converged.all())


class _Counted:
    """``_atan`` as ``fn`` (r and J) and as ``residual`` (r alone), counting calls."""

    def __init__(self):
        self.fn_calls = 0
        self.residual_calls = 0

    def fn(self, u):
        self.fn_calls += 1
        return _atan(u)

    def residual(self, u):
        self.residual_calls += 1
        return torch.atan(u)


def test_eager_search_evaluates_the_jacobian_only_where_it_is_used():
    """Eagerly, a rejected trial point costs a residual evaluation only: ``J`` is evaluated
    at u0 and once per iteration (at the accepted point), with the same iterates,
    iteration count and residuals as a search that evaluates ``J`` at every trial."""
    u0 = torch.tensor([[3.0, -4.0], [0.1, 10.0], [2.0, 0.5]])
    s = NewtonWithLineSearch(max_linesearch_iterations=10, max_its=30)
    every = _Counted()
    want = s.solve(every.fn, u0)
    c = _Counted()
    got = s.solve(c.fn, u0, residual=c.residual)
    its = int(want.iterations)
    assert int(got.iterations) == its > 0
    for a, b in zip(
        (got.u, got.residual_norm, got.initial_norm, got.converged),
        (want.u, want.residual_norm, want.initial_norm, want.converged),
        strict=True,
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # these points need cut-backs: with J at every trial there are many more evaluations
    assert every.fn_calls > its + 3
    # J: at u0, at every accepted point, plus at most one first trial per iteration that
    # was evaluated with J because the search before it accepted alpha = 1 everywhere
    assert c.fn_calls <= 1 + 2 * its and c.fn_calls < every.fn_calls
    assert c.fn_calls + c.residual_calls <= every.fn_calls + its


def test_strong_wolfe_and_option_errors(tmp_path):
    u0 = torch.tensor([[3.0]])
    res = NewtonWithLineSearch(linesearch_type="STRONG_WOLFE").solve(_atan, u0)
    assert bool(res.converged.all())
    f = tmp_path / "bad.i"
    f.write_text(
        "[Solvers]\n  [n]\n    type = NewtonWithLineSearch\n    linesearch_type = WOLFE\n  []\n[]\n"
    )
    with pytest.raises(FatalError, match=r"bad\.i:4.*linesearch_type"):
        load_input(f).object("Solvers", "n")


@pytest.mark.parametrize("spelling", ["check_negative_criterion", "check_negative_critertion"])
def test_negative_criterion_option_spellings(tmp_path, spelling, capsys):
    """The reference library's option name (``check_negative_criterion``) and the older
    NEML2 spelling both switch on the warning."""
    f = tmp_path / "ls.i"
    f.write_text(
        f"[Solvers]\n  [n]\n    type = NewtonWithLineSearch\n    {spelling} = true\n"
        "    linesearch_type = STRONG_WOLFE\n    linesearch_stopping_criteria = 2\n  []\n[]\n"
    )
    s = load_input(f).object("Solvers", "n")
    assert s.opts[spelling] is True
    # STRONG_WOLFE with c = 2: crit = (1 - 2 alpha) |r0|^2 < 0 at alpha = 1
    s.solve(_atan, torch.tensor([[3.0]]))
    assert "line search criterion became negative" in capsys.readouterr().err


def test_reference_defaults():
    s = NewtonWithLineSearch()
    assert s.opts["max_its"] == 25  # the reference library's default
    assert s.opts["max_linesearch_iterations"] == 10
    assert s.opts["linesearch_cutback"] == 2.0
    assert s.opts["linesearch_stopping_criteria"] == 1e-3


def test_cp_strain_predictor_formula_batched():
    g = torch.Generator().manual_seed(3)
    D = SR2(torch.randn(4, 6, generator=g))
    t = Scalar(torch.rand(4, generator=g) + 1.0)
    tn = Scalar(torch.rand(4, generator=g))
    m = CrystalPlasticityStrainPredictor(scale=0.1)
    # the previous elastic strain: small at points 0-1 (the increment is added), over
    # the threshold (1e-3) at points 2-3 (kept as it is)
    ee1 = SR2(torch.randn(4, 6, generator=g))
    ee1.data[:2] *= 1e-5 / ee1.data[:2].norm(dim=-1, keepdim=True)
    ee1.data[2:] *= 2e-3 / ee1.data[2:].norm(dim=-1, keepdim=True)
    out = m(D, t, tn, ee1)
    expect = 0.1 * D.data * (t.data - tn.data).unsqueeze(-1) + ee1.data
    expect[2:] = ee1.data[2:]
    assert list(m.input_spec) == ["deformation_rate", "t", "t~1", "elastic_strain~1"]
    assert torch.allclose(out.data, expect, rtol=1e-14, atol=0)


def test_cp_strain_predictor_scale_required():
    with pytest.raises(FatalError, match="scale"):
        CrystalPlasticityStrainPredictor()
