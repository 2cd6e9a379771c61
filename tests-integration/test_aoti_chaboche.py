"""Chaboche viscoplasticity through AOTI (in-graph Newton, 4 unknowns) against py-eager.

The regression case viscoplasticity/chaboche (Perzyna flow, two Chaboche back stresses,
Voce hardening, ImplicitUpdate + Newton) compiled with -d stress:E: forward, jvp and the
IFT Jacobian block from py-aoti equal py-eager to 1e-10 relative at batch 1, 7 and 1000,
and the case runs through its compiled stub with neml2-run against the gold result.

Its Newton body creates tensor constants (the SR2LinearCombination weights); AOT
Inductor cannot lower those inside a while_loop, which neml2-compile works around
(neml2.compiler._subgraph_constants). The compile is shared with the C++ test fixture
(cpp/tests/make_artifact.py) through build/aoti-cache: same source, same options.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

import neml2
import neml2.drivers
from neml2.aoti import Model as AOTIRuntime
from neml2.compiler import CompileOptions, compile_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests-integration" / "conformance"))
from _cases import FOLDER as CONFORMANCE  # noqa: E402

CACHE = ROOT / "build" / "aoti-cache"
CASES = CONFORMANCE / "regression" / "solid_mechanics"
CASE = CASES / "viscoplasticity" / "chaboche"
F64 = torch.float64

pytestmark = pytest.mark.skipif(not CASE.is_dir(), reason="the conformance data is not available")
#: the compile takes minutes cold (see benchmarks/aoti/results.md): opt-in like
#: test_aoti_implicit.py; warm runs reuse build/aoti-cache without even exporting
slow = pytest.mark.slow_compile  # deselected unless NEML2_TEST_AOTI_IMPLICIT=1 (conftest.py)


@pytest.fixture(scope="session")
def chaboche(tmp_path_factory):
    d = tmp_path_factory.mktemp("chaboche")
    opts = CompileOptions.from_strings("model", ["stress:E"])
    return compile_file(CASE / "model.i", opts, d / "artifacts", cache_dir=CACHE)


@pytest.fixture(scope="session")
def eager():
    return neml2.load_model(CASE / "model.i", "model")


def inputs(model, n: int) -> dict[str, torch.Tensor]:
    """A plastic step from a non-trivial state: strain increments of ~1 %, dt = 1."""
    g = torch.Generator().manual_seed(n)

    def r(*s, scale=1.0):
        return scale * (torch.rand(n, *s, generator=g, dtype=F64) - 0.5)

    x = {
        k: torch.zeros((n, *s), dtype=F64)
        for k, s in zip(model.input_names, model.input_base_shapes, strict=True)
    }
    x["E~1"] = r(6, scale=0.004)
    x["E"] = x["E~1"] + r(6, scale=0.02)
    x["t~1"] = torch.zeros(n, dtype=F64)
    x["t"] = torch.ones(n, dtype=F64)
    x["stress~1"] = r(6, scale=50.0)
    x["equivalent_plastic_strain~1"] = 1e-3 * torch.rand(n, generator=g, dtype=F64)
    x["X1~1"] = r(6, scale=5.0)
    x["X2~1"] = r(6, scale=5.0)
    return x


def close(a, b, rtol=1e-10):
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * float(b.abs().max()) + 1e-300)


@slow
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_matches_eager(chaboche, eager, n):
    aoti = AOTIRuntime(chaboche.artifact_dir)
    assert aoti.input_names == eager.input_names
    assert aoti.output_names == eager.output_names
    x = inputs(eager, n)
    dE = 1e-3 * torch.randn(n, 6, generator=torch.Generator().manual_seed(7), dtype=F64)
    with torch.no_grad():
        oute, Je = eager.jacobian(x)
        _, jve = eager.jvp(x, {"E": dE})
        out = aoti.forward(x)
        out2, J = aoti.jacobian(x)
        _, jv = aoti.jvp(x, {"E": dE})
    for k in eager.output_names:
        close(out[k], oute[k])
        close(out2[k], oute[k])
    # the step is plastic somewhere (otherwise the test would not exercise the solve)
    assert float(out["equivalent_plastic_strain"].sub(x["equivalent_plastic_strain~1"]).max()) > 0
    close(J["stress"]["E"], Je["stress"]["E"])
    close(jv["stress"], jve["stress"])


@slow
def test_regression_through_the_stub(chaboche, tmp_path):
    """neml2-run on the case's own driver blocks with [Models/model] -> AOTIModel."""
    from neml2.drivers._cli import run_main

    text = (CASE / "model.i").read_text()
    head = text[: text.index("[Models]")]
    shutil.copytree(CASE / "gold", tmp_path / "gold")
    stub = tmp_path / "compiled.i"
    stub.write_text(
        head
        + "[Models]\n  [model]\n    type = AOTIModel\n"
        + f"    artifact_path = '{chaboche.artifact_dir}'\n  []\n[]\n"
    )
    assert run_main([str(stub), "regression", "--quiet"]) == 0


@slow
def test_metadata_records_the_solver(chaboche):
    assert chaboche.metadata["solvers"][0]["solver"] == "Newton"
    assert chaboche.metadata["graphs"]["forward"]["status"]
