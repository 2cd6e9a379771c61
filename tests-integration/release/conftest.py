"""Fixtures of the release-tool tests (helpers: _release_repos.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _release_repos import GIT_ENV, clone_work_tree, uv_path


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch):
    """Commits made by the code under test need an identity too."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def uv_env(monkeypatch) -> dict[str, str]:
    """The environment of a subprocess that runs uv (``$UV`` set, as ``uv run`` does)."""
    exe = uv_path()
    monkeypatch.setenv("UV", exe)
    path = os.pathsep.join([str(Path(exe).parent), os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)
    return {**os.environ}


@pytest.fixture
def work_clone(tmp_path) -> Path:
    """A throwaway clone of this repository holding its work tree as it is now."""
    return clone_work_tree(tmp_path / "clone")
