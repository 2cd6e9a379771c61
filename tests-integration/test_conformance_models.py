"""The reference library's model unit tests (../shared/conformance/models), values and derivatives.

Every ``.i`` file in the folder is collected, so a file dropped there is tested
automatically. A file whose model types are not implemented yet is reported as
xfail naming the missing types; once every type it uses is registered it must pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import neml2.drivers  # noqa: F401  (registers ModelUnitTest)
from neml2 import hit
from neml2.models import load_input, lookup

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT.parent / "shared" / "conformance" / "models"
FILES = sorted(FOLDER.rglob("*.i")) if FOLDER.is_dir() else []


def _types(path: Path) -> set[str]:
    root = hit.parse_file(path).merged()
    out = set()
    for section in ("Models", "Data"):
        sec = root.find(section)
        for block in sec.children() if sec is not None else []:
            p = block.param("type")
            if p is not None:
                out.add(p.as_str())
    return out


def test_folder_is_there():
    if not FOLDER.is_dir():
        if os.environ.get("NEML2_REQUIRE_CONFORMANCE"):
            pytest.fail(f"conformance data not found at {FOLDER} (NEML2_REQUIRE_CONFORMANCE=1)")
        pytest.skip(f"conformance data not found at {FOLDER}")
    assert len(FILES) >= 37


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FOLDER)) for p in FILES])
def test_model_unit(path, capsys):
    missing = sorted(t for t in _types(path) if lookup(t) is None)
    if missing:
        pytest.xfail(f"not implemented yet: {', '.join(missing)}")
    ctx = load_input(path)
    drivers = ctx.section("Drivers")
    names = [b.name for b in drivers.children() if b.param("type").as_str() == "ModelUnitTest"]
    assert names, f"{path} has no ModelUnitTest block"
    for name in names:
        driver = ctx.object("Drivers", name)
        ok = driver.run()
        assert ok, "\n".join(driver.failures)
