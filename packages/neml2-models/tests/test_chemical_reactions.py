"""Chemical-reaction leaves: mechanisms, channel geometry, effective volume."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.chemical_reactions.channel_geometry import CylindricalChannelGeometry
from neml2.models.chemical_reactions.effective_volume import EffectiveVolume
from neml2.models.chemical_reactions.reaction_mechanisms import (
    AvramiErofeevNucleation,
    ContractingGeometry,
    DiffusionLimitedReaction,
)
from neml2.tensors import FatalError

T = torch.float64


def test_mechanisms_match_their_formulas():
    a = torch.tensor([0.1, 0.5, 0.9], dtype=T)
    k, n = 0.3, 1.7
    cg = ContractingGeometry(coef=k, order=n).forward({"conversion_degree": a})
    torch.testing.assert_close(cg["reaction_rate"], k * (1 - a) ** n)
    ae = AvramiErofeevNucleation(coef=k, order=n).forward({"conversion_degree": a})
    torch.testing.assert_close(ae["reaction_rate"], k * (1 - a) * (-torch.log(1 - a)) ** n)
    dl = DiffusionLimitedReaction(diffusion_coefficient=2e-3, molar_volume=4.0)
    x = {
        "product_inner_radius": torch.tensor([0.5], dtype=T),
        "solid_inner_radius": torch.tensor([0.5], dtype=T),  # an empty product layer
        "liquid_reactivity": torch.tensor([1.0], dtype=T),
        "solid_reactivity": torch.tensor([0.5], dtype=T),
    }
    rate = dl.forward(x)["reaction_rate"]
    torch.testing.assert_close(rate, torch.tensor([2 * 2e-3 * 0.5 / 4.0 * 0.5 / 0.01], dtype=T))


def test_contracting_geometry_is_finite_at_complete_conversion():
    m = ContractingGeometry(coef=1.0, order=0.5)
    out, jac = m.jacobian({"conversion_degree": torch.tensor([1.0, 1.2], dtype=T)})
    assert torch.isfinite(out["reaction_rate"]).all()
    assert torch.isfinite(jac["reaction_rate"]["conversion_degree"]).all()


def test_channel_geometry_clamps_the_open_fraction():
    m = CylindricalChannelGeometry()
    out, jac = m.jacobian(
        {
            "solid_fraction": torch.tensor([0.6, 0.1], dtype=T),
            "product_fraction": torch.tensor([0.5, 0.2], dtype=T),
        }
    )
    ri = out["inner_radius"]
    assert ri[0] > 0 and torch.isfinite(ri).all()  # 1 - 0.6 - 0.5 < 0: clamped to eps
    assert jac["inner_radius"]["product_fraction"][0] == 0.0
    torch.testing.assert_close(ri[1], torch.tensor(0.7, dtype=T).sqrt())


def test_effective_volume_inputs_and_bad_densities(tmp_path):
    m = EffectiveVolume(
        reference_mass=2.0,
        mass_fractions=("a", "b"),
        densities=(2.0, 4.0),
        open_volume_fraction="o",
    )
    assert m.input_names == ["a", "b", "o"]
    x = {n: torch.tensor([v], dtype=T) for n, v in (("a", 0.5), ("b", 0.5), ("o", 0.5))}
    torch.testing.assert_close(
        m.forward(x)["composite_volume"], torch.tensor([2.0 / 0.5 * (0.25 + 0.125)], dtype=T)
    )
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """\
            [Models]
              [m]
                type = EffectiveVolume
                reference_mass = 1
                mass_fractions = 'a b'
                densities = '1'
              []
            []
            """
        )
    )
    with pytest.raises(FatalError, match=r"input\.i:6.*densities"):
        load_model(p, "m")
    with pytest.raises(FatalError, match="molar_volume"):
        DiffusionLimitedReaction(diffusion_coefficient=1.0, molar_volume=0.0)
