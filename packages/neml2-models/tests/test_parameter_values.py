"""Parameter values checked at load: finite literals, physical elastic constants, and a
name that silently became an input variable.

* any literal parameter value that is NaN or infinite is an error naming the option's
  file:line (the shared parameter reader, every model);
* a token that starts like a number but is none (``2OO``) is an error, not a variable;
* LinearIsotropicElasticity's constant coefficients must be physical (Poisson's ratio
  in (-1, 0.5), positive moduli, positive K and G from the pair); Lamé's lambda may be
  negative; a coefficient that is a variable is not checked;
* a bare name becomes an input variable (a documented feature): it is recorded with
  its file:line for the drivers' errors, and a near-miss of a [Tensors] or [Models]
  name warns.
"""

from __future__ import annotations

import textwrap
import warnings

import pytest
import torch

from neml2.models import load_input, load_model
from neml2.models.solid_mechanics.elasticity import LinearIsotropicElasticity
from neml2.tensors import FatalError, Scalar

ELASTIC = """
[Tensors]
  [batch_nu]
    type = Python
    expr = 'Scalar(torch.tensor([0.2, 0.3, 0.5, 0.1]))'
  []
  [yield]
    type = Python
    expr = 'Scalar(100.0)'
  []
[]
[Models]
  [m]
    type = LinearIsotropicElasticity
    coefficients = {values}
    coefficient_types = {types}
  []
[]
"""
EN = "'YOUNGS_MODULUS POISSONS_RATIO'"


def _write(tmp_path, text: str):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _line(path, needle: str) -> int:
    return 1 + next(i for i, s in enumerate(path.read_text().splitlines()) if needle in s)


def _elastic(tmp_path, values: str, types: str = EN):
    p = _write(tmp_path, ELASTIC.format(values=values, types=types))
    return p, lambda: load_model(p, "m")


BAD = [
    ("'200e3 0.5'", EN, "POISSONS_RATIO = 0.5 must lie in (-1, 0.5)"),
    ("'200e3 -1'", EN, "POISSONS_RATIO = -1 must lie in (-1, 0.5)"),
    ("'200e3 0.7'", EN, "POISSONS_RATIO = 0.7 must lie in (-1, 0.5)"),
    ("'0 0.3'", EN, "YOUNGS_MODULUS = 0 must be positive"),
    ("'-5 0.3'", EN, "YOUNGS_MODULUS = -5 must be positive"),
    ("'-1 5'", "'BULK_MODULUS SHEAR_MODULUS'", "BULK_MODULUS = -1 must be positive"),
    ("'100 0'", "'BULK_MODULUS SHEAR_MODULUS'", "SHEAR_MODULUS = 0 must be positive"),
    # E = 300, G = 50: nu = E / 2G - 1 = 2, so K < 0
    ("'300 50'", "'YOUNGS_MODULUS SHEAR_MODULUS'", "give a bulk modulus K of -33.3333"),
    # lambda = -30, G = 30: K = lambda + 2G/3 = -10
    ("'-30 30'", "'LAME_LAMBDA SHEAR_MODULUS'", "give a bulk modulus K of -10"),
    ("'200e3 0.3'", "'SHEAR_MODULUS POISSONS_RATIO'", ""),  # fine: the control row
    ("'200e3 batch_nu'", EN, "POISSONS_RATIO = 0.5 (at batch index 2) must lie"),
]


@pytest.mark.parametrize("values,types,fragment", BAD, ids=[f"{v}-{t}" for v, t, _ in BAD])
def test_elastic_constants_outside_their_range(tmp_path, values, types, fragment):
    p, load = _elastic(tmp_path, values, types)
    if not fragment:
        load()
        return
    with pytest.raises(FatalError) as e:
        load()
    message = str(e.value)
    assert fragment in message
    assert f"input.i:{_line(p, 'coefficients =')}:" in message
    assert "option 'coefficients'" in message


@pytest.mark.parametrize(
    "values,types",
    [
        ("'-10 30'", "'LAME_LAMBDA SHEAR_MODULUS'"),  # a negative lambda is physical
        ("'200e3 0.4999'", EN),
        ("'200e3 -0.999'", EN),
        ("'E 0.3'", EN),  # E is an input: not known at load
        ("'E nu'", EN),
    ],
)
def test_physical_or_variable_coefficients_load(tmp_path, values, types):
    _, load = _elastic(tmp_path, values, types)
    load()


