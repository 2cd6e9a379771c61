"""J2 plasticity with linear isotropic hardening: the composed implicit model vs closed form.

The input composes the usual pieces (elasticity, Mandel stress, von Mises,
yield function, Normality, associative flow and hardening, backward Euler,
min-map complementarity) and solves them with Newton. The reference here is
the classical radial-return algorithm, written independently below.
Also: a deliberately non-converging input raises ConvergenceError on the
model API and on the driver, and writes no result file.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

import neml2.drivers  # noqa: F401
from neml2.models import load_input, load_model
from neml2.tensors import ConvergenceError

E, NU, SY, H = 1.0e5, 0.3, 1000.0, 5000.0
G = E / (2 * (1 + NU))
K = E / (3 * (1 - 2 * NU))

INPUT = f"""
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 31, dtype=torch.float64).unsqueeze(-1).expand(31, 3))'
  []
  [strains]
    type = Python
    expr = '''
      SR2(torch.stack([
        torch.cat([torch.linspace(0, 0.02, 16), torch.full((15,), 0.02)], 0).unsqueeze(-1)
          * torch.tensor([1.0, -0.5, -0.5, 0.0, 0.0, 0.0]),
        torch.cat([torch.zeros(16), torch.linspace(0, 0.02, 16)[1:]], 0).unsqueeze(-1)
          * torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
      ], 0).sum(0).unsqueeze(1) * torch.tensor([1.0, 0.5, -1.0]).reshape(1, 3, 1))
    '''
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'E'
    prescribed_SR2_values = 'strains'
    save_as = 'result.pt'
  []
