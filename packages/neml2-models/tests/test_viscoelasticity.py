"""Spring-dashpot networks: values and Jacobians against the hand-written equations."""

from __future__ import annotations

import textwrap

import torch

from neml2.models import load_model
from neml2.models.solid_mechanics.viscoelasticity import (
    BurgersElement,
    KelvinVoigtElement,
    LinearDashpot,
    WiechertElement,
    ZenerElement,
)

F64 = torch.float64
EYE = torch.eye(6, dtype=F64)


def _sr2(seed: int, n: int = 4) -> torch.Tensor:
    return torch.randn(n, 6, generator=torch.Generator().manual_seed(seed), dtype=F64)


def test_dashpot_renamed_rate_and_jacobian():
    m = LinearDashpot(stress="s", viscous_strain_rate="ep_rate", viscosity=4.0)
    assert m.input_names == ["s"] and m.output_names == ["ep_rate"]
    s = _sr2(0)
    out, jac = m.jacobian({"s": s})
    torch.testing.assert_close(out["ep_rate"], s / 4.0)
    torch.testing.assert_close(jac["ep_rate"]["s"], (EYE / 4.0).expand(4, 6, 6))


def test_kelvin_voigt_rate_input_follows_the_strain_name():
    m = KelvinVoigtElement(strain="e", modulus=10.0, viscosity=3.0)
    assert m.input_names == ["e", "e_rate"]
    e, ed = _sr2(1), _sr2(2)
    out, jac = m.jacobian({"e": e, "e_rate": ed})
    torch.testing.assert_close(out["stress"], 10.0 * e + 3.0 * ed)
    torch.testing.assert_close(jac["stress"]["e_rate"], (3.0 * EYE).expand(4, 6, 6))


def test_zener_and_wiechert_agree_when_the_second_branch_is_idle():
    # a Wiechert element whose second branch has no stiffness is a Zener element
    z = ZenerElement(equilibrium_modulus=2.0, maxwell_modulus=5.0, maxwell_viscosity=7.0)
    w = WiechertElement(
        equilibrium_modulus=2.0, modulus_1=5.0, viscosity_1=7.0, modulus_2=0.0, viscosity_2=1.0
    )
    assert z.output_names == ["stress", "viscous_strain_rate"]
    assert w.output_names == ["stress", "viscous_strain_1_rate", "viscous_strain_2_rate"]
    e, ev = _sr2(3), _sr2(4)
    oz, jz = z.jacobian({"strain": e, "viscous_strain": ev})
    ow = w.forward({"strain": e, "viscous_strain_1": ev, "viscous_strain_2": _sr2(5)})
    torch.testing.assert_close(oz["stress"], ow["stress"])
    torch.testing.assert_close(oz["viscous_strain_rate"], ow["viscous_strain_1_rate"])
    torch.testing.assert_close(oz["viscous_strain_rate"], 5.0 / 7.0 * (e - ev))
    torch.testing.assert_close(jz["stress"]["strain"], (7.0 * EYE).expand(4, 6, 6))
    torch.testing.assert_close(
        jz["viscous_strain_rate"]["viscous_strain"], (-5 / 7 * EYE).expand(4, 6, 6)
    )


def test_burgers_rates():
    m = BurgersElement(
        maxwell_modulus=8.0, maxwell_viscosity=2.0, kelvin_modulus=3.0, kelvin_viscosity=5.0
    )
    e, evm, ek = _sr2(6), _sr2(7), _sr2(8)
    out, jac = m.jacobian({"strain": e, "maxwell_viscous_strain": evm, "kelvin_voigt_strain": ek})
    s = 8.0 * (e - evm - ek)
    torch.testing.assert_close(out["stress"], s)
    torch.testing.assert_close(out["maxwell_viscous_strain_rate"], s / 2.0)
    torch.testing.assert_close(out["kelvin_voigt_strain_rate"], (s - 3.0 * ek) / 5.0)
    torch.testing.assert_close(
        jac["kelvin_voigt_strain_rate"]["kelvin_voigt_strain"],
        (-(8.0 + 3.0) / 5.0 * EYE).expand(4, 6, 6),
    )


def test_viscosity_given_by_a_variable_becomes_an_input(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = LinearDashpot
                viscosity = 'eta'
              []
            []
            """
        )
    )
    m = load_model(p, "m")
    assert m.input_names == ["stress", "eta"]
    s, eta = _sr2(9), torch.full((4,), 2.0, dtype=F64)
    _, jac = m.jacobian({"stress": s, "eta": eta})
    torch.testing.assert_close(jac["viscous_strain_rate"]["eta"], -s / 4.0)
