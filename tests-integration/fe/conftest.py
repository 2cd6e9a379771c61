"""neml2 inside finite-element codes (issue #61).

``test_host_*.py``: FE codes from PyPI as hosts, scikit-fem and torch-fem running a
global Newton around ``neml2.MaterialPoint`` on the tutorial's J2/Voce model. The FE
codes are the ``fe`` dependency group of the workspace (not in the default
environment), so those files are collected only with ``NEML2_FE_HOSTS=1``, which
the ``integration`` session and ``uv run nox -s fe`` (the hosts alone) set after
syncing ``--group fe``; a run without it (a bare ``pytest tests-integration`` in the
default environment) leaves them out and collects the folder's other tests. By hand::

    UV_PROJECT_ENVIRONMENT=/tmp/fe-venv uv sync --all-packages --frozen --group fe
    NEML2_FE_HOSTS=1 /tmp/fe-venv/bin/python -m pytest tests-integration/fe/test_host_*.py -s
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: the tests that need the FE codes (the ``fe`` group); ``nox -s fe`` runs these
FE_HOST_TESTS = "test_host_*.py"
collect_ignore_glob = [] if os.environ.get("NEML2_FE_HOSTS") == "1" else [FE_HOST_TESTS]

#: the tutorial's J2/Voce input, used unchanged
J2_INPUT = HERE.parents[1] / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"


@pytest.fixture(scope="session")
def j2_input() -> Path:
    """The tutorial's J2/Voce input file."""
    return J2_INPUT


@pytest.fixture(scope="session")
def j2_model():
    """The tutorial's J2 model (py-eager, float64)."""
    import neml2

    return neml2.load_model(J2_INPUT, "model")


@pytest.fixture(scope="session")
def j2_constants(j2_model) -> dict[str, float]:
    """``E``, ``nu``, ``sy``, ``R``, ``d`` of the J2/Voce model (yield stress
    ``sy + R (1 - exp(-d ep))``), read from its parameters so that the reference
    computations follow the input file."""
    suffixes = {
        "E": "elasticity.E",
        "nu": "elasticity.nu",
        "sy": "yield_surface.yield_stress",
        "R": "voce.saturated_hardening",
        "d": "voce.saturation_rate",
    }
    params = {n: float(p.detach()) for n, p in j2_model.named_parameters()}
    out = {}
    for key, suffix in suffixes.items():
        found = {v for n, v in params.items() if n.endswith(suffix)}
        assert len(found) == 1, f"{J2_INPUT}: parameter '*{suffix}': found {found}"
        out[key] = found.pop()
    return out


@pytest.fixture(scope="session")
def j2_point(j2_model):
    """``neml2.MaterialPoint`` of the J2 model."""
    import neml2

    return neml2.MaterialPoint(j2_model)
