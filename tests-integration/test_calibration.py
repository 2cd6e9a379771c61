"""examples/calibration/calibrate.py recovers its known parameters (a smaller history).

The example is run as a user runs it (a subprocess of the workspace Python),
with 21 instead of 41 time steps per test; it must exit 0, recover every
parameter within 1 % of the truth in ``model.i``, start at least 10 % away
from it, and write its plot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyzag")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "calibration" / "calibrate.py"


def test_calibration_example_recovers_the_truth(tmp_path):
    plot, summary = tmp_path / "fit.png", tmp_path / "summary.json"
    cmd = [sys.executable, str(SCRIPT), "--steps", "21", "--plot", str(plot)]
    cmd += ["--summary", str(summary)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(summary.read_text())
    assert set(result["fitted"]) == {
        "elasticity.E",
        "yield_surface.yield_stress",
        "isoharden.saturated_hardening",
        "isoharden.saturation_rate",
    }
    for name, truth in result["truth"].items():
        assert abs(result["start"][name] / truth - 1) >= 0.1, name
        assert result["fitted"][name] == pytest.approx(truth, rel=0.01), name
    assert result["loss"][-1] < 1e-3 * result["loss"][0]
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_calibration_example_reports_a_miss(tmp_path):
    """With one iteration the fit is off: the script says so and exits 1."""
    cmd = [sys.executable, str(SCRIPT), "--steps", "11", "--iterations", "1", "--plot", ""]
    cmd += ["--summary", str(tmp_path / "s.json")]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "not recovered within 1 %" in proc.stderr
