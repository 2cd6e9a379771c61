"""Warm starts of implicit updates: cold-start predictors, rate condensation, coordinate
descent, and the forward-Euler renames (old_variable, rate) they are built from."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_input, load_model
from neml2.models.common.time_integration import (
    ScalarBackwardEulerTimeIntegration,
    SR2ForwardEulerTimeIntegration,
)
from neml2.models.predictors import ConstantExtrapolationPredictor, LinearExtrapolationPredictor
from neml2.tensors import FatalError

F64 = torch.float64


def _write(tmp_path, text: str):
    p = tmp_path / "m.i"
    p.write_text(textwrap.dedent(text))
    return p


# ------------------------------------------------------------------ forward Euler renames
def test_forward_euler_old_variable_and_rate():
    m = SR2ForwardEulerTimeIntegration(
        variable="stress_trial", old_variable="stress~1", rate="stress_rate"
    )
    assert m.input_names == ["stress~1", "stress_rate", "t", "t~1"]
    assert m.output_names == ["stress_trial"]
    s_old = torch.rand(4, 6, dtype=F64)
    rate = torch.rand(4, 6, dtype=F64)
    t, t1 = torch.full((4,), 2.0, dtype=F64), torch.full((4,), 1.5, dtype=F64)
    out = m.forward({"stress~1": s_old, "stress_rate": rate, "t": t, "t~1": t1})
    torch.testing.assert_close(out["stress_trial"], s_old + 0.5 * rate)
    b = ScalarBackwardEulerTimeIntegration(variable="x", rate="xdot")
    assert b.input_names == ["x", "x~1", "xdot", "t", "t~1"]


# ------------------------------------------------------------------ cold starts
def _cold_inputs(t1, t2):
    n = 3
    return {
        "s~1": torch.full((n, 6), 1.0, dtype=F64),
        "g~1": torch.full((n,), 2.0, dtype=F64),
        "t": torch.full((n,), 1.0, dtype=F64),
        "t~1": torch.tensor(t1, dtype=F64),
        "t~2": torch.tensor(t2, dtype=F64),
        "s_cold": torch.full((n, 6), -1.0, dtype=F64),
    }


def test_constant_predictor_cold_start_per_point():
    m = ConstantExtrapolationPredictor(unknowns_SR2=["s"], unknowns_Scalar=["g"], cold=["s:s_cold"])
    assert m.input_names == ["g~1", "s~1", "t", "t~1", "t~2", "s_cold"]
    # point 0: no history (t~1 = t~2) -> cold value; points 1, 2: the previous value
    out = m.forward(_cold_inputs([0.0, 0.5, 0.5], [0.0, 0.0, 0.25]))
    torch.testing.assert_close(out["s"][0], torch.full((6,), -1.0, dtype=F64))
    torch.testing.assert_close(out["s"][1:], torch.full((2, 6), 1.0, dtype=F64))
    torch.testing.assert_close(out["g"], torch.full((3,), 2.0, dtype=F64))  # no cold value


def test_constant_predictor_without_cold_reads_no_time():
    m = ConstantExtrapolationPredictor(unknowns_Scalar=["g"])
    assert m.input_names == ["g~1"]


def test_linear_predictor_cold_start():
    m = LinearExtrapolationPredictor(unknowns_Scalar=["g"], cold=["g:g0"])
    assert m.input_names == ["t", "t~1", "t~2", "g~1", "g~2", "g0"]
    ins = {
        "t": torch.tensor([2.0, 2.0], dtype=F64),
        "t~1": torch.tensor([1.0, 0.0], dtype=F64),
        "t~2": torch.tensor([0.5, 0.0], dtype=F64),
        "g~1": torch.tensor([3.0, 3.0], dtype=F64),
        "g~2": torch.tensor([2.0, 2.0], dtype=F64),
        "g0": torch.tensor([7.0, 7.0], dtype=F64),
    }
    # point 0 extrapolates: 3 + (3 - 2) * (2 - 1) / (1 - 0.5) = 5; point 1 is cold: 7
    torch.testing.assert_close(m.forward(ins)["g"], torch.tensor([5.0, 7.0], dtype=F64))


@pytest.mark.parametrize(
    ("cold", "fragment"),
    [
        (["s"], "is not 'unknown:variable'"),
        (["x:y"], "'x', which is not an unknown"),
        (["s:a", "s:b"], "given a cold value twice"),
        (["s:v", "g:v"], "different types"),
    ],
)
def test_cold_option_errors(cold, fragment):
    with pytest.raises(FatalError, match=fragment):
        ConstantExtrapolationPredictor(unknowns_SR2=["s"], unknowns_Scalar=["g"], cold=cold)


# ------------------------------------------------------------------ condensation
CONDENSE = """
[Models]
  [path]
    type = ScalarLinearCombination
    from = 'x gamma_rate'
    to = 'f'
    weights = '1 -3'
  []
  [model]
    type = RateCondensation
    model = 'path'
    rate = 'gamma_rate'
    driving_force = 'f'
    coupling = 'A'
    trial_driving_force = 'b'
  []
