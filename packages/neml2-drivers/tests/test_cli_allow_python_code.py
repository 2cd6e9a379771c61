"""``neml2-run`` / ``neml2-inspect --allow-python-code``: the opt-in for ``[Tensors]``
expressions that run arbitrary Python; without it the allow-list refuses them."""

from __future__ import annotations

import os

import pytest

from neml2.drivers._cli import EXIT_FATAL, inspect_main, run_main
from neml2.models import ALLOW_PYTHON_CODE_ENV

# torch.get_default_dtype is no listed function: only Python evaluates it
UNIT = """[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'm'
    input_SR2_names = 'strain'
    input_SR2_values = 'e'
    output_SR2_names = 'stress'
    output_SR2_values = 's'
  []
[]
[Tensors]
  [e]
    type = Python
    expr = 'SR2.fill(0.01 * float(torch.get_default_dtype() == torch.float64), 0, 0)'
  []
  [s]
    type = Python
    expr = 'SR2.fill(1346.153846, 576.923077, 576.923077)'
  []
[]
[Models]
  [m]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture
def unit(tmp_path, monkeypatch):
    # the flag opts in for the process: monkeypatch removes it again after the test
    monkeypatch.delenv(ALLOW_PYTHON_CODE_ENV, raising=False)
    p = tmp_path / "unit.i"
    p.write_text(UNIT)
    return p


def test_run_refuses_python_code_by_default(unit, capsys):
    assert run_main([str(unit), "unit", "--quiet"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert "[Tensors/e] rejected expression: attribute 'get_default_dtype' of torch" in err
    assert "--allow-python-code" in err


def test_run_accepts_allow_python_code(unit):
    assert run_main([str(unit), "unit", "--quiet", "--allow-python-code"]) == 0
    assert os.environ[ALLOW_PYTHON_CODE_ENV] == "1"


def test_inspect_accepts_allow_python_code(unit, capsys):
    assert inspect_main([str(unit), "m", "--allow-python-code"]) == 0
    assert "m: LinearIsotropicElasticity" in capsys.readouterr().out


def test_help_says_what_the_opt_in_means(capsys):
    with pytest.raises(SystemExit):
        run_main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--allow-python-code" in out
    assert "use it only for input files you would run as a Python script" in out
