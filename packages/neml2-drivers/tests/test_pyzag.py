"""neml2.drivers.pyzag: trajectories and adjoint gradients of a small Perzyna model.

The same input holds the residual model (``rate``, wrapped for pyzag) and the
implicit update over it (``model``, stepped eagerly here): pyzag's trajectory
must equal the eager one, and pyzag's adjoint gradient must equal both autograd
through the eager steps and central finite differences.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("pyzag")

from neml2.drivers.pyzag import PyzagModel
from neml2.models import load_input
from neml2.tensors import ConvergenceError, FatalError

INPUT = """
[Models]
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
  [isoharden]
    type = VoceIsotropicHardening
    saturated_hardening = 150
    saturation_rate = 60
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 200
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
  [flow_rate]
    type = PerzynaPlasticFlowRate
    reference_stress = 100
    exponent = 4
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [Erate]
    type = SR2VariableRate
    variable = 'E'
  []
  [Eerate]
    type = SR2LinearCombination
    from = 'E_rate plastic_strain_rate'
    to = 'strain_rate'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    rate_form = true
  []
  [integrate_stress]
    type = SR2BackwardEulerTimeIntegration
    variable = 'stress'
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [rate]
    type = ComposedModel
    models = 'mandel_stress vonmises isoharden yield_surface normality flow_rate Eprate eprate
              Erate Eerate elasticity integrate_stress integrate_ep'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'rate'
    unknowns = 'stress equivalent_plastic_strain'
    residuals = 'stress_residual equivalent_plastic_strain_residual'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
    rel_tol = 1e-11
    abs_tol = 1e-9
  []
  [lu]
    type = DenseLU
  []
[]
[Models]
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'stress'
    unknowns_Scalar = 'equivalent_plastic_strain'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