[]
"""


def test_rate_condensation_of_a_linear_path(tmp_path):
    m = load_model(_write(tmp_path, CONDENSE), "model")
    assert m.input_names == ["x"] and m.output_names == ["A", "b"]
    x = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
    out = m.forward({"x": x})
    torch.testing.assert_close(out["b"], x)
    torch.testing.assert_close(out["A"], torch.full((3,), 3.0, dtype=F64))


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        ("rate", "nope", "'nope' is not an input of the path model"),
        ("driving_force", "nope", "'nope' is not an output of the path model"),
    ],
)
def test_rate_condensation_errors(tmp_path, option, value, fragment):
    text = CONDENSE.replace(f"    {option} = ", f"    {option} = '{value}'\n    #")
    with pytest.raises(FatalError, match=fragment):
        load_model(_write(tmp_path, text), "model")


# ------------------------------------------------------------------ coordinate descent
ONE = """
[Models]
  [law]
    type = PerzynaPlasticFlowRate
    reference_stress = 100
    exponent = 2
  []
  [model]
    type = CoordinateDescentPredictor
    rate_law = 'law'
    driving_force_input = 'yield_function'
    coupling = 'A'
    trial_driving_force = 'b'
    rate = 'g'
    sweeps = 1
  []
[]
"""


def test_one_coordinate_solves_the_condensed_equation(tmp_path):
    m = load_model(_write(tmp_path, ONE), "model")
    assert m.input_names == ["A", "b"] and m.output_names == ["g"]
    A = torch.tensor([1e3, 50.0, 1e4, 2.0], dtype=F64)
    b = torch.tensor([90.0, 300.0, 5.0, -10.0], dtype=F64)
    g = m.forward({"A": A, "b": b})["g"]
    # phi^{-1}(w) = (<w>/100)^2 at the driving force w = b - A g
    w = b - A * g
    torch.testing.assert_close(g, (w.clamp(min=0) / 100.0) ** 2, rtol=1e-10, atol=1e-14)
    assert g[-1] == 0.0 and bool((g[:-1] > 0).all())


MANY = """
[Tensors]
  [a]
    type = Python
    expr = 'Scalar(1.0)'
  []
  [sdirs]
    type = Python
    expr = 'MillerIndex(torch.tensor([1, 1, 0], dtype=torch.int64))'
  []
  [splanes]
    type = Python
    expr = 'MillerIndex(torch.tensor([1, 1, 1], dtype=torch.int64))'
  []
