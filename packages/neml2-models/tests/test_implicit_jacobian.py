"""The eager Jacobian assembly of ImplicitUpdate against the traced one and finite differences.

Eagerly, ``∂r/∂u`` is written block by block into one seed-major buffer; traced
graphs concatenate the blocks (``Layout.block_rows``). Both must agree exactly, with
structural-zero blocks (a back stress residual does not depend on the other back
stress) and Scalar unknowns (no base axes) in the system.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import implicit_update as iu
from neml2.models import load_model
from neml2.tensors import SR2, Scalar

F64 = torch.float64

INPUT = """
[Models]
  [isoharden]
    type = VoceIsotropicHardening
    saturated_hardening = 50
    saturation_rate = 1.2
  []
  [kinharden]
    type = SR2LinearCombination
    from = 'X1 X2'
    to = 'X'
  []
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [overstress]
    type = SR2LinearCombination
    to = 'O'
    from = 'mandel_stress X'
    weights = '1 -1'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'O'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 10
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'overstress vonmises yield_surface'
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
    reference_stress = 150
    exponent = 4
  []
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [X1rate]
    type = ChabochePlasticHardening
    back_stress = 'X1'
    C = 5000
    g = 8.2
    A = 1e-6
    a = 1.2
  []
  [X2rate]
    type = ChabochePlasticHardening
    back_stress = 'X2'
    C = 1000
    g = 4.2
    A = 1e-10
    a = 3.2
  []
  [Eprate]
    type = AssociativePlasticFlow
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
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [integrate_X1]
    type = SR2BackwardEulerTimeIntegration
    variable = 'X1'
  []
  [integrate_X2]
    type = SR2BackwardEulerTimeIntegration
    variable = 'X2'
  []
  [integrate_stress]
    type = SR2BackwardEulerTimeIntegration
    variable = 'stress'
  []
  [implicit_rate]
    type = ComposedModel
    models = 'isoharden kinharden mandel_stress overstress vonmises yield_surface normality
              flow_rate eprate Eprate X1rate X2rate Erate Eerate elasticity integrate_stress
              integrate_ep integrate_X1 integrate_X2'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'implicit_rate'
    unknowns = 'stress equivalent_plastic_strain X1 X2'
  []
[]
[Solvers]
  [newton]
    type = Newton
  []
[]
"""


@pytest.fixture(scope="module")
def update(tmp_path_factory):
    p = tmp_path_factory.mktemp("jac") / "chaboche.i"
    p.write_text(textwrap.dedent(INPUT).lstrip())
    return load_model(p, "model")


def _residual_and_jacobian(update, batch=(4,)):
    g = torch.Generator().manual_seed(0)
    values = {}
    for name, typ in update.input_spec.items():
        if typ is Scalar:
            d = torch.rand(*batch, generator=g, dtype=F64) + (1.0 if name.startswith("t") else 0.0)
            if name == "t~1":
                d = d - 1.0
        else:
            d = torch.randn(*batch, 6, generator=g, dtype=F64) * 0.01
        values[name] = typ(d)
    given = {n: values[n] for n in update.system.givens}
    guess = {u: SR2(torch.randn(*batch, 6, generator=g, dtype=F64) * 50.0) for u in ("stress",)}
    guess["X1"] = SR2(torch.randn(*batch, 6, generator=g, dtype=F64) * 5.0)
    guess["X2"] = SR2(torch.randn(*batch, 6, generator=g, dtype=F64) * 5.0)
    guess["equivalent_plastic_strain"] = Scalar(torch.rand(*batch, generator=g, dtype=F64) * 0.01)
    ulay, rlay, b, shaped = update._layouts(given, guess)
    fn, _, datas = update._residual_fn(given, ulay, rlay, b)
    u0 = ulay.flatten(shaped, b)
    return fn, u0, datas, (given, guess, ulay, rlay, b)


def test_eager_assembly_equals_block_rows(update, monkeypatch):
    fn, u0, datas, _ = _residual_and_jacobian(update)
    r, J = fn(u0, *datas)
    assert J.shape == (4, 19, 19)
    assert J.movedim(-1, 0).is_contiguous()  # a view of the seed-major buffer
    monkeypatch.setattr(iu, "_tracing", lambda: True)
    r_ref, J_ref = fn(u0, *datas)
    torch.testing.assert_close(r, r_ref, rtol=0, atol=0)
    torch.testing.assert_close(J, J_ref, rtol=0, atol=0)


def test_structural_zero_blocks_are_zero_filled(update, monkeypatch):
    """Absent blocks (here removed by hand) are zeros in both assemblies."""
    _, _, _, (given, guess, ulay, rlay, b) = _residual_and_jacobian(update)
    seeds = ulay.seeds(F64, torch.device("cpu"))
    v = {n: {iu._SEED + n: seeds[n]} for n in ulay.names}
    *_, v_out = update._call({**given, **guess}, v)
    tangents = {r: dict(v_out[r]) for r in rlay.names}
    del tangents["X1_residual"][iu._SEED + "X2"]
    del tangents["equivalent_plastic_strain_residual"][iu._SEED + "stress"]
    like = torch.zeros((), dtype=F64)
    J = iu._jacobian(rlay, tangents, ulay, b, like)
    monkeypatch.setattr(iu, "_tracing", lambda: True)
    J_ref = iu._jacobian(rlay, tangents, ulay, b, like)
    torch.testing.assert_close(J, J_ref, rtol=0, atol=0)
    assert bool((J[:, 7:13, 13:19] == 0).all()) and bool((J[:, 6, 0:6] == 0).all())
    assert bool((J[:, 13:19, 7:13] != 0).any())


def test_eager_assembly_against_finite_differences(update):
    fn, u0, datas, _ = _residual_and_jacobian(update)
    _, J = fn(u0, *datas)
    h = 1e-6
    for k in (0, 3, 6, 7, 12, 18):
        du = torch.zeros_like(u0)
        du[..., k] = h * (1.0 + u0[..., k].abs())
        rp, _ = fn(u0 + du, *datas)
        rm, _ = fn(u0 - du, *datas)
        fd = (rp - rm) / (2 * du[..., k : k + 1])
        torch.testing.assert_close(J[..., :, k], fd, rtol=1e-5, atol=1e-6, msg=f"column {k}")
