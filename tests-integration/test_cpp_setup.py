"""Bad C++ set-up gets a message that says how to fix it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not on PATH")


def _configure(tmp_path: Path, *defs: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["cmake", "-S", str(ROOT / "cpp"), "-B", str(tmp_path / "build"), *defs],
        capture_output=True,
        text=True,
    )


def test_configure_without_torch_says_how_to_fix(tmp_path):
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    r = _configure(tmp_path, f"-DPython3_EXECUTABLE={bare / 'bin' / 'python'}")
    assert r.returncode != 0
    assert "cannot import torch" in r.stderr
    assert "uv sync" in r.stderr and "nox -s cpp" in r.stderr


def test_configure_with_a_non_wheel_dir(tmp_path):
    r = _configure(tmp_path, f"-DTORCH_WHEEL_DIR={tmp_path}")
    assert r.returncode != 0
    # CMake wraps the message where the (temporary) path makes the line long
    assert "is not a torch wheel directory" in " ".join(r.stderr.split())


def test_configure_finds_the_wheel_torch(tmp_path):
    """The happy path needs no CUDA toolkit even though PyPI's torch is a CUDA build."""
    r = _configure(tmp_path, f"-DPython3_EXECUTABLE={sys.executable}", "-DNEML2_BUILD_TESTS=OFF")
    assert r.returncode == 0, r.stderr
    assert "Found TorchWheel" in r.stdout
