"""Linear and bilinear interpolation tables against numpy / hand formulas."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from neml2.models import load_model
from neml2.models.common.interpolation import (
    ScalarBilinearInterpolation,
    ScalarLinearInterpolation,
    SR2BilinearInterpolation,
    SR2LinearInterpolation,
)
from neml2.tensors import SR2, FatalError, Scalar

F64 = torch.float64


def _s(value: float) -> Scalar:
    return Scalar(torch.tensor(value, dtype=F64))


def _table(values) -> Scalar:
    return Scalar(torch.tensor(values, dtype=F64), 1)


def test_linear_matches_numpy_interp_with_derivative():
    X = np.array([273.0, 400.0, 800.0, 1200.0])
    Y = np.array([2.0e5, 1.9e5, 1.6e5, 1.1e5])
    m = ScalarLinearInterpolation(argument="T", abscissa=_table(X), ordinate=_table(Y), output="E")
    T = torch.linspace(280.0, 1200.0, 37, dtype=F64)
    out, jac = m.jacobian({"T": T})
    torch.testing.assert_close(out["E"], torch.tensor(np.interp(T.numpy(), X, Y)))
    i = np.clip(np.searchsorted(X, T.numpy(), side="left") - 1, 0, len(X) - 2)
    slope = (Y[i + 1] - Y[i]) / (X[i + 1] - X[i])
    torch.testing.assert_close(jac["E"]["T"], torch.tensor(slope))


def test_linear_lower_bound_is_exclusive_and_out_of_bounds_is_an_error():
    m = ScalarLinearInterpolation(
        argument="x", abscissa=_table([0.0, 1.0]), ordinate=_table([0.0, 2.0])
    )
    torch.testing.assert_close(
        m.forward({"x": torch.tensor([1.0, 0.25], dtype=F64)})["output"],
        torch.tensor([2.0, 0.5], dtype=F64),
    )
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(FatalError, match="out of bounds at 1 of 2"):
            m.forward({"x": torch.tensor([0.5, bad], dtype=F64)})


def test_linear_table_with_leading_sub_batch_axis_and_sr2_ordinate():
    # one table per slip system: X (2 systems, 3 nodes), argument per slip system
    X = Scalar(torch.tensor([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]], dtype=F64), 2)
    base = torch.arange(1.0, 7.0, dtype=F64)
    Y = SR2(torch.stack([torch.stack([k * base for k in (0.0, 1.0, 3.0)])] * 2), 2)
    m = SR2LinearInterpolation(argument="x", abscissa=X, ordinate=Y)
    x = Scalar(torch.tensor([[1.5, 1.0], [0.5, 3.0]], dtype=F64), 1)  # (2 points, 2 systems)
    p = m(x)
    assert p.shape == (2, 2, 6) and p.sub_batch_ndim == 1
    expected = torch.tensor([[2.0, 0.5], [0.5, 2.0]], dtype=F64)
    torch.testing.assert_close(p.data, expected[..., None] * base)


def test_bilinear_matches_hand_formula_and_dim_option():
    X1, X2 = [0.0, 1.0, 2.0], [0.0, 2.0, 3.0]
    Y = torch.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [5.0, 6.0, 7.0]], dtype=F64)
    m = ScalarBilinearInterpolation(
        argument1="a",
        argument2="b",
        abscissa1=_table(X1),
        abscissa2=_table(X2),
        ordinate=Scalar(Y, 2),
    )
    a = torch.tensor([0.5, 1.25, 2.0], dtype=F64)
    b = torch.tensor([0.5, 2.5, 3.0], dtype=F64)
    out, jac = m.jacobian({"a": a, "b": b})
    expect, da, db = [], [], []
    for x1, x2 in zip(a.tolist(), b.tolist(), strict=True):
        i = max(k for k in range(2) if X1[k] < x1)
        j = max(k for k in range(2) if X2[k] < x2)
        xi = (x1 - X1[i]) / (X1[i + 1] - X1[i])
        eta = (x2 - X2[j]) / (X2[j + 1] - X2[j])
        y00, y01, y10, y11 = Y[i, j], Y[i, j + 1], Y[i + 1, j], Y[i + 1, j + 1]
        expect.append(
            (1 - xi) * (1 - eta) * y00
            + xi * (1 - eta) * y10
            + (1 - xi) * eta * y01
            + xi * eta * y11
        )
        da.append(((1 - eta) * (y10 - y00) + eta * (y11 - y01)) / (X1[i + 1] - X1[i]))
        db.append(((1 - xi) * (y01 - y00) + xi * (y11 - y10)) / (X2[j + 1] - X2[j]))
    torch.testing.assert_close(out["output"], torch.stack(expect))
    torch.testing.assert_close(jac["output"]["a"], torch.stack(da))
    torch.testing.assert_close(jac["output"]["b"], torch.stack(db))
    # the same table behind a leading sub-batch axis of size 2, interpolated along dim = 1
    Y2 = Scalar(torch.stack([Y, 2 * Y]), 3)
    X1b = Scalar(torch.tensor([X1, X1], dtype=F64), 2)
    X2b = Scalar(torch.tensor([X2, X2], dtype=F64), 2)
    m2 = ScalarBilinearInterpolation(
        argument1="a", argument2="b", abscissa1=X1b, abscissa2=X2b, ordinate=Y2, dim=1
    )
    p = m2(Scalar(a), Scalar(b))
    assert p.shape == (3, 2) and p.sub_batch_ndim == 1
    torch.testing.assert_close(
        p.data, torch.stack([torch.stack(expect)] * 2, -1) * torch.tensor([1.0, 2.0], dtype=F64)
    )


def test_bilinear_sr2_ordinate_and_shape_errors():
    Y = SR2(torch.ones(3, 2, 6, dtype=F64), 2)
    m = SR2BilinearInterpolation(
        argument1="a",
        argument2="b",
        abscissa1=_table([0.0, 1.0, 2.0]),
        abscissa2=_table([0.0, 2.0]),
        ordinate=Y,
    )
    torch.testing.assert_close(m(_s(0.5), _s(1.0)).data, torch.ones(6, dtype=F64))
    bad = SR2BilinearInterpolation(
        argument1="a",
        argument2="b",
        abscissa1=_table([0.0, 1.0]),
        abscissa2=_table([0.0, 2.0]),
        ordinate=Y,
    )
    with pytest.raises(FatalError, match="do not match the abscissae"):
        bad(_s(0.5), _s(1.0))
    with pytest.raises(FatalError, match="dim"):
        SR2BilinearInterpolation(
            argument1="a",
            argument2="b",
            abscissa1=_table([0.0, 1.0]),
            abscissa2=_table([0.0, 2.0]),
            ordinate=Y,
            dim=-1,
        )


def test_output_is_named_after_the_block(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Tensors]
              [X]
                type = Python
                expr = 'Scalar(torch.tensor([0.0, 1.0])).sub_batch.retag(1)'
              []
            []
            [Models]
              [modulus]
                type = ScalarLinearInterpolation
                argument = 'T'
                abscissa = 'X'
                ordinate = 'X'
              []
              [named]
                type = ScalarLinearInterpolation
                argument = 'T'
                abscissa = 'X'
                ordinate = 'X'
                output = 'E'
              []
            []
            """
        ).lstrip()
    )
    assert load_model(p, "modulus").output_names == ["modulus"]
    assert load_model(p, "named").output_names == ["E"]
    scalar = _s(0.5)
    assert load_model(p, "modulus")(scalar).item() == pytest.approx(0.5)
