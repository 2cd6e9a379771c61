"""conftest.py's NEML2_FAIL_ON_SKIP: a skip fails the CI run, unless it is for a GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _run(tmp_path: Path, reason: str, env_value: str | None) -> subprocess.CompletedProcess:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\ndef test_ok():\n    pass\n\n"
        f"def test_skipped():\n    pytest.skip({reason!r})\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NEML2_FAIL_ON_SKIP"}
    if env_value is not None:
        env["NEML2_FAIL_ON_SKIP"] = env_value
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("reason", "env_value", "code"),
    [
        ("the neml2 packages are not importable", "1", 1),  # CI: a missing prerequisite
        ("needs a CUDA device", "1", 0),  # CI has no GPU: allowed
        ("the neml2 packages are not importable", None, 0),  # outside CI: a plain skip
    ],
)
def test_a_skip_fails_only_in_ci_and_only_without_hardware_reason(
    tmp_path, reason, env_value, code
):
    out = _run(tmp_path, reason, env_value)
    assert out.returncode == code, out.stdout + out.stderr
    if code:
        assert (
            "test_one.py::test_skipped: Skipped: the neml2 packages are not importable"
            in out.stdout
        )
