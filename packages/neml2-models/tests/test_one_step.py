"""One step from a zero state: ``with_zero_history``, ``jacobian(wrt=)``, the missing-input
message that points at them, and what ``dir(neml2)`` lists."""

from __future__ import annotations

import pytest
import torch

import neml2
from neml2.models import load_string, with_zero_history
from neml2.models._history import is_history, missing_inputs_message
from neml2.tensors import SR2, FatalError

F64 = torch.float64

#: r = x - x~1 - x_rate (t - t~1): history inputs x~1 and t~1, linear in everything
INTEGRATION = """
[Models]
  [integrate]
    type = SR2BackwardEulerTimeIntegration
    variable = 'x'
  []
[]
"""

#: J2 plasticity with linear isotropic hardening, one implicit step
J2 = """
[Models]
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [isoharden]
    type = LinearIsotropicHardening
    hardening_modulus = 1000
  []
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 250
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [integrate_Ep]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [residual]
    type = ComposedModel
    models = 'elastic_strain elasticity isoharden mandel_stress vonmises yield_surface
              normality Eprate eprate consistency integrate_Ep integrate_ep'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain equivalent_plastic_strain flow_rate'
    residuals = 'plastic_strain_residual equivalent_plastic_strain_residual complementarity'
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
[Models]
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain equivalent_plastic_strain'
  []
[]
"""


@pytest.fixture(scope="module")
def integrate():
    return load_string(INTEGRATION, "integrate")


@pytest.fixture(scope="module")
def j2():
    return load_string(J2, "model")


def _strains(n: int, seed: int = 0, dtype=F64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return 2e-3 * (2 * torch.rand(n, 6, generator=g, dtype=F64) - 1).to(dtype)


# ------------------------------------------------------------------ dir(neml2)
def test_dir_lists_the_facade():
    names = dir(neml2)
    for name in (
        "__version__",
        "load_model",
        "load_input",
        "load_string",
        "compile",
        "FatalError",
        "models",
        "tensors",
        "hit",
        "factory",
    ):
        assert name in names, name
    assert names == sorted(names)
    assert isinstance(neml2.__version__, str) and neml2.__version__
    assert all(hasattr(neml2, n) for n in neml2.__all__)


# ------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("name", "history"),
    [("x~1", True), ("t~1", True), ("plastic_strain~12", True), ("x", False), ("x~", False)],
)
def test_is_history(name, history):
    assert is_history(name) is history


def test_missing_message_points_at_the_helper_only_for_history():
    plain = missing_inputs_message("M", ["strain"])
    assert plain == "M: missing input(s) strain"
    both = missing_inputs_message("M", ["t", "x~1"])
    assert both.startswith("M: missing input(s) t, x~1; a name ending in ~N is a history")
    assert "neml2.models.with_zero_history(model, inputs)" in both


def test_missing_history_is_an_error_by_default(integrate, j2):
    x = {"x": torch.ones(3, 6, dtype=F64), "x_rate": torch.ones(3, 6, dtype=F64), "t": 1.0}
    for call in (integrate.forward, integrate.jacobian):
        with pytest.raises(FatalError, match=r"missing input\(s\) x~1, t~1; .*with_zero_history"):
            call(x)
    with pytest.raises(FatalError, match=r"missing input\(s\) .*plastic_strain~1.*history"):
        j2.forward({"strain": _strains(2), "t": 1.0})


# ------------------------------------------------------------------ with_zero_history
def test_zero_fill_shapes_dtype_and_values(integrate):
    given = {
        "x": torch.rand(4, 5, 6, dtype=F64),
        "x_rate": torch.rand(5, 6, dtype=F64),  # broadcasts against (4, 5)
        "t": 2.0,
    }
    full = with_zero_history(integrate, given)
    assert set(full) == {"x", "x_rate", "t", "x~1", "t~1"}
    assert all(full[k] is v for k, v in given.items())  # given inputs untouched
    assert full["x~1"].shape == (4, 5, 6) and full["t~1"].shape == (4, 5)
    assert full["x~1"].dtype == full["t~1"].dtype == F64
    assert bool((full["x~1"] == 0).all()) and bool((full["t~1"] == 0).all())
    # r = x - 0 - x_rate (2 - 0)
    r = integrate.forward(full)["x_residual"]
    torch.testing.assert_close(r, given["x"] - 2.0 * given["x_rate"])


