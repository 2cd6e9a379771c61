"""TransientDriver feeds history older than one step: ``x~2``, ``t~2`` (value of step k-2)."""

from __future__ import annotations

import textwrap

import torch

import neml2.drivers  # noqa: F401  (registers TransientDriver)
from neml2.models import load_input

INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar((torch.linspace(0, 1, 5) ** 2 + 0.5).unsqueeze(-1).expand(5, 2))'
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
    prescribed_SR2_names = 'E'
    prescribed_SR2_values = 'strains'
  []
[]
[Models]
  [rate]
    type = SR2VariableRate
    variable = 'E'
  []
  [integrate]
    type = SR2ForwardEulerTimeIntegration
    variable = 'plastic_strain'
    rate = 'E_rate'
  []
  [guess]
    type = LinearExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
  []
  [model]
    type = ComposedModel
    models = 'rate integrate'
  []
  [model2]
    type = ComposedModel
    models = 'guess rate'
  []
  [lagged]
    type = SR2LinearCombination
    from = 'plastic_strain~2'
    to = 'p2'
  []
  [model4]
    type = ComposedModel
    models = 'rate integrate lagged'
  []
  [model3]
    type = SR2LinearCombination
    from = 'E E~2'
    to = 'dE'
    weights = '1 -1'
  []
[]
"""


def _run(tmp_path, model):
    p = tmp_path / "h.i"
    p.write_text(textwrap.dedent(INPUT).replace("model = 'model'", f"model = '{model}'"))
    d = load_input(p).object("Drivers", "driver")
    assert d.run()
    return d.result


def test_second_history_is_the_value_two_steps_back(tmp_path):
    r = _run(tmp_path, "model2")
    times = torch.linspace(0, 1, 5, dtype=torch.float64) ** 2 + 0.5
    # step 1: t~2 and x~2 lie before step 0: zero-filled, not recorded
    assert "input.1.t~2" not in r and "input.1.plastic_strain~2" not in r
    torch.testing.assert_close(r["input.1.t~1"], times[0].expand(2))
    for k in range(2, 5):
        torch.testing.assert_close(r[f"input.{k}.t~1"], times[k - 1].expand(2))
        torch.testing.assert_close(r[f"input.{k}.t~2"], times[k - 2].expand(2))
    # the output x of step 0 has no initial condition: x~2 at step 2 is zero, not recorded
    assert "input.2.plastic_strain~2" not in r
    for k in range(3, 5):
        torch.testing.assert_close(
            r[f"input.{k}.plastic_strain~2"], r[f"output.{k - 2}.plastic_strain"]
        )
        torch.testing.assert_close(
            r[f"input.{k}.plastic_strain~1"], r[f"output.{k - 1}.plastic_strain"]
        )


def test_prescribed_history_two_steps_back(tmp_path):
    r = _run(tmp_path, "model3")
    assert "input.1.E~2" not in r
    torch.testing.assert_close(r["output.1.dE"], r["input.1.E"])
    for k in range(2, 5):
        torch.testing.assert_close(r[f"input.{k}.E~2"], r[f"input.{k - 2}.E"])
        torch.testing.assert_close(r[f"output.{k}.dE"], r[f"input.{k}.E"] - r[f"input.{k - 2}.E"])


def test_first_history_unchanged(tmp_path):
    r = _run(tmp_path, "model")
    for k in range(1, 5):
        torch.testing.assert_close(r[f"input.{k}.t~1"], r[f"input.{k - 1}.t"])
        torch.testing.assert_close(
            r[f"input.{k}.plastic_strain~1"] if k > 1 else torch.zeros(6, dtype=torch.float64),
            r[f"output.{k - 1}.plastic_strain"] if k > 1 else torch.zeros(6, dtype=torch.float64),
        )
    assert not any(k.endswith("~2") for k in r)


def test_state_history_two_steps_back(tmp_path):
    r = _run(tmp_path, "model4")
    assert "input.1.plastic_strain~2" not in r and "input.2.plastic_strain~2" not in r
    for k in range(3, 5):
        old = r[f"output.{k - 2}.plastic_strain"]
        assert bool((old.abs() > 0).any())
        torch.testing.assert_close(r[f"input.{k}.plastic_strain~2"], old)
        torch.testing.assert_close(r[f"output.{k}.p2"], old)


def test_a_history_input_without_source_is_named(tmp_path):
    """'plastic_strain~1' of a model that does not output 'plastic_strain' is zero at
    every step, and the driver says so (the input, the variable, how to give a source);
    a model that outputs it gets no warning."""
    import warnings

    import pytest

    from neml2.drivers.transient import HistoryWithoutSourceWarning

    path = tmp_path / "in.i"
    path.write_text(
        INPUT
        + textwrap.dedent(
            """
            [Models]
              [no_source]
                type = SR2LinearCombination
                from = 'E plastic_strain~1'
                to = 'p'
              []
            []
            [Drivers]
              [orphan]
                type = TransientDriver
                model = 'no_source'
                prescribed_time = 'times'
                prescribed_SR2_names = 'E'
                prescribed_SR2_values = 'strains'
              []
            []
            """
        )
    )
    ctx = load_input(path)
    with pytest.warns(
        HistoryWithoutSourceWarning,
        match=r"in.i:\d+:\d+: \[Drivers/orphan\].*input 'plastic_strain~1' has no source.*"
        r"'plastic_strain' is neither an output",
    ):
        ctx.object("Drivers", "orphan").run()
    with warnings.catch_warnings():
        warnings.simplefilter("error", HistoryWithoutSourceWarning)
        ctx.object("Drivers", "driver").run()  # 'model' outputs plastic_strain


def test_a_history_read_only_by_a_predictor_needs_no_source():
    """An implicit update's predictor may read 'x~1' of an unknown that is not an output
    (as the reference's Taylor regression does): it only sets Newton's starting point.
    Any other reader of 'x~1' keeps the warning."""
    from neml2.drivers.transient import _only_predictors_read as only

    class Leaf(torch.nn.Module):
        def __init__(self, *names):
            super().__init__()
            self.input_spec = dict.fromkeys(names)

    class Update(torch.nn.Module):  # an ImplicitUpdate's shape: a system and a predictor
        def __init__(self, system, predictor):
            super().__init__()
            self.system, self.predictor = system, predictor
            self.input_spec = {**system.input_spec, **predictor.input_spec}

    guessed = Update(Leaf("strain"), Leaf("x~1"))
    assert only(guessed, "x~1")
    integrated = Update(Leaf("strain", "x~1"), Leaf("x~1"))
    assert not only(integrated, "x~1")
    assert not only(Leaf("x~1"), "x~1")
    assert not only(guessed, "y~1")  # nobody reads it
