"""Porous-flow leaves: permeability laws, capillary pressure, saturation, advective stress."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.porous_flow.advective_stress import AdvectiveStress
from neml2.models.porous_flow.capillary_pressure import (
    BrooksCoreyCapillaryPressure,
    VanGenuchtenCapillaryPressure,
)
from neml2.models.porous_flow.permeability import KozenyCarmanPermeability
from neml2.tensors import FatalError

T = torch.float64


@pytest.mark.parametrize(
    "model",
    [
        BrooksCoreyCapillaryPressure(
            threshold_pressure=2.3, exponent=0.7, log_extension=True, transition_saturation=0.1
        ),
        VanGenuchtenCapillaryPressure(a=0.4, m=0.6, log_extension=True, transition_saturation=0.2),
    ],
    ids=["BrooksCorey", "VanGenuchten"],
)
def test_log_extension_is_c1_at_the_transition(model):
    sp = model.opts["transition_saturation"]
    h = 1e-7
    s = torch.tensor([sp - h, sp + h], dtype=T)
    out, jac = model.jacobian({"effective_saturation": s})
    pc, slope = out["capillary_pressure"], jac["capillary_pressure"]["effective_saturation"]
    torch.testing.assert_close(pc[0], pc[1], rtol=1e-5, atol=0)
    torch.testing.assert_close(slope[0], slope[1], rtol=1e-5, atol=0)
    # below Sp, log(Pc) is linear in S: finite at S = 0
    at0 = model.forward({"effective_saturation": torch.tensor([0.0], dtype=T)})
    assert torch.isfinite(at0["capillary_pressure"]).all()


def test_no_extension_follows_the_law():
    m = BrooksCoreyCapillaryPressure(threshold_pressure=2.0, exponent=0.5)
    s = torch.tensor([0.05, 0.5], dtype=T)
    torch.testing.assert_close(
        m.forward({"effective_saturation": s})["capillary_pressure"], 2.0 * s**-2.0
    )


def test_kozeny_carman_zero_reference_porosity_with_zero_exponent():
    # (phi0 / (1 - phi0))^m with phi0 = 0, m = 0 is 0^0 = 1, not NaN
    m = KozenyCarmanPermeability(reference_permeability=3.0, reference_porosity=0.0, n=0.8, m=0.0)
    k = m.forward({"porosity": torch.tensor([0.01], dtype=T)})["permeability"]
    torch.testing.assert_close(k, 3.0 * torch.tensor([0.01 / 0.99], dtype=T) ** 0.8)


def test_advective_stress_optional_jacobians():
    F = torch.eye(3, dtype=T) + 0.1
    P = torch.arange(9, dtype=T).reshape(3, 3)
    plain = AdvectiveStress(coefficient=1.5)
    assert plain.input_names == ["deformation_gradient", "pk1_stress"]
    ps = plain.forward({"deformation_gradient": F, "pk1_stress": P})["advective_stress"]
    torch.testing.assert_close(ps, -0.5 * (P * F).sum())
    full = AdvectiveStress(coefficient=1.5, js="Js", jt="Jt")
    assert full.input_names == ["deformation_gradient", "pk1_stress", "Js", "Jt"]
    J = {"Js": torch.tensor(0.8, dtype=T), "Jt": torch.tensor(1.2, dtype=T)}
    ps2 = full.forward({"deformation_gradient": F, "pk1_stress": P, **J})["advective_stress"]
    torch.testing.assert_close(ps2, ps * 0.8 ** (-5 / 3) * 1.2 ** (-2 / 3))


def test_bad_options_name_the_option(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """\
            [Models]
              [m]
                type = VanGenuchtenCapillaryPressure
                a = 1
                m = 0.5
                log_extension = true
              []
            []
            """
        )
    )
    with pytest.raises(FatalError, match="transition_saturation"):
        load_model(p, "m")
    with pytest.raises(
        FatalError,
        match=r"option 'transition_saturation' = 1\.5 is out of range: it must be in \[0, 1\]",
    ):
        BrooksCoreyCapillaryPressure(
            threshold_pressure=1.0, exponent=1.0, transition_saturation=1.5
        )