def test_given_history_is_kept_and_other_inputs_are_not_filled(integrate):
    old = torch.full((3, 6), 7.0, dtype=F64)
    full = with_zero_history(integrate, {"x": torch.ones(3, 6, dtype=F64), "x~1": old})
    assert full["x~1"] is old
    assert "x_rate" not in full and "t" not in full  # not history: the caller's to give
    with pytest.raises(FatalError, match=r"missing input\(s\) x_rate, t"):
        integrate.forward(full)


def test_zero_fill_follows_the_model_dtype_and_device(integrate):
    m32 = load_string(INTEGRATION, "integrate", dtype=torch.float32)
    full = with_zero_history(m32, {"x": torch.ones(2, 6, dtype=torch.float32)})
    assert full["x~1"].dtype == full["t~1"].dtype == torch.float32
    assert full["x~1"].device == m32.device


def test_zero_fill_mirrors_a_typed_sub_batch(integrate):
    """x given as an SR2 with one sub-batch axis (3 per point): x~1 gets it too."""
    x = SR2(torch.rand(4, 3, 6, dtype=F64), 1)
    rate = SR2(torch.rand(4, 3, 6, dtype=F64), 1)
    full = with_zero_history(integrate, {"x": x, "x_rate": rate, "t": 1.0})
    old = full["x~1"]
    assert isinstance(old, SR2) and old.sub_batch_ndim == 1
    assert old.data.shape == (4, 3, 6)
    assert full["t~1"].shape == (4,)
    r = integrate.forward(full)["x_residual"]
    torch.testing.assert_close(r, x.data - rate.data)


class _SurfaceOnly:
    """The name-keyed surface of a C++ route (e.g. ``neml2.aoti.cpp_eager.Model``): no
    input_spec, sub-batch shapes per input in input_names order, -1 for a size known only
    at call time."""

    def __init__(self, model, sub_batch_shapes):
        self.input_names = list(model.input_spec)
        self.input_base_shapes = [tuple(t.BASE_SHAPE) for t in model.input_spec.values()]
        self.input_sub_batch_shapes = [sub_batch_shapes.get(n, ()) for n in self.input_names]
        self.dtype, self.device = model.dtype, model.device


def test_zero_fill_takes_sizes_unknown_to_the_route_from_the_given_value(integrate):
    """A route whose sub-batch sizes are -1 (cpp-eager): x~1 gets the 3 of the given x;
    a route with fixed sizes (an artifact) imposes its own."""
    x = torch.rand(4, 3, 6, dtype=F64)
    given = {"x": x, "x_rate": torch.rand(4, 3, 6, dtype=F64), "t": 1.0}
    eager = _SurfaceOnly(integrate, {"x": (-1,), "x_rate": (-1,), "x~1": (-1,)})
    assert with_zero_history(eager, given)["x~1"].shape == (4, 3, 6)
    fixed = _SurfaceOnly(integrate, {"x": (3,), "x_rate": (3,), "x~1": (5,)})
    assert with_zero_history(fixed, given)["x~1"].shape == (4, 5, 6)


def test_zero_fill_errors(integrate):
    with pytest.raises(FatalError, match=r"with_zero_history: unknown input.* strian"):
        with_zero_history(integrate, {"strian": torch.zeros(6, dtype=F64)})
    with pytest.raises(FatalError, match=r"batch shapes .* do not broadcast \(x \(3,\), x_rate"):
        with_zero_history(
            integrate, {"x": torch.zeros(3, 6, dtype=F64), "x_rate": torch.zeros(4, 6, dtype=F64)}
        )
    with pytest.raises(FatalError, match="expected a neml2 model"):
        with_zero_history(torch.nn.Linear(2, 2), {})


