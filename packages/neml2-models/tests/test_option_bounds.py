"""Valid ranges of numeric options and parameters (``bounds=``), refused at load.

Each error is one line naming file:line, the block and option, the value and the range.
"""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import load_input, load_string
from neml2.models._registry import lookup, registered_types
from neml2.models._schema import Bounds, Schema, catalogue, option, out_of_range
from neml2.solvers import Newton, NewtonWithLineSearch
from neml2.tensors import FatalError, Scalar


def _solver(tmp_path, body: str, typ: str = "Newton"):
    p = tmp_path / "s.i"
    p.write_text(
        "[Solvers]\n  [newton]\n    type = "
        + typ
        + "\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "  []\n[]\n"
    )
    return load_input(p).object("Solvers", "newton")


def _one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


# ------------------------------------------------------------------ the interval type
@pytest.mark.parametrize(
    ("text", "inside", "outside", "words"),
    [
        ("[1, inf)", [1, 2, 1e300], [0, -1, math.inf, math.nan], ">= 1"),
        ("(0, inf)", [1e-300, 5.0], [0.0, -1.0, math.inf, math.nan], "> 0"),
        ("[0, 1)", [0.0, 0.5], [1.0, -1e-9, math.nan], "in [0, 1)"),
        ("(-1, 0.5)", [-0.99, 0.0, 0.49], [-1.0, 0.5, math.nan], "in (-1, 0.5)"),
        ("(-inf, 1)", [-1e300, 0.99], [1.0, -math.inf, math.nan], "< 1"),
    ],
)
def test_bounds_parse_contain_describe(text, inside, outside, words):
    b = Bounds.parse(text)
    assert str(b) == text
    assert b.describe() == words
    assert all(b.contains(x) for x in inside)
    assert not any(b.contains(x) for x in outside)
    mask = b.mask(torch.tensor(inside + outside, dtype=torch.float64))
    assert mask.tolist() == [True] * len(inside) + [False] * len(outside)


@pytest.mark.parametrize("text", ["0, 1", "[0, inf]", "[1, 0]", "(a, b)", "[0; 1]"])
def test_malformed_bounds_are_a_programming_error(text):
    with pytest.raises(TypeError, match="bounds"):
        Bounds.parse(text)


def test_bounds_only_on_numbers():
    with pytest.raises(TypeError, match="int and float options only"):
        option("name", str, "x", bounds="[0, 1]")


def test_first_outside_names_the_batch_index():
    b = Bounds.parse("[0, inf)")
    assert b.first_outside(Scalar(torch.tensor([1.0, 2.0, -5.0, -6.0]))) == "-5 (at batch index 2)"
    assert b.first_outside(-3) == "-3"
    assert b.first_outside(torch.tensor(4.0)) is None


# ------------------------------------------------------------------ solvers at load
def test_negative_max_its_is_a_load_error(tmp_path):
    with pytest.raises(FatalError) as e:
        _solver(tmp_path, "max_its = -1\n")
    assert _one_line(e) == (
        f"{tmp_path / 's.i'}:4:5: [Solvers/newton] option 'max_its' = -1 is out of range: "
        "it must be >= 1"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("max_its = 0\n", "option 'max_its' = 0 is out of range: it must be >= 1"),
        ("abs_tol = -1e-8\n", "option 'abs_tol' = -1e-8 is out of range: it must be >= 0"),
        ("rel_tol = -1\n", "option 'rel_tol' = -1 is out of range: it must be >= 0"),
        ("rel_tol = inf\n", "option 'rel_tol' = inf is out of range: it must be >= 0 and finite"),
        (
            "abs_tol = 0\nrel_tol = 0\n",
            "[Solvers/newton]: abs_tol and rel_tol are both 0, so no point could converge",
        ),
    ],
)
def test_newton_tolerances_and_iterations(tmp_path, body, message):
    with pytest.raises(FatalError) as e:
        _solver(tmp_path, body)
    assert message in _one_line(e)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("max_linesearch_iterations = 0\n", "'max_linesearch_iterations' = 0 is out of range"),
        ("linesearch_cutback = 1\n", "'linesearch_cutback' = 1 is out of range: it must be > 1"),
        (
            "linesearch_stopping_criteria = -0.1\n",
            "'linesearch_stopping_criteria' = -0.1 is out of range: it must be >= 0",
        ),
    ],
)
def test_line_search_ranges(tmp_path, body, message):
    with pytest.raises(FatalError) as e:
        _solver(tmp_path, body, "NewtonWithLineSearch")
    assert message in _one_line(e)


def test_valid_solver_options_still_load(tmp_path):
    s = _solver(tmp_path, "max_its = 1\nabs_tol = 0\nrel_tol = 1e-6\n", "NewtonWithLineSearch")
    assert (s.opts["max_its"], s.opts["abs_tol"], s.opts["rel_tol"]) == (1, 0.0, 1e-6)
    assert NewtonWithLineSearch(linesearch_cutback=1.5).opts["linesearch_cutback"] == 1.5


