"""TransientDriver on a small model: result layout, history, save_as, plot, errors."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.drivers._cli import EXIT_FATAL, inspect_main, run_main
from neml2.models import load_input
from neml2.tensors import FatalError

INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 5).unsqueeze(-1).expand(5, 2))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 5).reshape(5, 1, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    save_as = 'out/result.pt'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [rate]
    type = SR2VariableRate
    variable = 'strain'
  []
  [model]
    type = ComposedModel
    models = 'elasticity rate'
  []
[]
"""


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(textwrap.dedent(INPUT))
    return p


def test_result_layout_and_history(input_file):
    ctx = load_input(input_file)
    d = ctx.object("Drivers", "driver")
    assert d.run()
    r = d.result
    assert set(k for k in r if k.startswith("input.0.")) == {"input.0.strain", "input.0.t"}
    assert "output.0.stress" not in r
    for k in range(1, 5):
        assert {
            f"input.{k}.strain",
            f"input.{k}.t",
            f"input.{k}.t~1",
            f"input.{k}.strain~1",
        } <= set(r)
        torch.testing.assert_close(r[f"input.{k}.strain~1"], r[f"input.{k - 1}.strain"])
        torch.testing.assert_close(
            r[f"output.{k}.strain_rate"][..., 0], torch.full((2,), 1e-3, dtype=torch.float64)
        )
    saved = torch.load(input_file.parent / "out" / "result.pt")
    assert saved.keys() == r.keys()


