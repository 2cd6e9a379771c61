"""Workspace invariants: one torch, sibling ranges, the shared neml2 namespace."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/pyproject.toml"))
SUBPACKAGES = ["hit", "tensors", "models", "drivers", "compiler", "aoti"]


def _pyproject(name: str) -> dict:
    return tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())


def _locked(name: str) -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (pkg,) = [p for p in lock["package"] if p["name"] == name]
    return pkg["version"]


def test_six_packages():
    assert PACKAGES == [
        "neml2-aoti-runtime",
        "neml2-compile",
        "neml2-drivers",
        "neml2-hit",
        "neml2-models",
        "neml2-tensors",
    ]


def test_runtime_is_built_against_the_locked_torch():
    """libneml2 compiles against the build-time torch; it must be the one the lock installs."""
    requires = _pyproject("neml2-aoti-runtime")["build-system"]["requires"]
    (pin,) = [r for r in requires if r.startswith("torch")]
    assert pin == f"torch=={_locked('torch')}", (
        f"packages/neml2-aoti-runtime/pyproject.toml builds against {pin!r} but uv.lock "
        f"installs torch {_locked('torch')}: update the build-system pin"
    )


def test_one_torch_minor_everywhere():
    specs = {
        name: dep
        for name in PACKAGES
        for dep in _pyproject(name)["project"]["dependencies"]
        if dep.startswith("torch")
    }
    assert len(set(specs.values())) == 1, specs
    locked = _locked("torch")
    major, minor = locked.split(".")[:2]
    assert next(iter(specs.values())) == f"torch>={major}.{minor},<{major}.{int(minor) + 1}"


def test_siblings_use_compatible_ranges():
    for name in PACKAGES:
        for dep in _pyproject(name)["project"]["dependencies"]:
            if dep.startswith("neml2-"):
                assert "==" not in dep and ">=" in dep and "<" in dep, f"{name}: {dep}"


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_namespace_merges_every_sibling(sub):
    import neml2

    mod = importlib.import_module(f"neml2.{sub}")
    assert mod.__name__ == f"neml2.{sub}"
    assert hasattr(neml2, "load_model")


@pytest.mark.parametrize(
    "module",
    ["neml2.solvers", "neml2.models", "neml2.drivers", "neml2.compiler", "neml2.aoti", "neml2"],
)
def test_each_package_imports_first(module):
    """No import cycle depends on which package a program happens to import first."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
