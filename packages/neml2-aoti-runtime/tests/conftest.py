"""The tiny "scale" artifact (built by cpp/tests/make_artifact.py with plain torch:
this package's tests cannot use neml2-compile) and the "wobble" artifact of the
dispatch tests (cpp/tests/make_dispatch_artifact.py). The C++ tests load the same
ones, and both share their cached .pt2 files under build/aoti-cache.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _builder(name: str):
    """The module cpp/tests/<name>.py, which builds an artifact with plain torch."""
    spec = importlib.util.spec_from_file_location(
        f"neml2_{name}", ROOT / "cpp" / "tests" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_configure(config: pytest.Config) -> None:
    # here, not in pyproject.toml: an edit there rebuilds the runtime (its uv cache-keys)
    for line in (
        "needs_gpu: needs a CUDA device (its skip passes CI only without one)",
        "needs_sibling: needs a sibling package; deselected in this package's nox session",
    ):
        config.addinivalue_line("markers", line)


make_artifact = _builder("make_artifact")
make_dispatch_artifact = _builder("make_dispatch_artifact")
reference = make_artifact.reference
metadata = make_artifact.metadata


@pytest.fixture(scope="session")
def artifact(tmp_path_factory) -> Path:
    return make_artifact.build(tmp_path_factory.mktemp("art"))


@pytest.fixture(scope="session")
def wobble(tmp_path_factory) -> Path:
    """x, strain and slip (a sub-batch axis of 3) -> y, s and g (the same axis)."""
    return make_dispatch_artifact.build(tmp_path_factory.mktemp("dispatch"))


@pytest.fixture
def edited(artifact, tmp_path):
    """A copy of the artifact whose metadata the test edits: ``edited(fn) -> path``."""

    def make(edit):
        dst = tmp_path / "scale"
        shutil.copytree(artifact, dst)
        meta = metadata()
        text = edit(meta)
        (dst / "metadata.json").write_text(text if isinstance(text, str) else json.dumps(meta))
        return dst

    return make
