"""Phase-field fracture leaves: degradation, crack geometric functions, energy split."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.phase_field_fracture.degradation import (
    PowerDegradationFunction,
    RationalDegradationFunction,
)
from neml2.models.phase_field_fracture.strain_energy import LinearIsotropicStrainEnergyDensity
from neml2.tensors import FatalError

T = torch.float64


def _model(tmp_path, body: str, name: str = "m"):
    p = tmp_path / "input.i"
    p.write_text(
        "[Models]\n  [m]\n" + textwrap.indent(textwrap.dedent(body), "    ") + "  []\n[]\n"
    )
    return load_model(p, name)


@pytest.mark.parametrize("eta", [0.0, 0.05])
def test_degradation_endpoints(eta):
    d = torch.tensor([0.0, 1.0], dtype=T)
    for m in (
        PowerDegradationFunction(power=2.0, eta=eta),
        RationalDegradationFunction(power=2.0, b1=1.0, b2=1.3868, b3=0.6567, eta=eta),
    ):
        g = m.forward({"phase": d})["degradation"]
        torch.testing.assert_close(g, torch.tensor([1.0, eta], dtype=T))


def test_rational_degradation_formula_and_slope():
    m = RationalDegradationFunction(power=2.5, b1=2.0, b2=0.5, b3=3.0)
    d = torch.tensor([0.1, 0.4, 0.8], dtype=T, requires_grad=True)
    f = (1 - d) ** 2.5
    q = 2.0 * d * (1 + 0.5 * d + 0.5 * 3.0 * d * d)
    ref = f / (f + q)
    out, jac = m.jacobian({"phase": d.detach()})
    torch.testing.assert_close(out["degradation"], ref.detach())
    (grad,) = torch.autograd.grad(ref.sum(), d)
    torch.testing.assert_close(jac["degradation"]["phase"], grad)


def test_voldev_split_adds_up_to_the_whole_energy():
    e = torch.tensor(
        [[0.01, -0.002, 0.003, 0.001, -0.002, 0.004], [-0.02, 0.001, 0.0, 0.0, 0.003, 0.0]],
        dtype=T,
    )
    coef = dict(coefficients=(140e3, 78e3), coefficient_types=("BULK_MODULUS", "SHEAR_MODULUS"))
    whole = LinearIsotropicStrainEnergyDensity(**coef).forward({"strain": e})
    split = LinearIsotropicStrainEnergyDensity(decomposition="VOLDEV", **coef).forward(
        {"strain": e}
    )
    total = split["active_strain_energy_density"] + split["inactive_strain_energy_density"]
    torch.testing.assert_close(total, whole["active_strain_energy_density"])
    assert split["inactive_strain_energy_density"][0] == 0.0  # tension: nothing inactive
    assert split["inactive_strain_energy_density"][1] > 0.0
    assert (whole["inactive_strain_energy_density"] == 0.0).all()


def test_bad_options_name_the_option(tmp_path):
    with pytest.raises(FatalError, match=r"input\.i:5.*decomposition.*SPECTRAL.*not implemented"):
        _model(
            tmp_path,
            """\
            type = LinearIsotropicStrainEnergyDensity
            coefficients = '1e5 0.3'
            decomposition = 'SPECTRAL'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
            """,
        )
    with pytest.raises(FatalError, match=r"input\.i:5.*eta"):
        _model(tmp_path, "type = PowerDegradationFunction\npower = 2\neta = 1.5\n")
    with pytest.raises(FatalError, match="coefficients"):
        LinearIsotropicStrainEnergyDensity(
            coefficients=(1e5, 0.7), coefficient_types=("YOUNGS_MODULUS", "POISSONS_RATIO")
        )
