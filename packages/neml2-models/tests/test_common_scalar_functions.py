"""Scalar building blocks: Arrhenius law, smooth steps, Macaulay split, ratchet,
Fischer-Burmeister complementarity; and the explicit rotation update."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.arrhenius import ArrheniusParameter
from neml2.models.common.complementarity import FBComplementarity
from neml2.models.common.irreversibility import IrreversibleScalar
from neml2.models.common.macaulay_split import MacaulaySplit
from neml2.models.common.smooth_step import HermiteSmoothStep, SymmetricHermiteInterpolation
from neml2.models.common.time_integration import (
    WR2ExplicitExponentialTimeIntegration,
    WR2ImplicitExponentialTimeIntegration,
)
from neml2.tensors import FatalError

F64 = torch.float64


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64)


def test_arrhenius_value_and_temperature_derivative():
    m = ArrheniusParameter(reference_value=2.0, activation_energy=3.0e4, ideal_gas_constant=8.314)
    T = torch.linspace(300.0, 1500.0, 7, dtype=F64)
    out, jac = m.jacobian({"temperature": T})
    p = 2.0 * torch.exp(-3.0e4 / (8.314 * T))
    torch.testing.assert_close(out["parameter"], p)
    torch.testing.assert_close(jac["parameter"]["temperature"], p * 3.0e4 / (8.314 * T * T))
    with pytest.raises(FatalError, match="ideal_gas_constant"):
        ArrheniusParameter(reference_value=1.0, activation_energy=1.0, ideal_gas_constant=0.0)


@pytest.mark.parametrize("complement", [False, True])
def test_hermite_smooth_step(complement):
    m = HermiteSmoothStep(
        argument="x", value="y", lower_bound=1.0, upper_bound=3.0, complement=complement
    )
    x = torch.tensor([0.0, 1.5, 2.0, 2.9, 4.0], dtype=F64)
    out, jac = m.jacobian({"x": x})
    c = ((x - 1.0) / 2.0).clamp(0.0, 1.0)
    y = 3 * c**2 - 2 * c**3
    dy = 6 * c * (1 - c) / 2.0
    sign = -1.0 if complement else 1.0
    torch.testing.assert_close(out["y"], 1 - y if complement else y)
    torch.testing.assert_close(jac["y"]["x"], sign * dy)


def test_symmetric_hermite_bump_has_unit_area_and_matches_formula():
    m = SymmetricHermiteInterpolation(argument="x", output="y", lower_bound=0.5, upper_bound=2.5)
    x = torch.linspace(0.0, 3.0, 30001, dtype=F64)
    y = m.forward({"x": x})["y"]
    assert torch.trapezoid(y, x).item() == pytest.approx(1.0, abs=1e-6)
    c = (x - 0.5) / 2.0
    s = torch.where(c < 0.5, c, 1 - c).clamp(min=0.0)
    torch.testing.assert_close(y, (24 * s**2 - 32 * s**3) / 2.0, atol=1e-12, rtol=1e-12)
    assert y.max().item() == pytest.approx(1.0)  # 2 / (x_h - x_l) at the midpoint


def test_macaulay_split_sums_back():
    m = MacaulaySplit(**{"from": "x", "to_positive": "p", "to_negative": "n"})
    x = _rand(20, seed=1)
    out, jac = m.jacobian({"x": x})
    torch.testing.assert_close(out["p"], x.clamp(min=0.0))
    torch.testing.assert_close(out["n"], x.clamp(max=0.0))
    torch.testing.assert_close(jac["p"]["x"] + jac["n"]["x"], torch.ones_like(x))


def test_irreversible_scalar_ratchets():
    m = IrreversibleScalar(**{"from": "d_trial", "to": "d"})
    assert m.input_names == ["d_trial", "d~1"] and m.output_names == ["d"]
    trial = torch.tensor([0.5, 0.1, 0.3], dtype=F64)
    old = torch.tensor([0.3, 0.2, 0.3], dtype=F64)
    out, jac = m.jacobian({"d_trial": trial, "d~1": old})
    torch.testing.assert_close(out["d"], torch.tensor([0.5, 0.2, 0.3], dtype=F64))
    torch.testing.assert_close(jac["d"]["d_trial"], torch.tensor([1.0, 0.0, 0.0], dtype=F64))
    torch.testing.assert_close(jac["d"]["d~1"], torch.tensor([0.0, 1.0, 1.0], dtype=F64))


@pytest.mark.parametrize(("ia", "sa"), [("LE", -1.0), ("GE", 1.0)])
@pytest.mark.parametrize(("ib", "sb"), [("LE", -1.0), ("GE", 1.0)])
def test_fischer_burmeister(ia, sa, ib, sb):
    m = FBComplementarity(a_inequality=ia, b_inequality=ib)
    a, b = _rand(30, seed=2), _rand(30, seed=3)
    out, jac = m.jacobian({"a": a, "b": b})
    n = torch.sqrt(a * a + b * b)
    torch.testing.assert_close(out["complementarity"], sa * a + sb * b - n)
    torch.testing.assert_close(jac["complementarity"]["a"], sa - a / n)
    torch.testing.assert_close(jac["complementarity"]["b"], sb - b / n)


def test_fischer_burmeister_reference_value_and_origin():
    m = FBComplementarity()
    zero = torch.zeros(1, dtype=F64)
    out, jac = m.jacobian({"a": zero, "b": zero})
    assert out["complementarity"].item() == 0.0  # exact value at the kink
    assert jac["complementarity"]["a"].item() == 1.0  # regularised, finite derivative
    r = m.forward({"a": torch.tensor(3.1, dtype=F64), "b": torch.tensor(2.5, dtype=F64)})
    assert r["complementarity"].item() == pytest.approx(5.6 - math.hypot(3.1, 2.5))


def test_fischer_burmeister_bad_inequality_names_the_option(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = FBComplementarity
                a_inequality = 'LT'
              []
            []
            """
        ).lstrip()
    )
    with pytest.raises(FatalError, match=r"input\.i:4.*a_inequality.*LT"):
        load_model(p, "m")


def test_explicit_rotation_update_zeroes_the_implicit_residual():
    explicit = WR2ExplicitExponentialTimeIntegration(variable="r", time="t")
    implicit = WR2ImplicitExponentialTimeIntegration(variable="r", time="t")
    assert explicit.input_names == ["r~1", "r_rate", "t", "t~1"]
    assert explicit.output_names == ["r"]
    r_n = 0.1 * _rand(5, 3, seed=4)
    w = _rand(5, 3, seed=5)
    t, t_n = torch.full((5,), 1.3, dtype=F64), torch.full((5,), 1.1, dtype=F64)
    inputs = {"r~1": r_n, "r_rate": w, "t": t, "t~1": t_n}
    r = explicit.forward(inputs)["r"]
    res = implicit.forward({"r": r, **inputs})["r_residual"]
    torch.testing.assert_close(res, torch.zeros_like(res), atol=1e-14, rtol=0.0)
    zero_rate = explicit.forward({**inputs, "r_rate": torch.zeros_like(w)})["r"]
    torch.testing.assert_close(zero_rate, r_n)
