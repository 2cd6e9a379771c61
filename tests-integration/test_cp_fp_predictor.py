"""CrystalPlasticityDeformationGradientPredictor inside an implicit crystal-plasticity update.

``cp_fp_predictor/model.i`` solves a multiplicative (``F = Fe Fp``) single crystal for
``tauc`` and ``Fp`` with three predictors (see its header). A predictor moves only
Newton's starting point, so where two of them converge they give the same history;
the Newton tolerance there is absolute (a relative one would stop each guess at a
different distance from the solution). The iterations each one needs are recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2.drivers  # noqa: F401  (registers the drivers)
from neml2.models import load_input
from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import ConvergenceError

INPUT = Path(__file__).resolve().parent / "cp_fp_predictor" / "model.i"
FIELDS = ("S", "Fp", "tauc")


@pytest.fixture(scope="module")
def ctx():
    return load_input(INPUT)


def _run(ctx, driver: str, model: str):
    """Run *driver*; its stacked history and the Newton iterations of each step."""
    updates = implicit_updates(ctx.top_model(model))
    assert len(updates) == 1
    logs = record_solves(updates)
    try:
        ctx.object("Drivers", driver).run()
    finally:
        stop_recording(updates)
    its = [int(it) for _, _, it in logs[0]]
    return ctx.object("Drivers", driver).stacked, its


def _assert_same(a, b):
    for name in FIELDS:
        x, y = torch.as_tensor(a[name]), torch.as_tensor(b[name])
        assert x.shape == y.shape
        err = (x - y).abs().max()
        scale = y.abs().max()
        assert err <= 1e-8 * scale, f"{name}: max |difference| {float(err):.3e}"


def test_reference_block_loads(ctx):
    m = ctx.model("predictor")
    assert type(m).__name__ == "CrystalPlasticityDeformationGradientPredictor"
    assert list(m.input_spec) == ["F", "Fp~1"]
    assert list(m.output_spec) == ["Fp"]


def test_same_history_as_previous_values_guess(ctx):
    old, its_old = _run(ctx, "fine_old", "stress_old")
    fp, its_fp = _run(ctx, "fine_fp", "stress_fp")
    assert len(its_old) == len(its_fp) == 20
    _assert_same(fp, old)
    # plastic flow happened (the predictor's branch was taken, not just Fp~1)
    assert torch.as_tensor(old["tauc"])[-1].min() > 1.0
    print(
        f"Newton iterations over 20 steps: previous values {sum(its_old)}, Fp predictor "
        f"{sum(its_fp)}"
    )


def test_large_steps_converge_only_from_the_predicted_guess(ctx):
    with pytest.raises(ConvergenceError, match="model_old"):
        _run(ctx, "coarse_old", "stress_old")
    fp, its_fp = _run(ctx, "coarse_fp", "stress_fp")
    ref, its_ref = _run(ctx, "coarse_ref", "stress_ref")
    assert len(its_fp) == len(its_ref) == 10
    _assert_same(fp, ref)
    print(
        f"Newton iterations over 10 steps: Fp predictor + tauc~1 {sum(its_fp)}, "
        f"Fp predictor alone {sum(its_ref)}"
    )
