"""SR2Invariant: the four invariants against hand formulas on full 3x3 matrices."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.invariant import SR2Invariant
from neml2.tensors import SR2, FatalError

S2 = math.sqrt(2.0)


def _mandel_to_full(x):
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    yz, xz, xy = x[..., 3] / S2, x[..., 4] / S2, x[..., 5] / S2
    rows = [[a, xy, xz], [xy, b, yz], [xz, yz, c]]
    return torch.stack([torch.stack(r, -1) for r in rows], -2)


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def _model(kind):
    return SR2Invariant(tensor="A", invariant="f", invariant_type=kind)


def _hand(kind, M):
    tr = M.diagonal(dim1=-2, dim2=-1).sum(-1)
    AA = (M * M).sum((-2, -1))
    if kind == "I1":
        return tr
    if kind == "I2":
        return 0.5 * (tr**2 - AA)
    eps = torch.finfo(M.dtype).eps
    if kind == "VONMISES":
        S = M - tr[..., None, None] / 3 * torch.eye(3, dtype=M.dtype)
        return torch.sqrt(1.5 * ((S * S).sum((-2, -1)) + eps))
    return torch.sqrt(2.0 / 3.0 * (AA + eps))


@pytest.mark.parametrize("kind", ["I1", "I2", "VONMISES", "EFFECTIVE_STRAIN"])
def test_matches_hand_formula_on_random_batch(kind):
    x = _rand(3, 4, 6, seed=1)
    out = _model(kind).forward({"A": x})["f"]
    assert out.shape == (3, 4)
    torch.testing.assert_close(out, _hand(kind, _mandel_to_full(x)))


@pytest.mark.parametrize(
    ("kind", "value"),
    [("I1", 6.0), ("I2", -66.0), ("VONMISES", math.sqrt(234.0)), ("EFFECTIVE_STRAIN", 10.5830052)],
)
def test_reference_values(kind, value):
    """FillSR2 '1 2 3 4 5 6' = [[1,6,5],[6,2,4],[5,4,3]] (the reference's fixtures)."""
    A = SR2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, dtype=torch.float64)
    assert _model(kind)(A).item() == pytest.approx(value, rel=1e-7)


@pytest.mark.parametrize("kind", ["I1", "I2", "VONMISES", "EFFECTIVE_STRAIN"])
def test_first_and_second_derivatives_match_autograd(kind):
    m = _model(kind)
    x = _rand(6, seed=2)
    _, jac = m.jacobian({"A": x})

    def f(y):
        return m.forward({"A": y})["f"]

    torch.testing.assert_close(jac["f"]["A"], torch.autograd.functional.jacobian(f, x))
    # second order through v2 (one direction pair)
    da, db = _rand(6, seed=3), _rand(6, seed=4)
    A = SR2(x)
    _, _, v2 = m(
        A,
        v={"A": {"a": SR2(da[None]), "b": SR2(db[None])}},
        v2={"A": {}},
    )
    H = torch.autograd.functional.hessian(f, x)
    got = v2["f"]["a"]["b"].data.reshape(()) if "b" in v2["f"].get("a", {}) else 0.0
    torch.testing.assert_close(torch.as_tensor(got, dtype=x.dtype), da @ H @ db)


def test_vonmises_is_finite_at_zero():
    m = _model("VONMISES")
    _, jac = m.jacobian({"A": torch.zeros(6, dtype=torch.float64)})
    assert torch.isfinite(jac["f"]["A"]).all()


def test_sub_batched_input():
    """Per-slip (sub-batch) tensors keep their sub-batch axis."""
    x = SR2(_rand(2, 12, 6, seed=5), 1)
    out = _model("VONMISES")(x)
    assert out.sub_batch_ndim == 1 and out.shape == (2, 12)
    torch.testing.assert_close(out.data, _hand("VONMISES", _mandel_to_full(x.data)))


def test_bad_invariant_type_names_the_option(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = SR2Invariant
                tensor = 'A'
                invariant = 'f'
                invariant_type = 'TRESCA'
              []
            []
            """
        ).lstrip()
    )
    with pytest.raises(FatalError, match=r"input\.i:6.*invariant_type.*TRESCA"):
        load_model(p, "m")
    with pytest.raises(FatalError, match="invariant_type"):
        SR2Invariant(tensor="A", invariant="f", invariant_type="INVALID")


def test_invariant_type_is_required(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        "[Models]\n  [m]\n    type = SR2Invariant\n    tensor = 'A'\n    invariant = 'f'\n"
        "  []\n[]\n"
    )
    with pytest.raises(FatalError, match="missing the required option 'invariant_type'"):
        load_model(p, "m")
