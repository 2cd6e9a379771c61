"""MinMapComplementarity: r = min(s_a a, s_b b)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.complementarity import MinMapComplementarity
from neml2.tensors import FatalError, Scalar


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


@pytest.mark.parametrize(("ia", "sa"), [("LE", -1.0), ("GE", 1.0)])
@pytest.mark.parametrize(("ib", "sb"), [("LE", -1.0), ("GE", 1.0)])
def test_matches_hand_formula_with_derivatives(ia, sa, ib, sb):
    m = MinMapComplementarity(a="f", b="gamma_dot", a_inequality=ia, b_inequality=ib)
    a, b = _rand(50, seed=1), _rand(50, seed=2)
    out, jac = m.jacobian({"f": a, "gamma_dot": b})
    r = out["complementarity"]
    torch.testing.assert_close(r, torch.minimum(sa * a, sb * b))
    pick_a = sa * a < sb * b
    one = torch.ones_like(a)
    torch.testing.assert_close(jac["complementarity"]["f"], torch.where(pick_a, sa * one, 0 * one))
    torch.testing.assert_close(
        jac["complementarity"]["gamma_dot"], torch.where(pick_a, 0 * one, sb * one)
    )


def test_reference_fixture_and_tie_takes_b():
    m = MinMapComplementarity()
    assert m.input_names == ["a", "b"] and m.output_names == ["complementarity"]
    t = torch.float64
    assert m.forward({"a": torch.tensor(3.1, dtype=t), "b": torch.tensor(2.5, dtype=t)})[
        "complementarity"
    ].item() == pytest.approx(-3.1)
    # (batch (1,): Model.jacobian cannot reshape a 0-dim Scalar-by-Scalar block yet)
    _, jac = m.jacobian({"a": torch.tensor([-1.0], dtype=t), "b": torch.tensor([1.0], dtype=t)})
    assert jac["complementarity"]["b"].item() == 1.0 and jac["complementarity"]["a"].item() == 0.0


def test_per_slip_inputs():
    m = MinMapComplementarity()
    a, b = Scalar(_rand(3, 12, seed=3), 1), Scalar(_rand(3, 12, seed=4), 1)
    r = m(a, b)
    assert r.sub_batch_ndim == 1
    torch.testing.assert_close(r.data, torch.minimum(-a.data, b.data))


def test_bad_inequality_names_the_option(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = MinMapComplementarity
                b_inequality = 'EQ'
              []
            []
            """
        ).lstrip()
    )
    with pytest.raises(FatalError, match=r"input\.i:4.*b_inequality.*EQ"):
        load_model(p, "m")
    with pytest.raises(FatalError, match="a_inequality"):
        MinMapComplementarity(a_inequality="LT")
