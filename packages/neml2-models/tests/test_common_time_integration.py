"""Backward/forward Euler, variable rates and the implicit exponential rotation residual."""

from __future__ import annotations

import textwrap

import pytest
import torch
from _op_count import CountOps

from neml2.models import load_model
from neml2.models.common.time_integration import (
    R2BackwardEulerTimeIntegration,
    ScalarBackwardEulerTimeIntegration,
    ScalarForwardEulerTimeIntegration,
    SR2BackwardEulerTimeIntegration,
    SR2ForwardEulerTimeIntegration,
    VecForwardEulerTimeIntegration,
    WR2ImplicitExponentialTimeIntegration,
)
from neml2.models.common.variable_rate import ScalarVariableRate, SR2VariableRate
from neml2.tensors import SR2, FatalError, Scalar


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def _times(n, seed=0):
    tn = _rand(n, seed=seed).abs()
    return tn + 0.1 + _rand(n, seed=seed + 1).abs(), tn


def test_default_names_follow_the_reference():
    m = SR2BackwardEulerTimeIntegration(variable="plastic_strain")
    assert m.input_names == [
        "plastic_strain",
        "plastic_strain~1",
        "plastic_strain_rate",
        "t",
        "t~1",
    ]
    assert m.output_names == ["plastic_strain_residual"]
    f = SR2ForwardEulerTimeIntegration(variable="ep", time="time")
    assert f.input_names == ["ep~1", "ep_rate", "time", "time~1"] and f.output_names == ["ep"]
    r = SR2VariableRate(variable="E")
    assert r.input_names == ["E", "E~1", "t", "t~1"] and r.output_names == ["E_rate"]
    w = WR2ImplicitExponentialTimeIntegration(variable="orientation")
    assert w.input_names == ["orientation", "orientation~1", "orientation_rate", "t", "t~1"]
    assert w.output_names == ["orientation_residual"]


@pytest.mark.parametrize(
    ("cls", "base"),
    [(ScalarBackwardEulerTimeIntegration, ()), (R2BackwardEulerTimeIntegration, (3, 3))],
)
def test_backward_euler_matches_hand_formula(cls, base):
    m = cls(variable="x")
    n = 8
    s, sn, sr = (_rand(n, *base, seed=i) for i in (1, 2, 3))
    t, tn = _times(n, seed=4)
    out, jac = m.jacobian({"x": s, "x~1": sn, "x_rate": sr, "t": t, "t~1": tn})
    dt = (t - tn).reshape(n, *([1] * len(base)))
    torch.testing.assert_close(out["x_residual"], s - sn - dt * sr)
    torch.testing.assert_close(jac["x_residual"]["t"], -sr)
    torch.testing.assert_close(jac["x_residual"]["t~1"], sr)


def test_backward_euler_takes_a_rate_tangent_over_without_negating_it_again():
    """A tangent of the rate on a seed the variable lacks costs one product (by
    ``t_n - t``), no negation pass; the residual is bit for bit ``s - s_n - dt * rate``."""
    m = SR2BackwardEulerTimeIntegration(variable="x")
    n = 6
    s, sn, sr = (_rand(n, 6, seed=i) for i in (1, 2, 3))
    t, tn = _times(n, seed=4)
    dsr = _rand(n, 6, seed=5)
    with CountOps() as ops:
        out, d = m.jvp({"x": s, "x~1": sn, "x_rate": sr, "t": t, "t~1": tn}, {"x_rate": dsr})
    dt = (t - tn)[:, None]
    torch.testing.assert_close(out["x_residual"], s - sn - dt * sr, rtol=0, atol=0)
    torch.testing.assert_close(d["x_residual"], -dt * dsr, rtol=0, atol=0)
    assert ops["neg"] == 0, ops.counts


def test_forward_euler_matches_hand_formula():
    m = VecForwardEulerTimeIntegration(variable="v")
    sn, sr = _rand(5, 3, seed=1), _rand(5, 3, seed=2)
    t, tn = _times(5, seed=3)
    out = m.forward({"v~1": sn, "v_rate": sr, "t": t, "t~1": tn})["v"]
    torch.testing.assert_close(out, sn + (t - tn)[:, None] * sr)
    s = ScalarForwardEulerTimeIntegration(variable="foo")
    got = s.forward({"foo~1": 0.0, "foo_rate": -0.3, "t": 1.3, "t~1": 1.1})["foo"]
    assert float(got) == pytest.approx(-0.06)


