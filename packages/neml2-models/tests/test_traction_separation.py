"""Cohesive traction-separation laws: branches, irreversibility and option errors."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.solid_mechanics.traction_separation import (
    BenzeggaghKenaneFullSeparation,
    BilinearTraction,
    CamanhoDavilaCriticalSeparation,
    ModeMixity,
    OrthotropicLinearTraction,
    PowerLawFullSeparation,
    SalehaniIraniTraction,
)
from neml2.tensors import FatalError

F64 = torch.float64


def _s(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def test_mode_mixity_vanishes_in_compression_with_its_derivatives():
    m = ModeMixity()
    out, jac = m.jacobian(
        {"normal_separation": _s(0.5, 0.0, -0.1), "tangential_separation": _s(0.25, 0.3, 0.3)}
    )
    torch.testing.assert_close(out["mode_mixity"], _s(0.5, 0.0, 0.0))
    torch.testing.assert_close(jac["mode_mixity"]["normal_separation"], _s(-1.0, 0.0, 0.0))
    torch.testing.assert_close(jac["mode_mixity"]["tangential_separation"], _s(2.0, 0.0, 0.0))


def test_critical_and_full_separations_in_pure_mode_I_and_in_compression():
    dn = _s(0.1, -0.1)
    dc = CamanhoDavilaCriticalSeparation(
        mode_mixity=0.0, penalty_stiffness=100.0, normal_strength=2.0, shear_strength=3.0
    )
    # opening in pure mode I: delta_c = N / K (to machine precision); compression: S / K
    torch.testing.assert_close(
        dc.forward({"normal_separation": dn})["critical_separation"], _s(0.02, 0.03)
    )
    common = dict(
        mode_mixity=0.0,
        critical_separation=0.02,
        penalty_stiffness=100.0,
        mode_I_fracture_toughness=1.0,
        mode_II_fracture_toughness=4.0,
        shear_strength=3.0,
        eta=2.0,
    )
    # pure mode I: delta_f = 2 G_Ic / (K delta_c) for both criteria; compression: 2 G_IIc / S
    want = _s(2.0 * 1.0 / (100.0 * 0.02), 2.0 * 4.0 / 3.0)
    for cls in (BenzeggaghKenaneFullSeparation, PowerLawFullSeparation):
        got = cls(**common).forward({"normal_separation": dn})["full_separation"]
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_bilinear_damage_regimes_and_irreversibility():
    m = BilinearTraction(penalty_stiffness=10.0, critical_separation=1.0, full_separation=3.0)
    assert m.input_names == [
        "effective_separation",
        "normal_separation",
        "tangential_separation_1",
        "tangential_separation_2",
        "damage~1",
    ]
    dm = _s(0.5, 2.0, 4.0, 2.0)
    d_old = _s(0.0, 0.0, 0.0, 0.9)
    inputs = {
        "effective_separation": dm,
        "normal_separation": dm,
        "tangential_separation_1": _s(0.0, 0.0, 0.0, 0.0),
        "tangential_separation_2": _s(0.0, 0.0, 0.0, 0.0),
        "damage~1": d_old,
    }
    out, jac = m.jacobian(inputs)
    soft = 3.0 * (2.0 - 1.0) / (2.0 * (3.0 - 1.0))
    torch.testing.assert_close(out["damage"], _s(0.0, soft, 1.0, 0.9))
    torch.testing.assert_close(out["traction"][:, 0], 10.0 * (1.0 - out["damage"]) * dm)
    # d(damage)/d(dm) = df dc / (dm^2 (df - dc)) while softening, 0 where frozen by damage~1
    torch.testing.assert_close(
        jac["damage"]["effective_separation"], _s(0.0, 3.0 / (4.0 * 2.0), 0.0, 0.0)
    )
    # damage = max(trial, damage~1): a tie (undamaged) keeps the old value
    torch.testing.assert_close(jac["damage"]["damage~1"], _s(1.0, 0.0, 0.0, 1.0))


def test_penetration_input_is_optional_and_penalised():
    plain = OrthotropicLinearTraction(normal_stiffness=5.0, tangential_stiffness=2.0)
    assert "normal_penetration" not in plain.input_names
    m = OrthotropicLinearTraction(
        normal_stiffness=5.0,
        tangential_stiffness=2.0,
        normal_penetration="pen",
        penalty_stiffness=50.0,
    )
    assert m.input_names == [
        "normal_separation",
        "pen",
        "tangential_separation_1",
        "tangential_separation_2",
    ]
    out = m.forward(
        {
            "normal_separation": _s(0.0),
            "pen": _s(-0.1),
            "tangential_separation_1": _s(1.0),
            "tangential_separation_2": _s(-1.0),
        }
    )
    torch.testing.assert_close(out["traction"], torch.tensor([[-5.0, 2.0, -2.0]], dtype=F64))


def test_salehani_irani_monotonic_is_exponential():
    m = SalehaniIraniTraction(
        normal_characteristic_length=2.0,
        tangential_characteristic_length=1.0,
        normal_strength=3.0,
        shear_strength=4.0,
    )
    dn, ds1, ds2 = _s(0.4), _s(0.3), _s(-0.2)
    out = m.forward(
        {
            "normal_separation": dn,
            "tangential_separation_1": ds1,
            "tangential_separation_2": ds2,
            "damage~1": _s(0.0),
        }
    )
    lt = math.sqrt(2.0)
    x = 0.4 / 2.0 + (0.3 / lt) ** 2 + (0.2 / lt) ** 2
    want = [
        math.e * 3.0 * 0.2 * math.exp(-x),
        math.sqrt(2 * math.e) * 4.0 * 0.3 / lt * math.exp(-x),
        -math.sqrt(2 * math.e) * 4.0 * 0.2 / lt * math.exp(-x),
    ]
    torch.testing.assert_close(out["traction"], torch.tensor([want], dtype=F64))
    torch.testing.assert_close(out["damage"], _s(1.0 - math.exp(-x)))


def test_penetration_option_takes_one_name(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = BilinearTraction
                penalty_stiffness = 1
                critical_separation = 1
                full_separation = 2
                normal_penetration = 'a b'
              []
            []
            """
        )
    )
    with pytest.raises(FatalError, match=r"input.i:8:\d+: .*normal_penetration.*one variable name"):
        load_model(p, "m")
