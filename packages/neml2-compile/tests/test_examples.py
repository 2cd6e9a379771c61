"""Example inputs from the input file: the reference inputs compile as shipped.

A compile traces a model at example inputs. Where ``[Settings]`` declares no shapes,
they come from what the file's ``[Drivers]`` feed the model (neml2.compiler._examples):
the cells of a finite-volume model, the size bins of a KWN model, the slip systems of a
per-slip crystal model, and temperatures inside a Kocks-Mecking model's interpolation
table. Each test reads a reference input (tests-integration/conformance/data) unchanged
and runs the export stage only (``export_file``: no AOT Inductor, seconds); one runs the
``neml2-compile`` command end to end on a small model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import neml2
from neml2.compiler import CompileOptions, export_file, export_model, main
from neml2.compiler._examples import tile
from neml2.compiler._source import load_for_compile
from neml2.compiler._sub_batch import infer_sub_batch
from neml2.tensors import FatalError, Scalar

DATA = Path(__file__).resolve().parents[3] / "tests-integration" / "conformance" / "data"
FV_GRADIENT = DATA / "models" / "finite_volume" / "FiniteVolumeGradient.i"
KWN_FRACTION = DATA / "models" / "kwn" / "PrecipitateVolumeFraction.i"
KWN_GROWTH = DATA / "regression" / "kwn" / "growth-only-scaled" / "model.i"
SLIP_SUM = DATA / "models" / "solid_mechanics" / "crystal_plasticity" / "SumSlipRates.i"
SLIP_RATE = DATA / "models" / "solid_mechanics" / "crystal_plasticity" / "PlasticDeformationRate.i"
KOCKS_MECKING = DATA / "regression" / "solid_mechanics" / "km_flow" / "full_model" / "model.i"
TABLE = DATA / "models" / "common" / "ScalarLinearInterpolation.i"


def _export(path: Path, model: str = "model", overrides=()):
    return export_file(path, CompileOptions(model=model), overrides)


# ---------------------------------------------------------------------- export as shipped
def test_finite_volume_cells_come_from_the_driver():
    res = _export(FV_GRADIENT)
    assert res.input_sub_batch == {"u": (3,)}  # 3 cell values: the driver's
    assert res.output_sub_batch == {"grad_u": (2,)}
    assert res.example_source.startswith("[Drivers/unit]")
    assert set(res.programs) == {"forward"}
    sig = res.programs["forward"].graph_signature.user_inputs
    assert len(sig) == 1


def test_kwn_size_bins_come_from_the_driver():
    res = _export(KWN_FRACTION)
    assert res.input_sub_batch == {"state/n": (3,)}  # number density per size bin
    assert res.output_sub_batch == {"state/f": ()}


@pytest.mark.parametrize(
    "path", [SLIP_SUM, SLIP_RATE], ids=["SumSlipRates", "PlasticDeformationRate"]
)
def test_per_slip_axis_comes_from_the_driver(path):
    res = _export(path)
    assert res.input_sub_batch["slip_rates"] == (12,)


def test_table_argument_inside_the_table():
    """The made-up 1e-3 lies outside the table (273.15, 2000]; the driver's 300 K does not."""
    res = _export(TABLE, "E")
    assert res.input_sub_batch == {"T": ()}
    ctx = load_for_compile(TABLE, CompileOptions(model="E"))
    with pytest.raises(FatalError, match="falls out of bounds"):
        infer_sub_batch(ctx.model)  # the made-up values alone


def test_kocks_mecking_probe_at_the_drivers_temperatures():
    """The stage that failed ('the argument falls out of bounds at 2 of 2 points'): the
    probe call at a transient driver's step-1 inputs, temperatures inside the table."""
    loaded = load_for_compile(KOCKS_MECKING, CompileOptions(model="model"))
    values = loaded.examples.values
    assert {"temperature", "E", "E~1", "t", "t~1"} <= set(values)
    assert values["temperature"].dynamic_shape == (20,)  # step 1 of (100 steps, 20 runs)
    assert bool((values["t"].data > values["t~1"].data).all())
    ins, outs = infer_sub_batch(loaded.model, loaded.options.sub_batch, values)
    assert not any(ins.values()) and outs["stress"] == ()
    with pytest.raises(FatalError, match="falls out of bounds"):
        infer_sub_batch(loaded.model)


def test_kwn_transient_probe_gets_the_initial_bins():
    """A transient KWN model: the initial condition gives the history input its 100 bins."""
    loaded = load_for_compile(KWN_GROWTH, CompileOptions(model="model"))
    ins, outs = infer_sub_batch(loaded.model, loaded.options.sub_batch, loaded.examples.values)
    assert ins["number_density~1"] == (100,)
    assert outs["number_density"] == (100,)
    assert ins["t"] == ins["t~1"] == ()


# ---------------------------------------------------------------------- [Settings] wins
def test_settings_override_wins_over_the_driver():
    """``[Settings]/example_batch_shape`` declares 24 slip systems: it wins over the
    driver's 12 (whose values then do not fit: made-up values instead)."""
    over = ["+Settings/example_batch_shape/slip_rates='(2; 24)'"]
    res = _export(SLIP_SUM, overrides=over)
    assert res.input_sub_batch == {"slip_rates": (24,)}
    loaded = load_for_compile(SLIP_SUM, CompileOptions(model="model"), over)
    assert loaded.options.sub_batch == {"slip_rates": (24,)}
    given = {"slip_rates": (24,)}
    assert tile(loaded.model, 4, loaded.examples.values, given, torch.float64, "cpu") == {}