def test_a_variable_coefficient_is_not_checked_but_the_constant_one_is(tmp_path):
    _, load = _elastic(tmp_path, "'E 0.5'")
    with pytest.raises(FatalError, match=r"POISSONS_RATIO = 0\.5 must lie"):
        load()


def test_python_construction_is_checked_too():
    types = ["YOUNGS_MODULUS", "POISSONS_RATIO"]
    LinearIsotropicElasticity(coefficients=[200e3, 0.3], coefficient_types=types)
    with pytest.raises(FatalError, match=r"POISSONS_RATIO = 0\.5 must lie"):
        LinearIsotropicElasticity(coefficients=[200e3, 0.5], coefficient_types=types)
    with pytest.raises(FatalError, match="YOUNGS_MODULUS = inf must be positive"):
        LinearIsotropicElasticity(
            coefficients=[Scalar(torch.tensor(float("inf"))), 0.3], coefficient_types=types
        )


@pytest.mark.parametrize("token", ["nan", "NaN", "inf", "-inf", "Infinity", "+INF"])
def test_non_finite_literals_name_the_option(tmp_path, token):
    p, load = _elastic(tmp_path, f"'200e3 {token}'")
    with pytest.raises(FatalError) as e:
        load()
    message = str(e.value)
    assert f"input.i:{_line(p, 'coefficients =')}:" in message
    assert f"option 'coefficients' = '200e3 {token}': '{token}' is not a finite number" in message


def test_non_finite_literal_in_any_model(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [h]
            type = LinearIsotropicHardening
            hardening_modulus = nan
          []
        []
        """,
    )
    with pytest.raises(FatalError, match=r"input\.i:4:5: option 'hardening_modulus' = 'nan'"):
        load_model(p, "h")


def test_nan_float_option(tmp_path):
    p = _write(
        tmp_path,
        """
        [Solvers]
          [newton]
            type = Newton
            abs_tol = nan
          []
        []
        """,
    )
    ctx = load_input(p)
    with pytest.raises(FatalError, match=r"input\.i:4:5: option 'abs_tol' = 'nan' is NaN"):
        ctx.object("Solvers", "newton")


@pytest.mark.parametrize("token", ["2OO", "1e5x", "-3a", ".5e", "1,5"])
def test_number_like_tokens_are_not_variables(tmp_path, token):
    _, load = _elastic(tmp_path, f"'{token} 0.3'")
    with pytest.raises(FatalError, match=f"option 'coefficients' = '{token}' is not a number"):
        load()


def test_a_bare_name_becomes_an_input_and_is_recorded(tmp_path):
    p, _ = _elastic(tmp_path, "'abc 0.3'")
    ctx = load_input(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no near miss: no warning
        model = ctx.top_model("m")
    assert "abc" in model.input_spec
    line = _line(p, "coefficients =")
    assert ctx.free_inputs == {"abc": [f"{p}:{line}:5: option 'coefficients' = 'abc'"]}
    origin = ctx.free_input_origin("abc")
    assert "'abc' is an input variable because" in origin
    assert "is not a number, a [Tensors] name or a model output" in origin
    assert ctx.free_input_origin("strain") == ""


def test_a_near_miss_of_a_tensor_name_warns(tmp_path):
    p, _ = _elastic(tmp_path, "'200e3 batch_un'")
    with pytest.warns(UserWarning) as record:
        model = load_model(p, "m")
    assert "batch_un" in model.input_spec
    (w,) = [r for r in record if "batch_un" in str(r.message)]
    text = str(w.message)
    assert f"input.i:{_line(p, 'coefficients =')}:" in text
    assert "it becomes the input variable 'batch_un' (did you mean 'batch_nu'?)" in text


@pytest.mark.parametrize(
    ("a", "b", "typo"),
    [
        ("batch_un", "batch_nu", True),  # swapped neighbours
        ("batch_n", "batch_nu", True),  # a letter missing
        ("batch_nuu", "batch_nu", True),  # a letter too many
        ("batch_mu", "batch_nu", True),  # a letter wrong
        ("internal/scaled_cell_velocity", "scaled_cell_velocity", False),  # a variable path
        ("abcd", "badc", False),
        ("nu", "nu", False),
    ],
)
def test_only_a_one_typo_near_miss_counts(a, b, typo):
    from neml2.models._input_file import _one_edit

    assert _one_edit(a, b) is typo and _one_edit(b, a) is typo
