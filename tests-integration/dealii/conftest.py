"""deal.II as the host of neml2 (issue #61): ``examples/dealii``'s program, built against
the installed CMake package and run on the tutorial's J2/Voce model compiled with
``-d stress:strain``.

The program needs deal.II (Debian's ``libdeal.ii-dev``), the neml2 CMake package and a
compiled artifact, which ``uv run nox -s dealii`` installs and builds; the tests here are
collected only with ``NEML2_DEALII=1``, which that session sets, and then read

* ``NEML2_DEALII_PROGRAM``: the built ``dealii_bar`` executable;
* ``NEML2_DEALII_ARTIFACT``: the artifact directory it runs.

They compare against scikit-fem (the ``fe`` dependency group) on the same bar, so the
session syncs ``--group fe``. By hand, after the session has built everything once::

    NEML2_DEALII=1 NEML2_DEALII_PROGRAM=build/dealii/example/dealii_bar \\
    NEML2_DEALII_ARTIFACT=build/dealii/artifact/model \\
    .nox/dealii/bin/python -m pytest tests-integration/dealii -s
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
#: tests-integration/fe: the Newton-rate check and the scikit-fem host
FE = HERE.parent / "fe"
if str(FE) not in sys.path:
    sys.path.insert(0, str(FE))

collect_ignore_glob = [] if os.environ.get("NEML2_DEALII") == "1" else ["test_*.py"]

#: the tutorial's J2/Voce input, the source of the artifact the program runs
J2_INPUT = HERE.parents[1] / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"


def _path_from(var: str) -> Path:
    value = os.environ.get(var)
    assert value, f"tests-integration/dealii/conftest.py: set {var} (nox -s dealii does)"
    path = Path(value)
    assert path.exists(), f"tests-integration/dealii/conftest.py: {var}={path} does not exist"
    return path


@pytest.fixture(scope="session")
def dealii_run(tmp_path_factory) -> dict:
    """The program's result (its JSON, see examples/dealii/dealii_bar.cc) on a bar of
    12 x 4 x 4 cells (1536 quadrature points), with its stdout under ``"stdout"``."""
    program = _path_from("NEML2_DEALII_PROGRAM")
    artifact = _path_from("NEML2_DEALII_ARTIFACT")
    out = tmp_path_factory.mktemp("dealii") / "dealii_bar.json"
    proc = subprocess.run(
        [str(program), str(artifact), str(out), "12", "4", "4"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
    )
    assert proc.returncode == 0, f"{program} failed:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    result["stdout"] = proc.stdout
    return result


@pytest.fixture(scope="session")
def j2_point():
    """``neml2.MaterialPoint`` of the tutorial's J2 model on py-eager (float64)."""
    import neml2

    return neml2.MaterialPoint(neml2.load_model(J2_INPUT, "model"))
