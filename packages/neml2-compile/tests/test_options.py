"""Compile options: -d pairs, -p names, devices and dtypes, with precise errors."""

from __future__ import annotations

import pytest

from neml2.compiler import CompileOptions, DerivativePair, parse_derivative
from neml2.tensors import FatalError


@pytest.mark.parametrize(
    ("spec", "pair"),
    [
        ("stress:strain", DerivativePair("stress", "strain")),
        ("stress:", DerivativePair("stress", None)),
        (":strain", DerivativePair(None, "strain")),
        (":", DerivativePair(None, None)),
        ("ep:ep~1", DerivativePair("ep", "ep~1")),
    ],
)
def test_parse_derivative(spec, pair):
    assert parse_derivative(spec) == pair
    assert str(pair) == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("stress", "expected OUT:IN"),
        ("a:b:c", "expected OUT:IN"),
        ("str ess:strain", "'str ess' is not a valid output variable name"),
        ("stress:1x", "'1x' is not a valid input variable name"),
    ],
)
def test_parse_derivative_errors(spec, message):
    with pytest.raises(FatalError, match=message):
        parse_derivative(spec)


def test_defaults():
    o = CompileOptions.from_strings("elasticity")
    assert o.devices == ["cpu"] and o.dtypes == ["float64"] and o.derivatives == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"devices": ["tpu"]}, "--device 'tpu': choose from cpu, cuda"),
        ({"dtypes": ["float16"]}, "--dtype 'float16': choose from float64, float32"),
        ({"dtypes": ["float64", "float64"]}, "duplicate"),
        ({"parameters": ["elasticity E"]}, "-p 'elasticity E'"),
        ({"derivatives": ["stress:strain", "stress:strain"]}, "given twice"),
    ],
)
def test_option_errors(kwargs, message):
    with pytest.raises(FatalError, match=message):
        CompileOptions.from_strings("m", **kwargs)


def test_model_required():
    with pytest.raises(FatalError, match="--model"):
        CompileOptions.from_strings("")