def test_variable_rate_matches_hand_formula():
    m = ScalarVariableRate(variable="x", time="time")
    s, sn = _rand(6, seed=1), _rand(6, seed=2)
    t, tn = _times(6, seed=3)
    out, jac = m.jacobian({"x": s, "x~1": sn, "time": t, "time~1": tn})
    torch.testing.assert_close(out["x_rate"], (s - sn) / (t - tn))
    torch.testing.assert_close(jac["x_rate"]["time"], -(s - sn) / (t - tn) ** 2)


def test_sub_batched_per_grain_state_with_global_time():
    """Per-grain SR2 state (sub-batch 5) integrated with a time shared by all grains."""
    m = SR2BackwardEulerTimeIntegration(variable="Ee")
    s, sn, sr = (SR2(_rand(3, 5, 6, seed=i), 1) for i in (1, 2, 3))
    t, tn = (Scalar(x) for x in _times(3, seed=4))
    r = m(s, sn, sr, t, tn)
    assert r.sub_batch_ndim == 1 and r.shape == (3, 5, 6)
    dt = (t.data - tn.data)[:, None, None]
    torch.testing.assert_close(r.data, s.data - sn.data - dt * sr.data)


def _mrp_matrix(r):
    rr = (r * r).sum(-1)[..., None, None]
    W = torch.zeros(*r.shape[:-1], 3, 3, dtype=r.dtype)
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -r[..., 2], r[..., 1], -r[..., 0]
    W = W - W.transpose(-1, -2)
    eye = torch.eye(3, dtype=r.dtype)
    return eye + (8 * W @ W + 4 * (1 - rr) * W) / (1 + rr) ** 2


def test_implicit_exponential_residual_matches_rotation_algebra():
    """``s - q(dt w) ∘ s_n`` checked on rotation matrices, with the reference library's
    increment ``q(v) = v tan(x/2) / (2 x cos(x/2))``, ``x = |v|²`` written out by hand."""
    m = WR2ImplicitExponentialTimeIntegration(variable="q")
    n = 6
    sn = 0.2 * _rand(n, 3, seed=1)
    w = 0.2 * _rand(n, 3, seed=2)  # total angle well below pi (no shadow-set switch)
    t, tn = _times(n, seed=3)
    # choose s so that the residual vanishes: s = exp(dt w) ∘ s_n, built by hand
    dt = (t - tn)[:, None]
    v = w * dt
    x = (v * v).sum(-1, keepdim=True)
    inc = v * torch.tan(x / 2) / (2 * x * torch.cos(x / 2))  # MRP of the increment
    R = _mrp_matrix(inc) @ _mrp_matrix(sn)
    # MRP of R via its quaternion (angle < pi here)
    qw = 0.5 * torch.sqrt(1 + R.diagonal(dim1=-2, dim2=-1).sum(-1))
    axial = [R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]]
    qv = torch.stack(axial, -1)
    s = qv / (4 * qw[:, None]) / (1 + qw[:, None])
    out = m.forward({"q": s, "q~1": sn, "q_rate": w, "t": t, "t~1": tn})["q_residual"]
    torch.testing.assert_close(out, torch.zeros_like(out), atol=1e-12, rtol=0)
    # and the residual is linear in s
    out2 = m.forward({"q": s + 0.1, "q~1": sn, "q_rate": w, "t": t, "t~1": tn})["q_residual"]
    torch.testing.assert_close(out2, torch.full_like(out2, 0.1))


def test_rotation_increment_is_the_exponential_map_to_first_order():
    """The reference's increment and the exact map ``v tan(|v|/4)/|v|`` differ at O(|v|³)."""
    from neml2.models.common.time_integration import rotation_increment
    from neml2.tensors import WR2

    d = torch.nn.functional.normalize(_rand(4, 3, seed=5), dim=-1)
    for eps in (1e-1, 1e-2):
        v = eps * d
        q = rotation_increment(WR2(v)).data
        th = v.norm(dim=-1, keepdim=True)
        exact = v * torch.tan(th / 4) / th
        torch.testing.assert_close(q, exact, atol=eps**3, rtol=0)
        assert (q - exact).abs().max() > 0  # not the same map


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def test_variable_is_required_and_may_not_equal_time(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [a]
            type = SR2BackwardEulerTimeIntegration
          []
          [b]
            type = ScalarVariableRate
            variable = 't'
          []
        []
        """,
    )
    with pytest.raises(FatalError, match="missing the required option 'variable'"):
        load_model(p, "a")
    with pytest.raises(FatalError, match=r"input\.i:5.*\[Models/b\].*'t' is declared twice"):
        load_model(p, "b")


def test_unknown_option_is_reported(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [a]
            type = SR2BackwardEulerTimeIntegration
            variable = 'x'
            old_varible = 'x_old'
          []
        []
        """,
    )
    with pytest.raises(FatalError, match=r"input\.i:5.*unknown option 'old_varible'.*did you mean"):
        load_model(p, "a")
