"""Test configuration for neml2-hit.

Makes ``neml2.hit`` importable from this checkout even when the workspace
environment's editable install of neml2-hit predates the package's sources
(``neml2`` is a namespace shared by several distributions).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))
import neml2  # noqa: E402

if str(SRC / "neml2") not in list(neml2.__path__):
    neml2.__path__.append(str(SRC / "neml2"))

REPO = Path(__file__).resolve().parents[3]
CONFORMANCE = Path(
    os.environ.get("NEML2_CONFORMANCE_DIR", REPO / "tests-integration" / "conformance" / "data")
)


@pytest.fixture(scope="session")
def conformance_files() -> list[Path]:
    """Every ``.i`` file of the shared conformance folder (skips if absent)."""
    if not CONFORMANCE.is_dir():
        pytest.skip(f"conformance inputs not found at {CONFORMANCE}")
    files = sorted(CONFORMANCE.rglob("*.i"))
    if not files:
        pytest.skip(f"no .i files under {CONFORMANCE}")
    return files
