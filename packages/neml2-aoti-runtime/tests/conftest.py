"""The tiny "scale" artifact (built by cpp/tests/make_artifact.py with plain torch:
this package's tests cannot use neml2-compile). The C++ tests load the same one,
and both share its cached .pt2 files under build/aoti-cache.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location(
    "neml2_make_artifact", ROOT / "cpp" / "tests" / "make_artifact.py"
)
make_artifact = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_artifact)
reference = make_artifact.reference
metadata = make_artifact.metadata


@pytest.fixture(scope="session")
def artifact(tmp_path_factory) -> Path:
    return make_artifact.build(tmp_path_factory.mktemp("art"))


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
