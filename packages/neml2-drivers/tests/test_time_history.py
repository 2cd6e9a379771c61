"""TransientDriver refuses a time history that does not increase; driver errors about a
missing input say where a parameter turned into that input.

A step with ``t[k] <= t[k-1]`` (zero or negative increment) or a NaN time is an error
naming the first such step (and batch point) at the ``prescribed_time`` line. None of
the reference inputs repeats a time, so a zero increment is an error too.
"""

from __future__ import annotations

import textwrap

import pytest
from test_transient import INPUT

from neml2.drivers._cli import EXIT_FATAL, run_main
from neml2.models import load_input
from neml2.tensors import FatalError


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(textwrap.dedent(INPUT))
    return p


def _line(path, needle: str) -> int:
    return 1 + next(i for i, s in enumerate(path.read_text().splitlines()) if needle in s)


def _run(path, *overrides):
    ctx = load_input(path, list(overrides))
    return ctx.object("Drivers", "driver").run()


def _times(expr: str) -> str:
    return f"Tensors/times/expr='{expr}'"


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        (
            "Scalar(torch.tensor([0.0, 0.5, 0.4, 0.8, 1.0]).unsqueeze(-1).expand(5, 2))",
            "at step 2 at batch index 0, t[2] = 0.4 does not exceed t[1] = 0.5",
        ),
        (
            "Scalar(torch.tensor([0.0, 0.5, 0.5, 0.8, 1.0]).unsqueeze(-1).expand(5, 2))",
            "at step 2 at batch index 0, t[2] = 0.5 does not exceed t[1] = 0.5",
        ),
        (
            "Scalar(torch.tensor([0.0, math.nan, 0.5, 0.8, 1.0]).unsqueeze(-1).expand(5, 2))",
            "at step 1 at batch index 0, t[1] = nan does not exceed t[0] = 0",
        ),
        (
            "Scalar(torch.tensor([[0.0, 0], [1, 1], [2, 2], [3, 1.5], [4, 5]]))",
            "at step 3 at batch index 1, t[3] = 1.5 does not exceed t[2] = 2",
        ),
        (
            "Scalar(torch.tensor([math.nan, 0.25, 0.5, 0.75, 1.0]).unsqueeze(-1).expand(5, 2))",
            "at step 1 at batch index 0, t[1] = 0.25 does not exceed t[0] = nan",
        ),
    ],
    ids=["decreasing", "repeated", "nan", "one-batch-point", "nan-first"],
)
def test_time_must_increase(input_file, expr, fragment):
    with pytest.raises(FatalError) as e:
        _run(input_file, _times(expr))
    message = str(e.value)
    assert fragment in message
    assert f"t.i:{_line(input_file, 'prescribed_time =')}:" in message
    assert "prescribed_time 'times' must increase at every step" in message


def test_an_unbatched_history_names_no_batch_index(input_file):
    with pytest.raises(FatalError, match=r"at step 4, t\[4\] = 0 does not exceed t\[3\] = 3"):
        _run(input_file, _times("Scalar(torch.tensor([0.0, 1, 2, 3, 0]))"))


def test_an_increasing_history_runs(input_file):
    assert _run(input_file) is True


def test_a_promoted_input_the_driver_lacks_says_where_it_came_from(input_file, capsys):
    code = run_main([str(input_file), "driver", "Models/elasticity/coefficients='abc 0.25'"])
    assert code == EXIT_FATAL
    err = capsys.readouterr().err
    assert "input(s) abc are neither prescribed" in err
    assert "('abc' is an input variable because" in err
    assert "option 'coefficients' = 'abc' is not a number, a [Tensors] name or a model output" in (
        err
    )