def test_python_keywords_are_checked_too():
    with pytest.raises(FatalError, match=r"^Newton: option 'max_its' = -1 is out of range"):
        Newton(max_its=-1)
    with pytest.raises(FatalError, match="abs_tol and rel_tol are both 0"):
        Newton(abs_tol=0.0, rel_tol=0.0)


# ------------------------------------------------------------------ parameters at load
_YIELD = """
[Models]
  [f]
    type = YieldFunction
    yield_stress = {value}
  []
[]
"""


def test_negative_yield_stress_is_a_load_error():
    with pytest.raises(FatalError) as e:
        load_string(_YIELD.format(value=-100), "f")
    assert _one_line(e) == (
        "<string>:5:5: [Models/f] option 'yield_stress' = -100 is out of range: it must be >= 0"
    )


def test_a_tensors_value_names_the_bad_entry():
    text = _YIELD.format(value="'sy'") + (
        "[Tensors]\n  [sy]\n    type = Python\n"
        "    expr = 'Scalar(torch.tensor([10.0, 5.0, -3.0]))'\n  []\n[]\n"
    )
    with pytest.raises(FatalError) as e:
        load_string(text, "f")
    assert "option 'yield_stress' = 'sy': -3 (at batch index 2) is out of range" in _one_line(e)


def test_a_variable_is_not_checked_at_load():
    model = load_string(_YIELD.format(value="'sy'"), "f")
    assert "sy" in model.input_spec
    assert load_string(_YIELD.format(value=0), "f") is not None


def test_eta_and_max_fraction_at_load():
    text = (
        "[Models]\n  [g]\n    type = PowerDegradationFunction\n    power = 2\n"
        "    eta = 1\n  []\n[]\n"
    )
    with pytest.raises(FatalError) as e:
        load_string(text, "g")
    assert "[Models/g] option 'eta' = 1 is out of range: it must be in [0, 1)" in _one_line(e)
    text = (
        "[Models]\n  [s]\n    type = EffectiveSaturation\n    residual_saturation = 0\n"
        "    max_fraction = 0\n  []\n[]\n"
    )
    with pytest.raises(FatalError) as e:
        load_string(text, "s")
    assert "option 'max_fraction' = 0 is out of range: it must be in (0, 1]" in _one_line(e)


# ------------------------------------------------------------------ float16
_ELASTIC = """
[Models]
  [m]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def test_float16_overflow_is_named_as_such():
    with pytest.raises(FatalError) as e:
        load_string(_ELASTIC, "m", dtype=torch.float16)
    text = _one_line(e)
    assert "<string>:5:5: option 'coefficients'" in text
    assert "200000 does not fit in float16 (max 65504)" in text
    assert "must be positive" not in text
    assert load_string(_ELASTIC, "m", dtype=torch.float32) is not None


# ------------------------------------------------------------------ names as variables
def _elastic_with(token: str, extra: str = "") -> str:
    return _ELASTIC.replace("'200e3 0.3'", f"'{token} 0.3'") + extra


def test_a_bare_name_is_still_an_input_variable():
    # the reference library's documented semantics: a name that is no number, no
    # [Tensors] and no [Models] block promotes the parameter to an input variable
    assert "abc" in load_string(_elastic_with("abc"), "m").input_spec
    assert "forces/T" in load_string(_elastic_with("forces/T"), "m").input_spec


@pytest.mark.parametrize("token", ["a-b", "E=3", "$x", "nomodel.E"])
def test_a_name_that_is_no_variable_name_is_refused(token):
    with pytest.raises(FatalError) as e:
        load_string(_elastic_with(token), "m")
    text = _one_line(e)
    assert f"<string>:5:5: option 'coefficients' = '{token}' is not a number" in text
    assert "cannot become an input variable" in text


def test_model_dot_output_names_one_output():
    # 'model.output': one output of a model with several (our docs and the reference's)
    nb = (
        "  [nb]\n    type = NucleationBarrierAndCriticalRadius\n    surface_energy = 1\n"
        "    total_gibbs_free_energy_difference = 'dg'\n    molar_volume = 1\n  []\n[]\n"
    )
    text = _elastic_with("nb.critical_radius").rstrip()[: -len("[]")] + nb
    model = load_string(text, "m")
    assert "dg" in model.input_spec and "nb.critical_radius" not in model.input_spec
    with pytest.raises(FatalError) as e:
        load_string(text.replace("nb.critical_radius", "nb.radius"), "m")
    assert "model 'nb' has no output 'radius' (outputs: nucleation_barrier, critical_radius)" in (
        _one_line(e)
    )


# ------------------------------------------------------------------ the catalogue
def test_catalogue_shows_the_range():
    fields = {f["name"]: f for f in catalogue(Newton)["fields"]}
    assert fields["max_its"]["range"] == "[1, inf)"
    assert fields["abs_tol"]["range"] == "[0, inf)"
    assert "range" not in fields["verbose"]


def test_every_default_lies_in_its_range():
    for name in registered_types():
        for f in Schema.of(lookup(name)).fields:
            if getattr(f, "bounds", None) is None or f.required or f.default is None:
                continue
            assert out_of_range(f, f.default) is None, (name, f.name, f.default)
