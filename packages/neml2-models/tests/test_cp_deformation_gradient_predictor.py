"""CrystalPlasticityDeformationGradientPredictor: the guess of Fp for multiplicative
crystal plasticity (its finite-difference check is the registry-wide one,
tests-integration/model_samples/predictors/)."""

from __future__ import annotations

import torch

from neml2.models import load_input
from neml2.models.predictors import CrystalPlasticityDeformationGradientPredictor
from neml2.tensors import R2

torch.set_default_dtype(torch.float64)

EYE = torch.eye(3)


def _batch(seed: int, n: int, size: float):
    g = torch.Generator().manual_seed(seed)
    Fp1 = R2(EYE + 0.02 * torch.randn(n, 3, 3, generator=g))
    Fe = EYE + size * torch.randn(n, 3, 3, generator=g)
    return R2(Fe @ Fp1.data), Fp1, Fe


def test_defaults_and_names():
    m = CrystalPlasticityDeformationGradientPredictor()
    assert float(m.param("scale").data.detach()) == 0.1
    assert float(m.param("threshold").data.detach()) == 1e-3
    assert list(m.input_spec) == ["deformation_gradient", "plastic_deformation_gradient~1"]
    assert list(m.output_spec) == ["plastic_deformation_gradient"]


def test_elastic_part_of_the_guess_is_the_scaled_trial():
    """Over the threshold, F Fp⁻¹ = I + s (F Fp~1⁻¹ - I); under it, Fp = Fp~1."""
    F, Fp1, Fe_trial = _batch(0, 6, 0.02)
    # points 0-2 far over the threshold; at 3-5 the trial strain is ~1e-5
    Fe_trial[3:] = EYE + 1e-5 * (Fe_trial[3:] - EYE) / 0.02
    F = R2(Fe_trial @ Fp1.data)
    strain = (0.5 * (Fe_trial + Fe_trial.transpose(-1, -2)) - EYE).flatten(1).norm(dim=-1)
    assert bool((strain[:3] > 1e-2).all()) and bool((strain[3:] < 1e-4).all())
    m = CrystalPlasticityDeformationGradientPredictor(scale=0.3)
    Fp = m(F, Fp1).data
    Fe = F.data @ torch.linalg.inv(Fp)
    err = (Fe[:3] - (EYE + 0.3 * (Fe_trial[:3] - EYE))).abs().max()
    assert err <= 1e-13
    assert torch.equal(Fp[3:], Fp1.data[3:])


def test_scale_one_keeps_the_old_value():
    F, Fp1, _ = _batch(1, 4, 0.05)
    out = CrystalPlasticityDeformationGradientPredictor(scale=1.0)(F, Fp1)
    assert (out.data - Fp1.data).abs().max() <= 1e-13


def test_reference_block_loads(tmp_path):
    f = tmp_path / "p.i"
    f.write_text(
        "[Models]\n  [predictor]\n    type = CrystalPlasticityDeformationGradientPredictor\n"
        "    deformation_gradient = 'F'\n    plastic_deformation_gradient = 'Fp'\n"
        "    scale = 0.1\n    threshold = 1e-3\n  []\n[]\n"
    )
    m = load_input(f).model("predictor")
    assert list(m.input_spec) == ["F", "Fp~1"]
    assert list(m.output_spec) == ["Fp"]
    F, Fp1, _ = _batch(2, 3, 0.01)
    direct = CrystalPlasticityDeformationGradientPredictor(scale=0.1, threshold=1e-3)
    assert torch.equal(m(F, Fp1).data, direct(F, Fp1).data)


def test_traces_for_py_jit():
    """The guess traces whole (fullgraph) and matches py-eager, over and under the gate."""
    import neml2

    F, Fp1, _ = _batch(3, 4, 0.02)
    F.data[2:] = Fp1.data[2:]  # no trial strain: the old value is kept
    m = CrystalPlasticityDeformationGradientPredictor(scale=0.3)
    inputs = {"deformation_gradient": F.data, "plastic_deformation_gradient~1": Fp1.data}
    got = neml2.compile(m, backend="eager").forward(inputs)["plastic_deformation_gradient"]
    want = m(F, Fp1).data
    assert torch.equal(got, want)
    assert torch.equal(want[2:], Fp1.data[2:]) and not torch.equal(want[:2], Fp1.data[:2])
