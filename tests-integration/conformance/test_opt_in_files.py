"""The hours-long conformance checks stay out of the default run.

test_conformance_routes.py (the suite on the compiled routes) and test_graph_capture.py
(export and Dynamo captures of every case) are collected only when their variable is set
(``_opt_in.OPT_IN``, read by conftest.py). The graph-capture file once lacked its gate
and ran all 251 cases twice in default CI, past the 90-minute limit: this checks the
gate from a fresh pytest process, both ways.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _opt_in import OPT_IN

HERE = Path(__file__).resolve().parent


def _collected(env_set: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k not in OPT_IN.values()}
    env.update(env_set)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(HERE),
            "--collect-only",
            "-q",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=HERE,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run.stdout


def test_default_run_leaves_the_opt_in_files_out():
    out = _collected({})
    assert "test_conformance.py::" in out, "the py-eager suite itself was not collected"
    for name in OPT_IN:
        assert f"{name}::" not in out, f"{name} is collected without {OPT_IN[name]}"


@pytest.mark.parametrize("name", sorted(OPT_IN))
def test_variable_collects_its_file(name):
    value = "py-jit" if name == "test_conformance_routes.py" else "export"
    out = _collected({OPT_IN[name]: value})
    assert f"{name}::" in out, f"{OPT_IN[name]}={value} did not collect {name}"
