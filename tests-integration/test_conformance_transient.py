"""The reference library's transient cases: regression (gold .pt) and verification (CSV).

Every ``.i`` under ../shared/conformance/{regression,verification} is collected; each
TransientRegression / Verification block in it must pass at the file's tolerances.
A file using types that are not implemented yet is an xfail naming them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import neml2.drivers  # noqa: F401  (registers the drivers)
from neml2 import hit
from neml2.models import load_input, lookup

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT.parent / "shared" / "conformance"
FILES = (
    sorted([*(BASE / "regression").rglob("*.i"), *(BASE / "verification").rglob("*.i")])
    if BASE.is_dir()
    else []
)
CHECKS = ("TransientRegression", "Verification")


def _types(root) -> set[str]:
    out = set()
    for node in root.walk():
        p = node.param("type") if node.name else None
        if p is not None and node.parent is not None and node.parent.parent is not None:
            out.add(p.as_str())
    return out


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(BASE)) for p in FILES])
def test_transient_case(path):
    root = hit.parse_file(path).merged()
    missing = sorted(t for t in _types(root) if lookup(t) is None and t != "Python")
    if missing:
        pytest.xfail(f"not implemented yet: {', '.join(missing)}")
    ctx = load_input(path)
    names = [
        b.name for b in ctx.section("Drivers").children() if b.param("type").as_str() in CHECKS
    ]
    assert names, f"{path} has no {' / '.join(CHECKS)} block"
    for name in names:
        check = ctx.object("Drivers", name)
        assert check.run(), "\n".join(check.failures[:10])