[]
"""

N_STEP = 9


@pytest.fixture()
def ctx(tmp_path):
    path = tmp_path / "model.i"
    path.write_text(INPUT)
    return load_input(path)


def forces(n: int = N_STEP) -> dict[str, torch.Tensor]:
    """Two strain-controlled points (1 % and 2 % over 1 s, into the plastic range)."""
    s = torch.linspace(0.0, 1.0, n, dtype=torch.float64)
    axial = s[:, None] * torch.tensor([0.01, 0.02], dtype=torch.float64)
    E = torch.zeros(n, 2, 6, dtype=torch.float64)
    E[..., 0], E[..., 1], E[..., 2] = axial, -0.5 * axial, -0.5 * axial
    return {"E": E, "t": s[:, None].expand(n, 2).contiguous()}


def eager(model, f) -> torch.Tensor:
    """Axial stress ``(n, 2)`` stepping the implicit update through *f*."""
    s = torch.zeros(2, 6, dtype=torch.float64)
    ep = torch.zeros(2, dtype=torch.float64)
    out = [s[:, 0]]
    for k in range(1, f["E"].shape[0]):
        y = model.forward(
            {
                "E": f["E"][k],
                "E~1": f["E"][k - 1],
                "t": f["t"][k],
                "t~1": f["t"][k - 1],
                "stress~1": s,
                "equivalent_plastic_strain~1": ep,
            }
        )
        s, ep = y["stress"], y["equivalent_plastic_strain"]
        out.append(s[:, 0])
    return torch.stack(out)


def test_layout_is_inferred_from_names(ctx):
    pz = PyzagModel(ctx.model("rate"))
    assert pz.state_names == ["stress", "equivalent_plastic_strain"]
    assert pz.force_names == ["E", "t"]
    assert pz.residual_names == ["stress_residual", "equivalent_plastic_strain_residual"]
    assert (pz.n_state, pz.n_force) == (7, 7)
    x = torch.arange(14.0).reshape(2, 7)
    assert torch.equal(pz.pack("state", pz.unpack("state", x)), x)


def test_trajectory_equals_eager_implicit_update(ctx):
    pz = PyzagModel(ctx.model("rate"))
    f = forces()
    traj = pz.integrate(f, block_size=4, adjoint=False, rtol=1e-11, atol=1e-9)
    assert traj["stress"].shape == (N_STEP, 2, 6)
    assert traj["equivalent_plastic_strain"].shape == (N_STEP, 2)
    assert float(traj["equivalent_plastic_strain"][-1].min()) > 1e-3  # plastic flow happened
    torch.testing.assert_close(traj["stress"][..., 0], eager(ctx.model("model"), f))


def loss_of(stress: torch.Tensor) -> torch.Tensor:
    w = torch.linspace(1.0, 2.0, stress.shape[0], dtype=torch.float64)[:, None]
    return (w * stress[..., 0]).sum() / 1e3


def test_adjoint_gradient_equals_autograd_through_eager_steps(ctx):
    rate, model = ctx.model("rate"), ctx.model("model")
    f = forces()
    loss_of(PyzagModel(rate).integrate(f, block_size=4, rtol=1e-11, atol=1e-9)["stress"]).backward()
    loss_of(eager(model, f)[..., None]).backward()
    eager_grads = {n.split(".", 1)[1]: p.grad for n, p in model.named_parameters()}
    checked = 0
    for name, p in rate.named_parameters():
        if name.startswith("Eerate."):
            continue  # the weights of the composition are not material parameters
        assert p.grad is not None, name
        torch.testing.assert_close(p.grad, eager_grads[name], rtol=1e-6, atol=1e-9, msg=name)
        checked += float(p.grad.abs()) > 0
    assert checked >= 5  # E, nu, yield stress, both Voce constants, Perzyna constants


@pytest.mark.parametrize("name", ["elasticity.E", "isoharden.saturation_rate"])
def test_adjoint_gradient_equals_finite_differences(ctx, name):
    rate = ctx.model("rate")
    pz = PyzagModel(rate)
    f = forces()
    kw = {"block_size": 3, "rtol": 1e-11, "atol": 1e-9}
    loss_of(pz.integrate(f, **kw)["stress"]).backward()
    p = dict(rate.named_parameters())[name]
    value, grad = p.detach().clone(), p.grad.clone()
    h = 1e-5 * float(value)
    losses = []
    for sign in (1, -1):
        rate.set_parameter(name, value + sign * h)
        losses.append(float(loss_of(pz.integrate(f, adjoint=False, **kw)["stress"])))
    fd = (losses[0] - losses[1]) / (2 * h)
    assert abs(float(grad)) > 0
    assert float(grad) == pytest.approx(fd, rel=1e-4)


def test_frozen_parameters_get_no_gradient(ctx):
    rate = ctx.model("rate")
    for n, p in rate.named_parameters():
        p.requires_grad_(n == "yield_surface.yield_stress")
    loss_of(PyzagModel(rate).integrate(forces())["stress"]).backward()
    grads = {n: p.grad for n, p in rate.named_parameters()}
    assert grads.pop("yield_surface.yield_stress") is not None
    assert all(g is None for g in grads.values())


def test_non_convergence_is_a_convergence_error(ctx):
    pz = PyzagModel(ctx.model("rate"))
    with pytest.raises(ConvergenceError, match="did not converge within 1 iterations") as e:
        pz.integrate(forces(), block_size=8, miter=1, adjoint=False)
    # pyzag does not say which points failed; the iterations are known
    assert e.value.iterations == 1 and e.value.failed_indices == ()


def test_bad_layouts_are_fatal_errors(ctx):
    rate = ctx.model("rate")
    with pytest.raises(FatalError, match="'strain' is not an input"):
        PyzagModel(rate, state=["strain"])
    with pytest.raises(FatalError, match=r"neither state nor forces"):
        PyzagModel(rate, forces=["E"])
    with pytest.raises(FatalError, match="must be square"):
        PyzagModel(rate, state=["stress"], residuals=["equivalent_plastic_strain_residual"])
    with pytest.raises(FatalError, match="no input x of the model has a residual"):
        PyzagModel(ctx.model("elasticity"))
    with pytest.raises(FatalError, match="missing forces variable"):
        PyzagModel(rate).integrate({"E": forces()["E"]})
    with pytest.raises(FatalError, match="at least 3 steps"):
        PyzagModel(rate).integrate(forces(2))


# ---------------------------------------------------------------- neml2.pyzag (reference path)
@pytest.fixture()
def system(tmp_path):
    from neml2 import load_nonlinear_system

    path = tmp_path / "model.i"
    path.write_text(INPUT)
    return load_nonlinear_system(path, "eq_sys")


def test_reference_import_path_is_our_adapter():
    import neml2.drivers.pyzag as ours
    from neml2.pyzag import NEML2PyzagModel
    from neml2.pyzag import PyzagModel as Same

    assert NEML2PyzagModel is ours.NEML2PyzagModel
    assert Same is PyzagModel and issubclass(NEML2PyzagModel, PyzagModel)


def test_reference_constructor_takes_the_equation_system(ctx, system):
    from neml2.pyzag import NEML2PyzagModel

    pz = NEML2PyzagModel(system)
    assert pz.state_names == ["stress", "equivalent_plastic_strain"]
    assert pz.residual_names == ["stress_residual", "equivalent_plastic_strain_residual"]
    assert pz.force_names == ["E", "t"]
    assert (pz.nstate, pz.nforce, pz.lookback) == (7, 7, 1)
    # every parameter, under the reference's flat names, and the model's own tensors
    params = dict(pz.named_parameters())
    model_params = dict(system.model.named_parameters())
    assert set(params) == {n.replace(".", "_") for n in model_params}
    assert params["elasticity_E"] is model_params["elasticity.E"]
    kw = {"block_size": 4, "adjoint": False, "rtol": 1e-11, "atol": 1e-9}
    f = forces()
    torch.testing.assert_close(
        pz.integrate(f, **kw)["stress"], PyzagModel(ctx.model("rate")).integrate(f, **kw)["stress"]
    )


def test_include_and_exclude_parameters(system):
    from neml2.pyzag import NEML2PyzagModel

    pz = NEML2PyzagModel(system, include_parameters=["elasticity_E", "yield_surface.yield_stress"])
    assert set(dict(pz.named_parameters())) == {"elasticity_E", "yield_surface_yield_stress"}
    loss_of(pz.integrate(forces(), block_size=4, rtol=1e-11, atol=1e-9)["stress"]).backward()
    grads = {n: p.grad for n, p in system.model.named_parameters()}
    assert grads.pop("elasticity.E") is not None
    assert grads.pop("yield_surface.yield_stress") is not None
    assert all(g is None for g in grads.values())

    pz = NEML2PyzagModel(system, exclude_parameters=["elasticity_nu"])
    names = set(dict(pz.named_parameters()))
    assert "elasticity_nu" not in names and "elasticity_E" in names and len(names) == 6
    # a change through the factory is a change of the model
    before = float(dict(system.model.named_parameters())["elasticity.E"].detach())
    with torch.no_grad():
        pz.get_parameter("elasticity_E").add_(1.0)
    after = float(dict(system.model.named_parameters())["elasticity.E"].detach())
    assert after == before + 1.0


def test_reference_constructor_errors(system):
    from neml2.pyzag import NEML2PyzagModel

    with pytest.raises(FatalError, match="mutually exclusive"):
        NEML2PyzagModel(system, include_parameters=["elasticity_E"], exclude_parameters=["x"])
    with pytest.raises(FatalError, match="include_parameters names 'elasticity_G'"):
        NEML2PyzagModel(system, include_parameters=["elasticity_G"])