# ---------------------------------------------------------------------- the reading
INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]]))'
  []
  [xs]
    type = Python
    expr = 'Scalar(torch.tensor([[5.0, 6.0], [7.0, 8.0], [9.0, 10.0]]))'
  []
  [y0]
    type = Python
    expr = 'Scalar(torch.tensor([0.5, 0.25, 0.125]), sub_batch_ndim=1)'
  []
[]
[Drivers]
  [other]
    type = TransientDriver
    model = 'not_this_one'
    prescribed_time = 'times'
  []
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    force_Scalar_names = 'x'
    force_Scalar_values = 'xs'
    ic_Scalar_names = 'y'
    ic_Scalar_values = 'y0'
  []
[]
[Models]
  [model]
    type = ScalarLinearCombination
    from = 'x x~1 y~1 t t~1 z~1'
    to = 'y'
  []
[]
"""


def test_transient_driver_step_one(tmp_path):
    """Step 1 of a transient run: the time and ``force_*`` (the former spelling of
    ``prescribed_*``) at step 1, their history at step 0, the initial condition of a
    state, zero for a history with no source."""
    path = tmp_path / "t.i"
    path.write_text(INPUT)
    loaded = load_for_compile(path, CompileOptions(model="model"))
    ex = loaded.examples
    assert ex.source == "[Drivers/driver] (the inputs of step 1 of its transient run)"
    v = {n: x.data.tolist() for n, x in ex.values.items()}
    assert v == {
        "x": [7.0, 8.0],
        "x~1": [5.0, 6.0],
        "y~1": [0.5, 0.25, 0.125],
        "t": [1.0, 2.0],
        "t~1": [0.0, 0.0],
        "z~1": 0.0,
    }
    assert ex.values["y~1"].sub_batch_shape == (3,)
    # laid out on 5 points: the batch (2,) repeated, y~1's 3 entries on every point
    xs = tile(loaded.model, 5, ex.values, {"y~1": (3,)}, torch.float64, "cpu")
    assert xs["t"].tolist() == [1.0, 2.0, 1.0, 2.0, 1.0]
    assert xs["y~1"].shape == (5, 3)
    assert xs["z~1"].tolist() == [0.0] * 5


def test_unreadable_driver_is_a_note(tmp_path):
    path = tmp_path / "t.i"
    path.write_text(INPUT.replace("force_Scalar_values = 'xs'", "force_Scalar_values = 'nope'"))
    loaded = load_for_compile(path, CompileOptions(model="model"))
    assert not loaded.examples
    assert "nope" in loaded.describe()[0] and "[Drivers/driver]" in loaded.describe()[0]


def test_export_model_made_up_values_and_examples():
    """``export_model`` without an input file: made-up values, or the examples given."""
    m = neml2.load_model(TABLE, "E")
    with pytest.raises(FatalError, match="falls out of bounds"):
        export_model(m)
    res = export_model(m, examples={"T": Scalar(torch.tensor([400.0, 1500.0]))}, example_batch=8)
    assert set(res.programs) == {"forward"} and res.example_batch == 8
    assert m.dtype == torch.float64


# ---------------------------------------------------------------------- [Tensors] guess
FV_ADVECTION = DATA / "regression" / "finite_volume" / "advection-transformed" / "advection.i"


def _without_drivers(text: str) -> str:
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith("[Drivers]"):
            skip = True
        elif skip and line.startswith("[]"):
            skip = False
        elif not skip:
            out.append(line)
    return "\n".join(out) + "\n"


def test_no_driver_cells_from_the_parameters(tmp_path):
    """The finite-volume advection input without its [Drivers] (and no [Settings]): the
    cell axis of the state is taken from the 100 cells of its parameters' [Tensors],
    and said."""
    path = tmp_path / "advection.i"
    path.write_text(_without_drivers(FV_ADVECTION.read_text()))
    loaded = load_for_compile(path, CompileOptions(model="model"))
    assert not loaded.examples
    notes: list[str] = []
    ins, outs = infer_sub_batch(loaded.model, loaded.options.sub_batch, None, notes)
    assert ins == {"concentration~1": (100,), "t": (), "t~1": ()}
    assert outs["concentration"] == (100,)
    assert len(notes) == 1 and "'concentration~1'" in notes[0] and "(N; 100)" in notes[0]


# ---------------------------------------------------------------------- layering
def test_no_drivers_package_needed():
    """The compiler reads driver blocks from the HIT tree: neml2.drivers is never imported."""
    code = (
        "import sys; from neml2.compiler import CompileOptions, export_file; "
        f"export_file({str(FV_GRADIENT)!r}, CompileOptions(model='model')); "
        "print('neml2.drivers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- end to end
def test_cli_compiles_the_finite_volume_input_as_shipped(tmp_path, cache_dir, capsys):
    """``neml2-compile`` on the reference input, unchanged: the artifact takes the 3 cell
    values per point and gives the reference's gradient."""
    status = main([str(FV_GRADIENT), "model", "-o", str(tmp_path), "--cache-dir", str(cache_dir)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "example inputs from [Drivers/unit] (its input values): u" in out
    meta = json.loads((tmp_path / "model" / "metadata.json").read_text())
    assert meta["inputs"][0]["sub_batch"] == [3]
    m = neml2.load_model(tmp_path / "model_aoti.i", "model")
    u = torch.tensor([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]], dtype=torch.float64)
    got = m.forward({"u": u})["grad_u"]
    # the reference's expected value (-3, -10) for the first point: -prefactor * du / dx
    torch.testing.assert_close(got[0], torch.tensor([-3.0, -10.0], dtype=torch.float64))
    torch.testing.assert_close(got[1], torch.tensor([-3.0, -10.0], dtype=torch.float64))