def test_cli_summary_plot_and_inspect(input_file, tmp_path, capsys):
    png = tmp_path / "plot.png"
    assert run_main([str(input_file), "driver", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "TransientDriver 'driver': 4 steps x 2 points" in out and "point-steps/s" in out
    assert png.stat().st_size > 1000
    assert inspect_main([str(input_file), "model"]) == 0
    out = capsys.readouterr().out
    assert "strain: SR2 (6,)" in out and "evaluation order:" in out and "elasticity.E ()" in out


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "Drivers/driver/prescribed_SR2_names=E",
            "prescribed_SR2_names: unknown variable 'E': not an input of model 'model'",
        ),
        (
            "Drivers/driver/prescribed_SR2_names=strains",
            "unknown variable 'strains': not an input of model 'model' (did you mean "
            "'strain', 'strain~1'?); its inputs: strain, strain~1, t, t~1",
        ),
        # a missing input, the prescribed names being right: named as missing
        ("Drivers/driver/prescribed_SR2_names=t~1", "input(s) strain are neither prescribed"),
        ("Drivers/driver/prescribed_SR2_values=nope", "'nope' is not a [Tensors] name"),
        (
            "Tensors/times/expr='Scalar(torch.zeros(3, 2))'",
            "has 5 steps but the time history has 3",
        ),
        ("Drivers/driver/prescribed_Scalar_names=x", "prescribed_Scalar_names has 1 entries"),
    ],
)
def test_driver_errors(input_file, capsys, override, message):
    assert run_main([str(input_file), "driver", override]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert message in err
    # located at the input file's line, or at the command-line override that set the value
    assert str(input_file) in err or "<command line>:1:" in err
    assert not (input_file.parent / "out" / "result.pt").exists()


def test_unknown_override_option_is_an_error(input_file, capsys):
    """Unlike the reference library, an override naming a non-option fails loudly."""
    assert run_main([str(input_file), "driver", "Models/elasticity/youngs=3"]) == EXIT_FATAL
    assert "unknown option 'youngs'" in capsys.readouterr().err


def test_plot_needs_a_transient_result(input_file, tmp_path):
    from neml2.drivers.plot import plot

    with pytest.raises(FatalError, match="no time variable"):
        plot({}, ["stress"], tmp_path / "x.png")


def test_number_literals_as_initial_conditions(tmp_path):
    """``ic_*_values`` may be numbers (the reference library's inputs write
    ``ic_Scalar_values = '1 0'``): a value with every component equal to the number."""
    p = tmp_path / "ic.i"
    p.write_text(
        textwrap.dedent(
            """
            [Tensors]
              [times]
                type = Python
                expr = 'Scalar(torch.linspace(0, 1, 3))'
              []
            []
            [Drivers]
              [driver]
                type = TransientDriver
                model = 'model'
                prescribed_time = 'times'
                ic_Scalar_names = 'x'
                ic_Scalar_values = '2.5'
                ic_SR2_names = 'e'
                ic_SR2_values = '-1'
              []
            []
            [Models]
              [x_rate]
                type = ScalarLinearCombination
                from = 'x~1'
                to = 'x_rate'
                weights = '-2'
              []
              [x]
                type = ScalarForwardEulerTimeIntegration
                variable = 'x'
              []
              [e_rate]
                type = SR2LinearCombination
                from = 'e~1'
                to = 'e_rate'
              []
              [e]
                type = SR2ForwardEulerTimeIntegration
                variable = 'e'
              []
              [model]
                type = ComposedModel
                models = 'x_rate x e_rate e'
              []
            []
            """
        )
    )
    d = load_input(p).object("Drivers", "driver")
    assert d.run()
    r = d.result
    torch.testing.assert_close(r["output.0.x"], torch.tensor(2.5, dtype=torch.float64))
    torch.testing.assert_close(r["output.0.e"], torch.full((6,), -1.0, dtype=torch.float64))
    # steps of 0.5: x <- x (1 - 2 * 0.5) = 0, e <- e (1 + 0.5) = -1.5
    torch.testing.assert_close(r["output.1.x"], torch.tensor(0.0, dtype=torch.float64))
    torch.testing.assert_close(r["output.1.e"], torch.full((6,), -1.5, dtype=torch.float64))


def _batched(tmp_path, times: int, strains: int):
    """INPUT with the times at batch ``(times,)`` and the strains at ``(strains,)``."""
    text = INPUT.replace("expand(5, 2)", f"expand(5, {times})").replace(
        "reshape(5, 1, 1)", f"reshape(5, 1, 1).expand(5, {strains}, 1)"
    )
    p = tmp_path / "b.i"
    p.write_text(textwrap.dedent(text))
    return p


def test_batch_shapes_that_do_not_broadcast_name_both_options(tmp_path, capsys):
    """Times at batch (3,) and strains at (2,) ran before (reporting 3 points): now one
    line names both options, their [Tensors] blocks and batch shapes."""
    assert run_main([str(_batched(tmp_path, 3, 2)), "driver"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert (
        "prescribed_time 'times' has batch shape (3,) and prescribed_SR2_values 'strains' "
        "(2,): they do not broadcast"
    ) in err
    assert not (tmp_path / "out" / "result.pt").exists()


def test_batch_shapes_that_broadcast_give_the_points(tmp_path, capsys):
    """One time history for every point (batch 1) broadcasts; the summary counts the
    broadcast batch's points, not the time's."""
    assert run_main([str(_batched(tmp_path, 1, 2)), "driver"]) == 0
    assert "TransientDriver 'driver': 4 steps x 2 points" in capsys.readouterr().out


def test_a_misspelled_prescribed_name_is_named_at_its_option(input_file, capsys):
    """The option's own line, the unknown name and the closest input: not the input it
    left without a value (which would name the right spelling as the problem)."""
    text = input_file.read_text().replace(
        "prescribed_SR2_names = 'strain'", "prescribed_SR2_names = 'strian'"
    )
    input_file.write_text(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "'strian'" in s)
    with pytest.raises(FatalError) as e:
        load_input(input_file).object("Drivers", "driver").run()
    msg = str(e.value)
    assert msg.startswith(f"{input_file}:{line}:")
    assert "prescribed_SR2_names: unknown variable 'strian'" in msg
    assert "(did you mean 'strain'" in msg and "neither prescribed" not in msg
