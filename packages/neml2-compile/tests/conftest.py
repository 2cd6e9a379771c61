"""One AOTI compile per test session: the elasticity artifact every test here reads.

The compile cache lives in the repository's build/aoti-cache (content-hashed, so
it is shared safely with tests-integration and survives between sessions).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "build" / "aoti-cache"

ELASTICITY = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    return CACHE


@pytest.fixture(scope="session")
def elasticity_input(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("input") / "elasticity.i"
    p.write_text(ELASTICITY)
    return p


@pytest.fixture(scope="session")
def compiled(elasticity_input, tmp_path_factory):
    """(CompileResult, progress lines) of elasticity with -d stress:strain -p E."""
    from neml2.compiler import CompileOptions, compile_file

    lines: list[str] = []
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"])
    out = tmp_path_factory.mktemp("artifacts")
    res = compile_file(elasticity_input, opts, out, cache_dir=CACHE, progress=lines.append)
    return res, lines