# ------------------------------------------------------------------ jacobian(wrt=)
def test_jacobian_wrt_one_input(integrate):
    full = with_zero_history(
        integrate,
        {"x": torch.rand(5, 6, dtype=F64), "x_rate": torch.rand(5, 6, dtype=F64), "t": 0.5},
    )
    _, J = integrate.jacobian(full, wrt="x_rate")
    assert list(J) == ["x_residual"] and list(J["x_residual"]) == ["x_rate"]
    eye = torch.eye(6, dtype=F64).expand(5, 6, 6)
    torch.testing.assert_close(J["x_residual"]["x_rate"], -0.5 * eye)
    _, everything = integrate.jacobian(full)
    assert set(everything["x_residual"]) == set(integrate.input_names)
    _, two = integrate.jacobian(full, wrt=["x", "t~1"])
    assert list(two["x_residual"]) == ["x", "t~1"]
    for name in ("x", "t~1"):
        torch.testing.assert_close(two["x_residual"][name], everything["x_residual"][name])


def test_jacobian_wrt_errors(integrate):
    full = with_zero_history(
        integrate,
        {"x": torch.rand(2, 6, dtype=F64), "x_rate": torch.rand(2, 6, dtype=F64), "t": 1.0},
    )
    with pytest.raises(FatalError, match=r"unknown input 'xrate' \(did you mean 'x_rate'\?\)"):
        integrate.jacobian(full, wrt="xrate")
    with pytest.raises(FatalError, match="names no input"):
        integrate.jacobian(full, wrt=[])


def test_j2_tangent_one_block_matches_the_full_jacobian(j2):
    """The consistent tangent of one step from a zero state: the wrt='strain' block equals
    the full Jacobian's, is the elasticity tensor at elastic points, symmetric, and
    agrees with finite differences of the stress."""
    strain = _strains(64)
    full = with_zero_history(j2, {"strain": strain, "t": 1.0})
    assert full["plastic_strain~1"].shape == (64, 6) and full["flow_rate~1"].shape == (64,)
    with torch.no_grad():
        out, J = j2.jacobian(full, wrt="strain")
        _, J_all = j2.jacobian(full)
    C = J["stress"]["strain"]
    assert C.shape == (64, 6, 6) and list(J["stress"]) == ["strain"]
    torch.testing.assert_close(C, J_all["stress"]["strain"])
    yielded = out["equivalent_plastic_strain"] > 0
    assert 0 < int(yielded.sum()) < 64  # both branches exercised
    E, nu = 200e3, 0.3
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    m = torch.tensor([1.0, 1, 1, 0, 0, 0], dtype=F64)
    C_el = lam * torch.outer(m, m) + 2 * mu * torch.eye(6, dtype=F64)
    torch.testing.assert_close(C[~yielded], C_el.expand(int((~yielded).sum()), 6, 6))
    torch.testing.assert_close(C, C.transpose(-1, -2))
    # central differences of the stress along each strain component, at yielded points
    h = 1e-8
    fd = torch.empty_like(C)
    with torch.no_grad():
        for k in range(6):
            d = torch.zeros(6, dtype=F64)
            d[k] = h
            up = j2.forward({**full, "strain": strain + d})["stress"]
            down = j2.forward({**full, "strain": strain - d})["stress"]
            fd[..., k] = (up - down) / (2 * h)
    err = (fd[yielded] - C[yielded]).abs().max() / C.abs().max()
    assert bool(err <= 1e-5), float(err)


def test_compiled_model_takes_wrt_and_the_same_message():
    """py-jit (Dynamo only, backend 'eager'): the same wrt= and missing-input message."""
    jit = neml2.compile(load_string(INTEGRATION, "integrate"), backend="eager")
    given = {"x": torch.rand(3, 6, dtype=F64), "x_rate": torch.rand(3, 6, dtype=F64), "t": 2.0}
    with pytest.raises(FatalError, match=r"missing input\(s\) x~1, t~1; .*with_zero_history"):
        jit.forward(given)
    full = with_zero_history(jit, given)
    assert full["x~1"].shape == (3, 6) and full["t~1"].shape == (3,)
    with pytest.raises(FatalError, match="unknown input 'xrate'"):
        jit.jacobian(full, wrt="xrate")
    with torch.no_grad():
        _, J = jit.jacobian(full, wrt="x_rate")
    assert list(J["x_residual"]) == ["x_rate"]
    torch.testing.assert_close(
        J["x_residual"]["x_rate"], -2.0 * torch.eye(6, dtype=F64).expand(3, 6, 6)
    )
