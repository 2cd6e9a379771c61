"""``neml2-compile --allow-python-code``: the opt-in for ``[Tensors]`` expressions that
run arbitrary Python, for the process. No compile runs: ``compile_file`` is replaced."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from neml2.compiler import _cli
from neml2.models import ALLOW_PYTHON_CODE_ENV


@pytest.fixture
def compiled(monkeypatch, tmp_path):
    """The opt-in seen by each compile_file call."""
    monkeypatch.delenv(ALLOW_PYTHON_CODE_ENV, raising=False)
    seen: list[str | None] = []

    def fake(path, options, output_dir=None, overrides=(), **kwargs):
        seen.append(os.environ.get(ALLOW_PYTHON_CODE_ENV))
        return SimpleNamespace(graphs=[], cache_hits=0)

    monkeypatch.setattr(_cli, "compile_file", fake)
    p = tmp_path / "m.i"
    p.write_text("[Models]\n  [m]\n    type = LinearIsotropicElasticity\n  []\n[]\n")
    return p, seen


def test_flag_opts_in_before_loading(compiled):
    path, seen = compiled
    assert _cli.main([str(path), "m", "--quiet", "--allow-python-code"]) == 0
    assert seen == ["1"]


def test_default_does_not_opt_in(compiled):
    path, seen = compiled
    assert _cli.main([str(path), "m", "--quiet"]) == 0
    assert seen == [None]
