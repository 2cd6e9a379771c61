"""Valid ranges of the drivers' tolerances, and ``neml2-syntax`` showing option ranges."""

from __future__ import annotations

import pytest

from neml2.drivers._cli import syntax_main
from neml2.drivers._syntax import field_summary
from neml2.models import load_input
from neml2.tensors import FatalError

INPUT = """[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strains'
    {option}
  []
[]
[Tensors]
  [strains]
    type = Python
    expr = 'SR2(torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def _unit(tmp_path, option: str):
    p = tmp_path / "unit.i"
    p.write_text(INPUT.format(option=option))
    return load_input(p).object("Drivers", "unit")


@pytest.mark.parametrize("name", ["value_rel_tol", "value_abs_tol", "derivative_abs_tol"])
def test_a_negative_tolerance_is_a_load_error(tmp_path, name):
    with pytest.raises(FatalError) as e:
        _unit(tmp_path, f"{name} = -1e-6")
    assert str(e.value) == (
        f"{tmp_path / 'unit.i'}:7:5: [Drivers/unit] option '{name}' = -1e-6 is out of range: "
        "it must be >= 0"
    )


def test_a_zero_tolerance_still_loads(tmp_path):
    assert _unit(tmp_path, "derivative_rel_tol = 0").opts["derivative_rel_tol"] == 0.0


def test_syntax_shows_the_range(capsys):
    assert syntax_main(["Newton"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "max_its (option, int, default 25, range [1, inf))" in out
    assert "abs_tol (option, float, default 1e-10, range [0, inf))" in out
    summary = field_summary(
        {"name": "eta", "kind": "option", "type": "float", "default": 0.0, "range": "[0, 1)"}
    )
    assert summary == "eta (option, float, default 0.0, range [0, 1))"
