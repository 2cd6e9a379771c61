"""The stacked result (TransientResult): shapes, the values of the flat form, the
fill rules, the file written beside save_as, and reading it back."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest
import torch

from neml2.drivers import TransientResult
from neml2.drivers._cli import run_main
from neml2.drivers.results import FORMAT, VERSION, stacked_path
from neml2.drivers.transient import TransientDriver
from neml2.models import load_input
from neml2.tensors import FatalError

# 4 steps over a batch of 2; an ODE with a number as its initial condition
# (shape () while the steps are (2,)), an output without one (strain_rate), and a
# history two steps back (strain_rate~2: zero-filled up to step 2)
INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar((torch.linspace(0, 1, 5) ** 2).unsqueeze(-1).expand(5, 2))'
  []
  [strains]
    type = Python
    expr = '''
      SR2(torch.linspace(0, 1, 5).reshape(5, 1, 1)
          * torch.tensor([[1e-3, 0, 0, 0, 0, 0], [0, 2e-3, 0, 0, 0, 0]]))
    '''
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    ic_Scalar_names = 'x'
    ic_Scalar_values = '2.5'
    save_as = '{save_as}'
  []
[]
[Models]
  [rate]
    type = SR2VariableRate
    variable = 'strain'
  []
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
  [lag]
    type = SR2LinearCombination
    from = 'strain_rate~2'
    to = 'old_rate'
  []
  [model]
    type = ComposedModel
    models = 'rate x_rate x lag'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def write(folder: Path, save_as: str = "result.pt") -> Path:
    p = folder / "t.i"
    p.write_text(textwrap.dedent(INPUT.replace("{save_as}", save_as)))
    return p


@pytest.fixture
def driver(tmp_path) -> TransientDriver:
    d = load_input(write(tmp_path)).object("Drivers", "driver")
    assert d.run()
    return d


def assert_matches_flat(stacked: TransientResult, flat: dict[str, torch.Tensor]) -> None:
    """Every flat entry is the stacked tensor at its step (broadcast to the batch)."""
    assert flat
    for key, value in flat.items():
        side, k, var = key.split(".", 2)
        got = stacked[f"{side}.{var}"][int(k)]
        torch.testing.assert_close(got, value.expand_as(got), rtol=0, atol=0)


def test_stacked_shapes_and_the_flat_values(driver):
    r = driver.stacked
    assert isinstance(r, TransientResult) and r.steps == 5 and r.time == "t"
    assert r["t"].shape == (5, 2)
    assert r["strain"].shape == (5, 2, 6) and r["strain_rate"].shape == (5, 2, 6)
    assert r["x"].shape == (5, 2)  # the initial condition () broadcast to the batch
    assert r["strain_rate~2"].shape == (5, 2, 6) and r["old_rate"].shape == (5, 2, 6)
    assert_matches_flat(r, driver.result)
    # every stacked variable comes from the flat form, and nothing else
    flat_vars = {f"{k.split('.')[0]}.{k.split('.', 2)[2]}" for k in driver.result}
    assert flat_vars == {f"input.{n}" for n in r.inputs} | {f"output.{n}" for n in r.outputs}
    # the time is first; inputs, then outputs
    assert next(iter(r)) == "t" and list(r)[-1] in r.outputs and len(r) == len(flat_vars)


def test_what_the_flat_form_leaves_out_is_what_the_driver_used(driver):
    r, flat = driver.stacked, driver.result
    # an output without an initial condition: zero at step 0
    assert "output.0.strain_rate" not in flat
    assert bool((r["strain_rate"][0] == 0).all())
    # x~2 before step 2 had a value: zero (the driver zero-fills it)
    assert not any(f"input.{k}.strain_rate~2" in flat for k in range(3))
    assert bool((r["strain_rate~2"][:3] == 0).all())
    torch.testing.assert_close(r["strain_rate~2"][3:], r["strain_rate"][1:3], rtol=0, atol=0)
    # the initial condition
    torch.testing.assert_close(r["x"][0], torch.full((2,), 2.5, dtype=torch.float64))
    # the time at every step
    t = torch.linspace(0, 1, 5, dtype=torch.float64) ** 2
    torch.testing.assert_close(r["t"], t.unsqueeze(-1).expand(5, 2))


def test_a_model_without_the_time_gets_it_from_the_prescribed_times(tmp_path):
    d = load_input(write(tmp_path)).object("Drivers", "driver")
    d.opts["model"] = "elasticity"
    d.opts["ic_Scalar_names"], d.opts["ic_Scalar_values"] = (), ()
    assert d.run()
    assert "input.0.t" in d.result and "input.1.t" not in d.result
    t = torch.linspace(0, 1, 5, dtype=torch.float64) ** 2
    torch.testing.assert_close(d.stacked["t"], t.unsqueeze(-1).expand(5, 2))
    assert d.stacked["stress"].shape == (5, 2, 6)
    # from the flat form alone the time cannot be stacked: the error says why
    with pytest.raises(
        FatalError, match=r"input 't' is not recorded at step\(s\) 1, 2, 3, 4.*times="
    ):
        TransientResult.from_flat(d.result)


def test_from_flat_rules_and_errors():
    one = torch.ones(3, dtype=torch.float64)
    flat = {"input.0.t": one * 0, "input.1.t": one, "input.2.t": one * 2, "output.1.y": one}
    flat["output.2.y"] = 2 * one
    flat["output.0.z"] = torch.tensor(7.0, dtype=torch.float64)  # an IC never output
    flat["something.else"] = torch.zeros(1)  # other keys are ignored
    r = TransientResult.from_flat(flat)
    assert r.steps == 3 and set(r.inputs) == {"t"} and set(r.outputs) == {"y", "z"}
    torch.testing.assert_close(r["z"], torch.full((3,), 7.0, dtype=torch.float64))
    torch.testing.assert_close(r["y"][0], torch.zeros(3, dtype=torch.float64))
    # a step missing in the middle is an error naming the variable and the step
    gap = dict(flat)
    del gap["output.1.y"]
    with pytest.raises(FatalError, match=r"output 'y' is not recorded at step\(s\) 0, 1 of 0\.\.2"):
        TransientResult.from_flat(gap)
    # a prescribed input missing at step 0 is not a history input: an error too
    bad = dict(flat)
    bad["input.1.strain"] = bad["input.2.strain"] = one
    with pytest.raises(FatalError, match=r"input 'strain' is not recorded at step\(s\) 0 "):
        TransientResult.from_flat(bad)
    # steps whose shapes do not broadcast
    wrong = dict(flat)
    wrong["output.2.y"] = torch.ones(4, dtype=torch.float64)
    with pytest.raises(FatalError, match=r"output 'y': the steps' shapes do not broadcast"):
        TransientResult.from_flat(wrong)
    # times of the wrong length
    with pytest.raises(FatalError, match="times has 2 steps but the result has 3"):
        TransientResult.from_flat(flat, times=torch.zeros(2))
    assert TransientResult.from_flat({}).steps == 0


def test_lookup_by_side_and_errors(driver):
    r = driver.stacked
    assert r["output.x"] is r["x"] is r.outputs["x"]
    assert r["input.strain"] is r.inputs["strain"]
    assert "input.t" in r and "output.t" not in r and "t" in r and "nope" not in r
    with pytest.raises(KeyError, match=r"'strian' is not a variable.*did you mean 'strain'"):
        r["strian"]
    with pytest.raises(KeyError, match=r"'output\.strain' is not a variable"):
        r["output.strain"]
    both = TransientResult({"a": torch.zeros(2)}, {"a": torch.ones(2)})
    with pytest.raises(KeyError, match=r"'a' is both an input and an output; write 'input\.a'"):
        both["a"]
    assert float(both["output.a"][0]) == 1.0
    with pytest.raises(FatalError, match=r"different step counts: input\.a 2, output\.b 3"):
        TransientResult({"a": torch.zeros(2)}, {"b": torch.zeros(3)})
    assert "TransientResult(5 steps; inputs: t (5, 2)" in repr(r)


def test_stacked_requires_a_run(tmp_path):
    d = load_input(write(tmp_path)).object("Drivers", "driver")
    with pytest.raises(FatalError, match=r"t\.i:\d+:\d+: \[Drivers/driver\].*run the driver first"):
        _ = d.stacked


# ---------------------------------------------------------------- files


def test_stacked_path():
    assert stacked_path("out/result.pt") == Path("out/result.stacked.pt")
    assert stacked_path("/a/run") == Path("/a/run.stacked")


def test_save_as_writes_the_stacked_file_beside_the_flat_one(driver, tmp_path):
    flat_file, stacked_file = tmp_path / "result.pt", tmp_path / "result.stacked.pt"
    assert driver.saved_to == flat_file and driver.stacked_saved_to == stacked_file
    flat = torch.load(flat_file, weights_only=True)
    assert flat.keys() == driver.result.keys()  # the flat file is unchanged
    data = torch.load(stacked_file, weights_only=True)
    assert set(data) == {"format", "version", "time", "steps", "input", "output"}
    assert data["format"] == FORMAT and data["version"] == VERSION == 1
    assert data["time"] == "t" and data["steps"] == 5
    assert list(data["input"]) == list(driver.stacked.inputs)
    for side in ("input", "output"):
        for name, value in data[side].items():
            assert value.device.type == "cpu"
            torch.testing.assert_close(value, driver.stacked[f"{side}.{name}"], rtol=0, atol=0)
    loaded = TransientResult.load(stacked_file)
    assert_matches_flat(loaded, flat)
    # a flat file loads too (stacked from it; this model takes the time)
    assert_matches_flat(TransientResult.load(flat_file), flat)


def test_load_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_text("not a torch file")
    with pytest.raises(FatalError, match=rf"^{bad}: cannot read a result file"):
        TransientResult.load(bad)
    newer = tmp_path / "newer.pt"
    torch.save({"format": FORMAT, "version": VERSION + 1, "input": {}, "output": {}}, newer)
    with pytest.raises(FatalError, match=rf"^{newer}: stacked result version 2"):
        TransientResult.load(newer)
    broken = tmp_path / "broken.pt"
    torch.save({"format": FORMAT, "version": 1, "input": [], "output": {}}, broken)
    with pytest.raises(FatalError, match="needs 'input' and 'output' dictionaries"):
        TransientResult.load(broken)


def test_a_bad_stacked_target_fails_before_the_first_step(tmp_path, monkeypatch):
    (tmp_path / "result.stacked.pt").mkdir()

    def never(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("stepping started before the stacked target was checked")

    monkeypatch.setattr(TransientDriver, "_inputs", never)
    d = load_input(write(tmp_path)).object("Drivers", "driver")
    with pytest.raises(
        FatalError, match=r"t\.i:\d+:\d+: save_as: '.*result\.stacked\.pt' is a dir"
    ):
        d.run()
    assert not (tmp_path / "result.pt").exists()


def test_signal_while_writing_the_stacked_file(tmp_path, monkeypatch, capsys):
    """SIGTERM during the second write: the flat file is complete, the stacked one
    absent (no temporary file either), and the message says what was written."""
    inp = write(tmp_path)
    real_save = torch.save
    calls = []

    def save(obj, f, *args, **kwargs):
        calls.append(f)
        if len(calls) == 2:
            if isinstance(f, (str, os.PathLike)):  # (else a buffer: the temporary file exists)
                Path(f).write_bytes(b"partial")
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
        return real_save(obj, f, *args, **kwargs)  # pragma: no cover - interrupted first

    monkeypatch.setattr(torch, "save", save)
    assert run_main([str(inp), "driver", "--quiet"]) == 143
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"neml2-run: interrupted (SIGTERM); wrote only {tmp_path / 'result.pt'}"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.pt", "t.i"]
