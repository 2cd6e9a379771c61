"""Products, p-norm, determinants and type conversions of the common models."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.conversions import (
    R2ToSR2,
    R2ToWR2,
    ScalarToDiagonalSR2,
    SR2ToR2,
    VecComponents,
)
from neml2.models.common.determinant import R2Determinant, SR2Determinant
from neml2.models.common.pnorm import ScalarPNorm
from neml2.models.common.products import R2Multiplication, ScalarMultiplication
from neml2.tensors import R2, SR2, FatalError, Scalar

F64 = torch.float64


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64)


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


# ------------------------------------------------------------------ ScalarMultiplication
def test_scalar_multiplication_with_reciprocals():
    m = ScalarMultiplication(
        **{"from": ["a", "b", "c"], "to": "y", "scaling": 2.0, "reciprocal": [False, True, False]}
    )
    a, b, c = _rand(5, seed=1), _rand(5, seed=2) + 3.0, _rand(5, seed=3)
    y = m.forward({"a": a, "b": b, "c": c})["y"]
    torch.testing.assert_close(y, 2.0 * a / b * c)


def test_scalar_multiplication_promoted_scaling_gets_its_tangent():
    m = ScalarMultiplication(**{"from": ["a"], "to": "y", "scaling": "k"})
    assert m.input_names == ["a", "k"]
    a, k = Scalar(_rand(4, seed=4)), Scalar(_rand(4, seed=5))
    d = Scalar(_rand(1, 4, seed=6))
    _, v = m(a, k, v={"k": {"k": d}})
    torch.testing.assert_close(v["y"]["k"].data, d.data * a.data)


@pytest.mark.parametrize(
    ("opts", "message", "line"),
    [
        ("from = 'a b'\n    reciprocal = 'true false true'", "expected 1 or 2 entries, got 3", 6),
        ("from = 'a a'\n    reciprocal = false", "listed twice", 5),
    ],
)
def test_scalar_multiplication_bad_options(tmp_path, opts, message, line):
    p = _write(
        tmp_path,
        f"[Models]\n  [m]\n    type = ScalarMultiplication\n    to = 'y'\n    {opts}\n  []\n[]\n",
    )
    with pytest.raises(FatalError, match=message) as e:
        load_model(p, "m")
    assert f"input.i:{line}" in str(e.value)  # the line of the offending option


# ------------------------------------------------------------------ R2Multiplication
@pytest.mark.parametrize("inv_a", [False, True])
@pytest.mark.parametrize("tr_b", [False, True])
def test_r2_multiplication_matches_torch(inv_a, tr_b):
    m = R2Multiplication(A="A", B="B", to="C", invert_A=inv_a, transpose_B=tr_b)
    a = _rand(4, 3, 3, seed=7) + 3 * torch.eye(3, dtype=F64)
    b = _rand(4, 3, 3, seed=8)
    opa = torch.linalg.inv(a) if inv_a else a
    opb = b.transpose(-1, -2) if tr_b else b
    torch.testing.assert_close(m.forward({"A": a, "B": b})["C"], opa @ opb)


# ------------------------------------------------------------------ ScalarPNorm
def test_pnorm_value_and_derivatives_at_zero():
    m = ScalarPNorm(**{"from": ["x", "y"], "to": "n", "exponent": 2.0, "weights": [1.0, 3.0]})
    x = Scalar(torch.tensor([4.0, 1.0], dtype=F64))
    y = Scalar(torch.tensor([0.0, 2.0], dtype=F64))
    n = m(x, y)
    want = torch.sqrt(x.data**2 + 3.0 * y.data**2)
    torch.testing.assert_close(n.data, want)
    # second derivative along y at y = 0 (first point): d2n/dy2 = 3 / n
    d = Scalar(torch.ones(1, 2, dtype=F64))
    *_, v, v2 = m(x, y, v={"y": {"a": d}}, v2={"y": {}})
    torch.testing.assert_close(v["n"]["a"].data[0, 0], torch.tensor(0.0, dtype=F64))
    torch.testing.assert_close(v2["n"]["a"]["a"].data[0, 0, 0], 3.0 / want[0])


def test_pnorm_cubic_is_smooth_at_zero():
    m = ScalarPNorm(**{"from": ["x", "y"], "to": "n", "exponent": 3.0})
    x = Scalar(torch.tensor([-2.0], dtype=F64))
    y = Scalar(torch.tensor([0.0], dtype=F64))
    d = Scalar(torch.ones(1, 1, dtype=F64))
    n, v = m(x, y, v={"x": {"a": d}, "y": {"b": d}})
    torch.testing.assert_close(n.data, torch.tensor([2.0], dtype=F64))
    # dn/dx = sign(x) |x|^2 n^(1-p) = -4 / 4 = -1; dn/dy = 0
    torch.testing.assert_close(v["n"]["a"].data, torch.tensor([[-1.0]], dtype=F64))
    assert torch.all(v["n"]["b"].data == 0.0)


def test_pnorm_weight_count_is_checked():
    with pytest.raises(FatalError, match="expected 1 or 2 weights, got 3"):
        ScalarPNorm(**{"from": ["x", "y"], "to": "n", "exponent": 2.0, "weights": [1.0] * 3})


# ------------------------------------------------------------------ determinants
def test_determinants():
    f = _rand(5, 3, 3, seed=9)
    m = R2Determinant()
    assert m.input_names == ["F"] and m.output_names == ["J"]
    torch.testing.assert_close(m.forward({"F": f})["J"], torch.linalg.det(f))
    s = SR2.fill(2.0, 3.0, 5.0, 0.5, 0.0, 1.0, dtype=F64)
    j = SR2Determinant(input="C", determinant="detC").forward({"C": s.data})["detC"]
    torch.testing.assert_close(j, torch.linalg.det(s.to_R2().data))


# ------------------------------------------------------------------ conversions
def test_r2_splits_into_sym_and_skew():
    a = _rand(3, 3, 3, seed=10)
    sym = R2ToSR2(input="A", output="S").forward({"A": a})["S"]
    skw = R2ToWR2(input="A", output="W").forward({"A": a})["W"]
    full_sym = SR2ToR2(input="S", output="F").forward({"S": sym})["F"]
    torch.testing.assert_close(full_sym, 0.5 * (a + a.transpose(-1, -2)))
    w = 0.5 * (a - a.transpose(-1, -2))
    torch.testing.assert_close(skw, torch.stack([w[:, 2, 1], w[:, 0, 2], w[:, 1, 0]], -1))


def test_scalar_to_diagonal_sr2():
    s = _rand(4, seed=11)
    out = ScalarToDiagonalSR2(input="s", output="S").forward({"s": s})["S"]
    want = torch.zeros(4, 6, dtype=F64)
    want[:, :3] = s[:, None]
    torch.testing.assert_close(out, want)


def test_vec_components():
    m = VecComponents(**{"from": "jump", "to": ["n", "s1", "s2"]})
    v = _rand(2, 3, seed=12)
    out = m.forward({"jump": v})
    for i, name in enumerate(["n", "s1", "s2"]):
        torch.testing.assert_close(out[name], v[:, i])
    with pytest.raises(FatalError, match="exactly 3 output names, got 2"):
        VecComponents(**{"from": "jump", "to": ["n", "s"]})


def test_tangents_of_the_conversions_are_the_linear_maps():
    a = R2(_rand(2, 3, 3, seed=13))
    d = R2(_rand(1, 2, 3, 3, seed=14))
    _, v = R2ToSR2(input="A", output="S")(a, v={"A": {"k": d}})
    torch.testing.assert_close(v["S"]["k"].data, d.sym().data)