[]
[Models]
  [isoharden]
    type = LinearIsotropicHardening
    hardening_modulus = {H}
  []
  [elastic_strain]
    type = SR2LinearCombination
    from = 'E plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '{E} {NU}'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
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
    yield_stress = {SY}
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
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [integrate_Ep]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [surface]
    type = ComposedModel
    models = 'isoharden elastic_strain elasticity mandel_stress vonmises yield_surface
              normality eprate Eprate consistency integrate_ep integrate_Ep'
  []
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
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'surface'
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
"""


def _mandel_dev(x):
    tr = x[..., :3].sum(-1, keepdim=True)
    return x - torch.cat([tr.expand(*tr.shape[:-1], 3) / 3, torch.zeros_like(x[..., 3:])], -1)


def radial_return(strains: torch.Tensor):
    """Classical return map, (nstep, B, 6) Mandel strains -> stresses, plastic strains, ep."""
    ep_p = torch.zeros(strains.shape[1:], dtype=strains.dtype)
    ebar = torch.zeros(strains.shape[1], dtype=strains.dtype)
    out = []
    for eps in strains[1:]:
        ee = eps - ep_p
        tr = ee[..., :3].sum(-1, keepdim=True)
        vol = torch.cat([tr.expand(-1, 3), torch.zeros_like(ee[..., 3:])], -1) / 3
        sig = 3 * K * vol + 2 * G * (ee - vol)
        s = _mandel_dev(sig)
        q = math.sqrt(1.5) * torch.linalg.vector_norm(s, dim=-1)
        f = q - (SY + H * ebar)
        dg = torch.clamp(f, min=0) / (3 * G + H)
        n = 1.5 * s / torch.where(q > 0, q, torch.ones_like(q)).unsqueeze(-1)
        ep_p = ep_p + dg.unsqueeze(-1) * n
        ebar = ebar + dg
        sig = sig - 2 * G * dg.unsqueeze(-1) * n
        out.append((sig, ep_p.clone(), ebar.clone()))
    return out


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "j2.i"
    p.write_text(INPUT)
    return p


def test_matches_closed_form(input_file):
    ctx = load_input(input_file)
    driver = ctx.object("Drivers", "driver")
    assert driver.run()
    strains = ctx.tensor("strains").data
    expected = radial_return(strains)
    yielded = 0
    for k, (sig, ep, ebar) in enumerate(expected, start=1):
        res = driver.result
        torch.testing.assert_close(res[f"output.{k}.stress"], sig, rtol=1e-7, atol=1e-6)
        torch.testing.assert_close(
            res[f"output.{k}.plastic_strain"].expand_as(ep), ep, rtol=1e-7, atol=1e-10
        )
        torch.testing.assert_close(
            res[f"output.{k}.equivalent_plastic_strain"].expand_as(ebar),
            ebar,
            rtol=1e-7,
            atol=1e-10,
        )
        yielded += int((ebar > 0).sum())
    assert yielded > 30  # the path is mostly plastic, at every point
    assert (input_file.parent / "result.pt").is_file()


def test_implicit_model_derivatives_by_ift(input_file):
    """jacobian of the return map (IFT) vs finite differences of the solved model."""
    m = load_model(input_file, "model")
    x = {
        "E": torch.tensor([[0.01, -0.004, -0.004, 0.001, 0.0, 0.002]], dtype=torch.float64),
        "plastic_strain~1": torch.zeros(1, 6, dtype=torch.float64),
        "equivalent_plastic_strain~1": torch.zeros(1, dtype=torch.float64),
        "flow_rate~1": torch.zeros(1, dtype=torch.float64),
        "t": torch.ones(1, dtype=torch.float64),
        "t~1": torch.zeros(1, dtype=torch.float64),
    }
    x = {n: x[n] for n in m.input_names}
    with torch.no_grad():
        _, J = m.jacobian(x)
        h = 1e-7
        for i in range(6):
            xp = dict(x)
            xm = dict(x)
            xp["E"] = x["E"].clone()
            xm["E"] = x["E"].clone()
            xp["E"][0, i] += h
            xm["E"][0, i] -= h
            fd = (m.forward(xp)["stress"] - m.forward(xm)["stress"]) / (2 * h)
            torch.testing.assert_close(J["stress"]["E"][0, :, i], fd[0], rtol=1e-5, atol=1e-2)


def test_parameter_gradient_through_the_solve(input_file):
    """Calibration path: d(stress)/d(yield stress) by autograd through the implicit update."""
    m = load_model(input_file, "model")
    strain = torch.tensor([[0.02, -0.01, -0.01, 0.0, 0.0, 0.0]], dtype=torch.float64)
    zeros = {
        "plastic_strain~1": torch.zeros(1, 6, dtype=torch.float64),
        "equivalent_plastic_strain~1": torch.zeros(1, dtype=torch.float64),
        "flow_rate~1": torch.zeros(1, dtype=torch.float64),
        "t": torch.ones(1, dtype=torch.float64),
        "t~1": torch.zeros(1, dtype=torch.float64),
    }
    x = {"E": strain, **zeros}
    x = {n: x[n] for n in m.input_names}
    s = m.forward(x)["stress"][0, 0]
    (sy,) = [p for n, p in m.named_parameters() if n.endswith("yield_stress")]
    (g,) = torch.autograd.grad(s, sy)
    # uniaxial-strain closed form: s_xx = sig_tr - 2G dg n_xx with dg = (q - sy)/(3G + H)
    res = radial_return(torch.stack([torch.zeros_like(strain), strain]))
    sig = res[0][0][0, 0]
    torch.testing.assert_close(s.detach(), sig, rtol=1e-8, atol=1e-6)
    s_dev = _mandel_dev(strain)[0]
    n_xx = 1.5 * s_dev[0] / (math.sqrt(1.5) * torch.linalg.vector_norm(s_dev))
    torch.testing.assert_close(g, 2 * G * n_xx / (3 * G + H), rtol=1e-6, atol=1e-9)


def test_non_convergence_is_a_convergence_error(input_file, tmp_path):
    # J2 with linear hardening converges in one Newton step from any guess, so make the
    # tolerances unreachable instead: the elastic point (zero residual) converges, the
    # plastic one cannot
    overrides = [
        "Solvers/newton/max_its=2",
        "Solvers/newton/abs_tol=1e-300",
        "Solvers/newton/rel_tol=1e-300",
    ]
    m = load_model(input_file, "model", overrides)
    x = {
        "E": torch.tensor(
            [[0.5, -0.25, -0.25, 0, 0, 0], [1e-5, 0, 0, 0, 0, 0]], dtype=torch.float64
        ),
        "plastic_strain~1": torch.zeros(2, 6, dtype=torch.float64),
        "equivalent_plastic_strain~1": torch.zeros(2, dtype=torch.float64),
        "flow_rate~1": torch.zeros(2, dtype=torch.float64),
        "t": torch.ones(2, dtype=torch.float64),
        "t~1": torch.zeros(2, dtype=torch.float64),
    }
    with pytest.raises(
        ConvergenceError,
        match=r"did not converge at 1 of 2 points after 2 "
        r"iterations; worst residual norm",
    ) as e:
        m.forward({n: x[n] for n in m.input_names})
    assert e.value.recoverable
    # the driver: exit status 3, no result file
    result = input_file.parent / "result.pt"
    result.unlink(missing_ok=True)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "neml2.drivers",
            str(input_file),
            "driver",
            *overrides,
            "Tensors/times/expr='Scalar(torch.tensor([[0.0], [1.0]]))'",
            "Tensors/strains/expr='SR2(torch.tensor([[[0.0] * 6], [[0.5, -0.25, -0.25, 0, 0, "
            "0]]]))'",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 3, r.stderr
    assert "convergence failure: step 1 of 1" in r.stderr
    assert not result.exists()
