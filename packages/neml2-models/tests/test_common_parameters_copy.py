"""<T>ConstantParameter, <T>InputParameter, <T>ParameterToVariable and Copy<T>."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.copy_variable import CopyMillerIndex, CopySR2
from neml2.models.common.parameters import (
    MillerIndexConstantParameter,
    ScalarConstantParameter,
    SR2InputParameter,
)
from neml2.tensors import SR2, FatalError, MillerIndex, Scalar

F64 = torch.float64


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def test_constant_parameter_output_is_named_after_the_block(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [youngs]
            type = ScalarConstantParameter
            value = 2.5
          []
          [T]
            type = VecConstantParameter
            value = '1 2 3'
            parameter = 'forces/T'
          []
        []
        """,
    )
    m = load_model(p, "youngs")
    assert m.input_names == [] and m.output_names == ["youngs"]
    torch.testing.assert_close(m.forward({})["youngs"], torch.tensor(2.5, dtype=F64))
    t = load_model(p, "T")
    assert t.output_names == ["forces/T"]
    torch.testing.assert_close(t.forward({})["forces/T"], torch.tensor([1.0, 2.0, 3.0], dtype=F64))


def test_promoted_value_is_an_input_with_identity_tangent():
    m = ScalarConstantParameter(value="v", parameter="p")
    assert m.input_names == ["v"] and m.output_names == ["p"]
    x = Scalar(torch.tensor([1.0, 2.0], dtype=F64))
    d = Scalar(torch.tensor([[0.3, -0.7]], dtype=F64))
    y, v = m(x, v={"v": {"a": d}})
    torch.testing.assert_close(y.data, x.data)
    torch.testing.assert_close(v["p"]["a"].data, d.data)


def test_constant_parameter_without_a_name_outside_hit_is_an_error():
    with pytest.raises(FatalError, match="needs a name"):
        ScalarConstantParameter(value=1.0)


def test_parameter_to_variable_defaults_to_the_block_name(tmp_path):
    p = _write(
        tmp_path,
        """
        [Tensors]
          [S0]
            type = Python
            expr = 'SR2.fill(1, 2, 3, 4, 5, 6)'
          []
        []
        [Models]
          [initial_stress]
            type = SR2ParameterToVariable
            from = 'S0'
          []
        []
        """,
    )
    m = load_model(p, "initial_stress")
    assert m.output_names == ["initial_stress"]
    want = SR2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, dtype=F64).data
    torch.testing.assert_close(m.forward({})["initial_stress"], want)


def test_input_parameter_defaults():
    m = SR2InputParameter()
    assert m.input_names == ["variable"] and m.output_names == ["parameter"]
    x = torch.arange(12.0, dtype=F64).reshape(2, 6)
    torch.testing.assert_close(m.forward({"variable": x})["parameter"], x)


def test_miller_index_parameter_is_an_integer_buffer():
    m = MillerIndexConstantParameter(value=torch.tensor([1.0, 1.0, 0.0]), parameter="n")
    assert [n for n, _ in m.named_parameters()] == []
    out = m()
    assert isinstance(out, MillerIndex) and out.dtype == torch.int64
    assert out.data.tolist() == [1, 1, 0]


def test_copy_keeps_value_and_tangents():
    m = CopySR2(**{"from": "a", "to": "b"})
    x = SR2(torch.randn(3, 6, dtype=F64))
    d = SR2(torch.randn(2, 3, 6, dtype=F64))
    y, v = m(x, v={"a": {"k": d}})
    torch.testing.assert_close(y.data, x.data)
    torch.testing.assert_close(v["b"]["k"].data, d.data)


def test_copy_miller_index():
    m = CopyMillerIndex(**{"from": "a", "to": "b"})
    out = m.forward({"a": torch.tensor([[1, 1, 1], [1, 0, 0]])})["b"]
    assert out.dtype == torch.int64 and out.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_copy_needs_both_names(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [c]
            type = CopyScalar
            from = 'a'
          []
        []
        """,
    )
    with pytest.raises(FatalError, match="missing the required option 'to'"):
        load_model(p, "c")


def test_miller_index_inputs_keep_their_integer_dtype():
    """Integer inputs are checked against the type's own dtype, not the model's."""
    m = CopyMillerIndex(**{"from": "a", "to": "b"}).to(torch.float32)
    out = m.forward({"a": torch.tensor([1, 1, 0])})["b"]
    assert out.dtype == torch.int64
    with pytest.raises(FatalError, match=r"input 'a' has dtype torch.float64.*torch.int64"):
        m.forward({"a": torch.tensor([1.0, 1.0, 0.0], dtype=F64)})
