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
    assert "_TestDriver" in json.loads(capsys.readouterr().out)["types"]