[]
[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 'a'
    slip_directions = 'sdirs'
    slip_planes = 'splanes'
  []
[]
[Models]
  [law]
    type = PowerLawSlipRule
    n = 5.0
    gamma0 = 0.1
  []
  [model]
    type = CoordinateDescentPredictor
    rate_law = 'law'
    driving_force_input = 'resolved_shears'
    coupling = 'A'
    trial_driving_force = 'b'
    rate = 'g'
    sweeps = 60
  []
[]
"""


def test_vector_system_converges_to_the_condensed_root(tmp_path):
    m = load_input(_write(tmp_path, MANY)).model("model")
    assert m.input_names == ["A", "b", "slip_strengths"]
    from neml2.tensors import Scalar

    gen = torch.Generator().manual_seed(3)
    nb, k = 2, 4
    B = torch.randn(nb, k, k, generator=gen, dtype=F64)
    A = B @ B.transpose(-1, -2) * 0.05 + 0.01 * torch.eye(k, dtype=F64)  # SPD coupling
    b = torch.randn(nb, k, generator=gen, dtype=F64) * 20.0
    strength = torch.full((nb, k), 10.0, dtype=F64)
    g = m(Scalar(A, 2), Scalar(b, 1), Scalar(strength, 1))
    assert g.sub_batch_ndim == 1 and tuple(g.data.shape) == (nb, k)
    w = b - (A @ g.data.unsqueeze(-1)).squeeze(-1)
    law = 0.1 * (w / 10.0).abs() ** 4 * (w / 10.0)
    torch.testing.assert_close(g.data, law, rtol=1e-6, atol=1e-9)


def test_coordinate_descent_errors(tmp_path):
    bad = ONE.replace("driving_force_input = 'yield_function'", "driving_force_input = 'nope'")
    with pytest.raises(FatalError, match="'nope' is not an input of the rate law"):
        load_model(_write(tmp_path, bad), "model")
    bad = ONE.replace("sweeps = 1", "sweeps = -1")
    with pytest.raises(FatalError, match="must not be negative"):
        load_model(_write(tmp_path, bad), "model")


# ------------------------------------------------------------------ predictor wiring
IMPLICIT = """
[Models]
  [rate]
    type = ScalarLinearCombination
    from = 'x'
    to = 'x_rate'
    weights = '-1'
  []
  [integrate]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'x'
  []
  [system]
    type = ComposedModel
    models = 'rate integrate'
  []
  [trial]
    type = ScalarLinearCombination
    from = 'x~1'
    to = 'x_trial'
  []
  [seed]
    type = ScalarLinearCombination
    from = 'x_trial'
    to = 'SEED'
  []
  [predictor]
    type = ComposedModel
    models = 'trial seed'
    additional_outputs = 'x_trial'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq'
    solver = 'newton'
    predictor = 'predictor'
  []
[]
[EquationSystems]
  [eq]
    type = NonlinearSystem
    model = 'system'
    unknowns = 'x'
    residuals = 'x_residual'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]
"""


def test_a_predictor_may_have_outputs_besides_the_unknowns(tmp_path):
    m = load_model(_write(tmp_path, IMPLICIT.replace("SEED", "x")), "model")
    ins = {
        "x~1": torch.tensor([1.0, 2.0], dtype=F64),
        "t": torch.tensor([1.0, 1.0], dtype=F64),
        "t~1": torch.tensor([0.5, 0.0], dtype=F64),
    }
    # backward Euler of x' = -x: x = x~1 / (1 + dt)
    torch.testing.assert_close(m.forward(ins)["x"], torch.tensor([1.0 / 1.5, 1.0], dtype=F64))


def test_a_predictor_must_predict_an_unknown(tmp_path):
    with pytest.raises(FatalError, match="include none of the unknowns"):
        load_model(_write(tmp_path, IMPLICIT.replace("SEED", "y")), "model")


def test_later_sweeps_start_from_the_previous_driving_force(tmp_path):
    """The bracket is searched in the first sweep only: after it, each coordinate costs
    its ``polish`` rate-law evaluations (Newton from its driving force of the sweep
    before), and the result still solves the condensed system."""
    m = load_input(_write(tmp_path, MANY)).model("model")
    from neml2.tensors import Scalar

    gen = torch.Generator().manual_seed(5)
    nb, k = 3, 4
    B = torch.randn(nb, k, k, generator=gen, dtype=F64)
    A = B @ B.transpose(-1, -2) * 0.05 + 0.01 * torch.eye(k, dtype=F64)
    b = torch.randn(nb, k, generator=gen, dtype=F64) * 20.0
    strength = torch.full((nb, k), 10.0, dtype=F64)
    calls = []
    hook = m.rate_law.register_forward_hook(lambda mod, args, out: calls.append(1))
    try:
        g = m(Scalar(A, 2), Scalar(b, 1), Scalar(strength, 1))
    finally:
        hook.remove()
    sweeps, polish, rounds = m.opts["sweeps"], m.opts["polish"], 2  # 16 halvings: 2 grids
    assert len(calls) == k * (rounds + polish) + (sweeps - 1) * k * polish
    w = b - (A @ g.data.unsqueeze(-1)).squeeze(-1)
    law = 0.1 * (w / 10.0).abs() ** 4 * (w / 10.0)
    torch.testing.assert_close(g.data, law, rtol=1e-6, atol=1e-9)
