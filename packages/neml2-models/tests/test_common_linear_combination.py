"""Linear combinations: weights, offset, promoted weights, sub-batch, errors."""

from __future__ import annotations

import textwrap

import pytest
import torch
from _op_count import CountOps

from neml2.models import load_model
from neml2.models.common.linear_combination import (
    R2LinearCombination,
    ScalarLinearCombination,
    SR2LinearCombination,
    VecLinearCombination,
)
from neml2.tensors import SR2, FatalError, Scalar


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_sr2_weights_and_offset_match_hand_formula(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [m]
            type = SR2LinearCombination
            from = 'A B'
            to = 'C'
            weights = '0.5 8'
            offset = 1.0
          []
        []
        """,
    )
    m = load_model(p, "m")
    A, B = _rand(7, 6, seed=1), _rand(7, 6, seed=2)
    out = m.forward({"A": A, "B": B})["C"]
    # the offset is added to every Mandel component
    torch.testing.assert_close(out, 0.5 * A + 8.0 * B + 1.0)
    assert m.input_names == ["A", "B"] and m.output_names == ["C"]
    # weights and offset are constants (buffers) by default
    assert [n for n, _ in m.named_parameters()] == []
    assert {n for n, _ in m.named_buffers()} == {"w_0", "w_1", "b"}


def test_reference_fixture_value():
    """FillSR2 '1 2 3 4 5 6' - FillSR2 '-1 -4 7 -1 9 1' (the reference's unit test)."""
    m = SR2LinearCombination(**{"from": ["A", "B"], "to": "C", "weights": [1.0, -1.0]})
    f64 = {"dtype": torch.float64}
    A = SR2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, **f64)
    B = SR2.fill(-1.0, -4.0, 7.0, -1.0, 9.0, 1.0, **f64)
    C = SR2.fill(2.0, 6.0, -4.0, 5.0, -4.0, 5.0, **f64)
    torch.testing.assert_close(m(A, B).data, C.data)


def test_unit_weights_add_and_subtract_without_a_product():
    """Weights of exactly 1 / -1 (buffers) add / subtract eagerly: no multiplication of
    the values or the tangents, the same values and Jacobian as the product."""
    m = SR2LinearCombination(**{"from": ["A", "B", "D"], "to": "C", "weights": [1.0, -1.0, 2.5]})
    x = {"A": _rand(5, 6, seed=1), "B": _rand(5, 6, seed=2), "D": _rand(5, 6, seed=3)}
    with CountOps() as ops:
        out, jac = m.jacobian(x)
    want = x["A"] - x["B"] + 2.5 * x["D"]
    torch.testing.assert_close(out["C"], want, rtol=0, atol=0)
    eye = torch.eye(6, dtype=torch.float64).expand(5, 6, 6)
    torch.testing.assert_close(jac["C"]["A"], eye, rtol=0, atol=0)
    torch.testing.assert_close(jac["C"]["B"], -eye, rtol=0, atol=0)
    torch.testing.assert_close(jac["C"]["D"], 2.5 * eye, rtol=0, atol=0)
    # only the weight 2.5 multiplies: its value and its tangent (one seed stack)
    assert ops["mul"] == 2, ops.counts


def test_a_unit_weight_that_needs_a_gradient_or_is_mapped_still_multiplies():
    """A weight of -1 given with requires_grad (``torch.func.functional_call``) gets its
    gradient; under ``vmap`` a weight per mapped entry is read as a weight, not a number."""
    m = ScalarLinearCombination(**{"from": ["a", "b"], "to": "s", "weights": [1.0, -1.0]})
    a, b = _rand(4, seed=1), _rand(4, seed=2)
    w1 = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
    out = torch.func.functional_call(m, {"w_1": w1}, ({"a": a, "b": b},))["s"]
    out.sum().backward()
    torch.testing.assert_close(w1.grad, b.sum())
    ws = torch.tensor([1.0, -1.0, 2.0], dtype=torch.float64)

    def combine(w):
        return torch.func.functional_call(m, {"w_1": w}, ({"a": a, "b": b},))["s"]

    got = torch.func.vmap(combine)(ws)
    torch.testing.assert_close(got, a + ws[:, None] * b)


def test_one_variable_of_weight_one_is_a_copy_not_the_input():
    """``from = 'a'`` with the default weight renames a variable: the output has the
    input's values in memory of its own."""
    m = SR2LinearCombination(**{"from": ["A"], "to": "C"})
    A = _rand(3, 6, seed=4)
    out = m.forward({"A": A})["C"]
    torch.testing.assert_close(out, A, rtol=0, atol=0)
    assert out.data_ptr() != A.data_ptr()


def test_a_unit_weight_changed_after_loading_is_honoured():
    m = ScalarLinearCombination(**{"from": ["a", "b"], "to": "s", "weights": [1.0, -1.0]})
    a, b = Scalar(_rand(4, seed=1)), Scalar(_rand(4, seed=2))
    torch.testing.assert_close(m(a, b).data, a.data - b.data)
    with torch.no_grad():
        m.w_1.fill_(3.0)  # in place: the buffer's version changes
    torch.testing.assert_close(m(a, b).data, a.data + 3.0 * b.data)
    m.w_0 = torch.tensor(-1.0, dtype=torch.float64)  # replaced
    torch.testing.assert_close(m(a, b).data, -a.data + 3.0 * b.data)
    m.w_0 = torch.tensor(0.5, dtype=torch.float64)
    torch.testing.assert_close(m(a, b).data, 0.5 * a.data + 3.0 * b.data)


def test_single_weight_applies_to_all_and_default_is_one():
    m = ScalarLinearCombination(**{"from": ["a", "b", "c"], "to": "s", "weights": [2.0]})
    a, b, c = (Scalar(_rand(5, seed=i)) for i in range(3))
    torch.testing.assert_close(m(a, b, c).data, 2.0 * (a.data + b.data + c.data))
    m1 = ScalarLinearCombination(**{"from": ["a", "b"], "to": "s"})
    torch.testing.assert_close(m1(a, b).data, a.data + b.data)


def test_weights_as_parameters_are_trainable():
    m = VecLinearCombination(
        **{"from": ["u", "v"], "to": "w", "weights": [1.0, 3.0], "weight_as_parameter": [True]}
    )
    assert sorted(n for n, _ in m.named_parameters()) == ["w_0", "w_1"]
    u, v = torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    m.forward({"u": u, "v": v})["w"].sum().backward()
    torch.testing.assert_close(m.w_1.grad, torch.tensor(3.0, dtype=torch.float64))


def test_promoted_weights_and_offset_become_inputs(tmp_path):
    """Weights/offset given by variable names: inputs of the model, with derivatives."""
    p = _write(
        tmp_path,
        """
        [Models]
          [m]
            type = ScalarLinearCombination
            from = 'A B'
            to = 'C'
            weights = 'c_A c_B'
            weight_as_parameter = 'true true'
            offset = 'c0'
            offset_as_parameter = true
          []
        []
        """,
    )
    m = load_model(p, "m")
    assert m.input_names == ["A", "B", "c_A", "c_B", "c0"]
    x = {n: _rand(4, seed=i) for i, n in enumerate(m.input_names)}
    out, jac = m.jacobian(x)
    torch.testing.assert_close(out["C"], x["c_A"] * x["A"] + x["c_B"] * x["B"] + x["c0"])
    J = jac["C"]
    torch.testing.assert_close(J["A"], x["c_A"])
    torch.testing.assert_close(J["c_B"], x["B"])
    torch.testing.assert_close(J["c0"], torch.ones(4, dtype=torch.float64))


def test_weight_given_by_another_model(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [eq1]
            type = SR2Invariant
            tensor = 'a'
            invariant = 'a_bar'
            invariant_type = I1
          []
          [eq3]
            type = SR2LinearCombination
            from = 'a b'
            to = 'b_rate'
            weights = 'eq1 2'
            weight_as_parameter = true
          []
        []
        """,
    )
    m = load_model(p, "eq3")
    a, b = _rand(3, 6, seed=3), _rand(3, 6, seed=4)
    out = m.forward({"a": a, "b": b})["b_rate"]
    tr = a[:, :3].sum(-1, keepdim=True)
    torch.testing.assert_close(out, tr * a + 2.0 * b)


def test_sub_batched_inputs_and_weights():
    """Per-grain values (sub-batch 5) combined with a global one and a per-grain weight."""
    m = SR2LinearCombination(**{"from": ["x", "y"], "to": "z", "weights": ["wx", 2.0]})
    x = SR2(_rand(4, 5, 6, seed=5), 1)
    y = SR2(_rand(4, 6, seed=6))
    wx = Scalar(_rand(4, 5, seed=7), 1)
    z = m(x, y, wx)
    assert z.sub_batch_ndim == 1 and z.shape == (4, 5, 6)
    torch.testing.assert_close(z.data, wx.data[..., None] * x.data + 2.0 * y.data[:, None, :])


def test_r2_offset():
    m = R2LinearCombination(**{"from": ["F"], "to": "G", "weights": [2.0], "offset": [0.5]})
    F = _rand(2, 3, 3, seed=8)
    torch.testing.assert_close(m.forward({"F": F})["G"], 2.0 * F + 0.5)


@pytest.mark.parametrize(
    ("opts", "option", "message"),
    [
        ("weights = '1 2 3'", "weights", "expected 1 or 2 weights, got 3"),
        ("weight_as_parameter = 'true false true'", "weight_as_parameter", "1 or 2 entries"),
        ("offset = '1 2'", "offset", "one offset"),
    ],
)
def test_bad_options_name_the_option(tmp_path, opts, option, message):
    p = _write(
        tmp_path,
        f"""
        [Models]
          [m]
            type = SR2LinearCombination
            from = 'A B'
            to = 'C'
            {opts}
          []
        []
        """,
    )
    with pytest.raises(FatalError, match=message) as e:
        load_model(p, "m")
    assert "input.i:6" in str(e.value)  # the line of the offending option


def test_repeated_and_missing_variables(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [m]
            type = SR2LinearCombination
            from = 'A A'
            to = 'C'
          []
          [n]
            type = SR2LinearCombination
            from = 'A'
          []
        []
        """,
    )
    with pytest.raises(FatalError, match=r"input\.i:4.*listed twice: A"):
        load_model(p, "m")
    with pytest.raises(FatalError, match="missing the required option 'to'"):
        load_model(p, "n")
