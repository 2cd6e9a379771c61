"""The command-line front ends: exit codes and the messages users see."""

from __future__ import annotations

import json

import pytest

from neml2.drivers._cli import EXIT_CONVERGENCE, EXIT_FATAL, inspect_main, run_main, syntax_main
from neml2.models import register
from neml2.tensors import ConvergenceError


@register("_TestDriver")
class _Driver:
    def __init__(self, mode):
        self.mode = mode

    @classmethod
    def from_hit(cls, node, root):
        return cls(node.param("mode").as_str())

    def run(self):
        if self.mode == "diverge":
            raise ConvergenceError("Newton failed at 2 of 10 points")
        return self.mode == "pass"


INPUT = """[Drivers]
  [d]
    type = _TestDriver
    mode = pass
  []
[]
"""


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(INPUT)
    return p


def test_run_success(input_file):
    assert run_main([str(input_file), "d"]) == 0


def test_run_driver_failure_and_override(input_file):
    assert run_main([str(input_file), "d", "Drivers/d/mode=fail"]) == EXIT_FATAL


def test_run_convergence_is_distinct(input_file, capsys):
    assert run_main([str(input_file), "d", "Drivers/d/mode=diverge"]) == EXIT_CONVERGENCE
    assert "convergence failure: Newton failed" in capsys.readouterr().err


def test_run_unknown_driver(input_file, capsys):
    assert run_main([str(input_file), "x"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert f"neml2-run: error: {input_file}:1:" in err
    assert "no block named 'x' in [Drivers]" in err and "defined: d" in err


def test_run_missing_file(tmp_path, capsys):
    assert run_main([str(tmp_path / "none.i"), "d"]) == EXIT_FATAL
    assert "input file not found" in capsys.readouterr().err


def test_run_bad_command_line():
    with pytest.raises(SystemExit) as e:
        run_main([])
    assert e.value.code == 2


def test_inspect_unknown_model(input_file, capsys):
    assert inspect_main([str(input_file), "m"]) == EXIT_FATAL
    assert "no [Models] section" in capsys.readouterr().err


def test_syntax_lists_registered_types(capsys):
    assert syntax_main(["--json"]) == 0
    types = {e["type"]: e for e in json.loads(capsys.readouterr().out)["types"]}
    assert "_TestDriver" in types
    el = types["LinearIsotropicElasticity"]
    assert el["section"] == "Models" and "3K vol" in el["doc"]
    fields = {f["name"]: f for f in el["fields"]}
    assert fields["strain"]["kind"] == "input" and fields["strain"]["default"] == "strain"
    assert fields["coefficients"]["required"] and fields["coefficients"]["kind"] == "parameter"
    assert "YOUNGS_MODULUS" in fields["coefficient_types"]["choices"]


def test_syntax_one_type_in_text(capsys):
    assert syntax_main(["ModelUnitTest"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[Drivers] ModelUnitTest\n")
    assert "derivative_rel_tol (option, float, default 1e-05, range [0, inf))" in out


def test_syntax_unknown_type(capsys):
    assert syntax_main(["Nope"]) == EXIT_FATAL
    assert "unknown type 'Nope'" in capsys.readouterr().err


def test_run_model_unit_test(tmp_path, capsys):
    p = tmp_path / "unit.i"
    p.write_text(
        """[Drivers]
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
    expr = 'SR2.fill(0.01, 0, 0)'
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
    )
    assert run_main([str(p), "unit"]) == 0
    # a wrong expectation fails with a message naming the variable
    assert run_main([str(p), "unit", "Tensors/s/expr='SR2.fill(1, 0, 0)'"]) == EXIT_FATAL
    assert "FAIL value of 'stress'" in capsys.readouterr().out
    # a missing [Tensors] reference is a located fatal error
    assert run_main([str(p), "unit", "Drivers/unit/output_SR2_values=nope"]) == EXIT_FATAL
    assert "'nope' is neither a number nor a [Tensors] name" in capsys.readouterr().err


def test_neml2_warnings_print_as_the_tool_s_lines(tmp_path, capsys):
    """A neml2 warning reads `neml2-run: warning: file:line: ...`, not a Python source
    line; the default warning display is back afterwards."""
    import warnings

    shown = warnings.showwarning
    path = tmp_path / "orphan.i"
    path.write_text(
        "[Tensors]\n"
        "  [times]\n    type = Python\n    expr = 'linspace(Scalar(0.0), Scalar(1.0), 3)'\n  []\n"
        "  [e]\n    type = Python\n"
        "    expr = 'linspace(SR2.fill(0.0), SR2.fill(1e-3, 0.0, 0.0), 3)'\n  []\n"
        "[]\n"
        "[Models]\n"
        "  [m]\n    type = SR2LinearCombination\n    from = 'E p~1'\n    to = 's'\n  []\n"
        "[]\n"
        "[Drivers]\n"
        "  [d]\n    type = TransientDriver\n    model = 'm'\n    prescribed_time = 'times'\n"
        "    prescribed_SR2_names = 'E'\n    prescribed_SR2_values = 'e'\n  []\n"
        "[]\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert run_main([str(path), "d", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "neml2-run: warning: " in err and "input 'p~1' has no source" in err
    assert "orphan.i:" in err and "_check_history_sources" not in err
    assert warnings.showwarning is shown


MODELS = """[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [rate]
    type = SR2VariableRate
    variable = 'strain'
  []
[]
"""


@pytest.mark.parametrize("extra", [[], ["Models/rate/variable=stress"]])
def test_inspect_without_a_model_lists_the_models(tmp_path, capsys, extra):
    p = tmp_path / "m.i"
    p.write_text(MODELS)
    with pytest.raises(SystemExit) as e:
        inspect_main([str(p), *extra])
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"neml2-inspect: error: MODEL is missing: neml2-inspect INPUT MODEL; "
        f"[Models] in {p}: elasticity, rate"
    )


def test_inspect_without_a_model_says_why_there_is_no_list(tmp_path, capsys, input_file):
    with pytest.raises(SystemExit):
        inspect_main([str(input_file)])
    assert f"{input_file} has no [Models] block" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        inspect_main([str(tmp_path)])
    assert "is not a regular file (a directory)" in capsys.readouterr().err
    broken = tmp_path / "broken.i"
    broken.write_text("[Models]\n  [a]\n")
    with pytest.raises(SystemExit):
        inspect_main([str(broken)])
    assert f"could not list the [Models] blocks of {broken}: " in capsys.readouterr().err


def test_inspect_takes_the_model_after_an_override(tmp_path, capsys):
    p = tmp_path / "m.i"
    p.write_text(MODELS)
    assert inspect_main([str(p), "Models/rate/variable=stress", "rate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rate: SR2VariableRate") and "stress_rate: SR2 (6,)" in out
