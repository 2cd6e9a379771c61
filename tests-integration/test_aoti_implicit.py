"""Implicit models through AOTI: the in-graph Newton (while_loop) compiled, against py-eager.

Uses the reference library's regression case rate_independent_plasticity/isoharden
(J2, Voce hardening, ImplicitUpdate + Newton): compiled with -d stress:E, checked at
batch 1, 7 and 1000 (forward, the IFT Jacobian and a jvp, 1e-10 relative), and run
through its compiled stub by neml2-run against the gold result.

Cold, the two graphs take ~3-5 minutes to compile on a 2-core machine, so this module
runs only with NEML2_TEST_AOTI_IMPLICIT=1 (warm runs reuse build/aoti-cache).
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
CASE = CONFORMANCE / "regression" / "solid_mechanics" / "rate_independent_plasticity" / "isoharden"
F64 = torch.float64

pytestmark = [
    pytest.mark.skipif(not CASE.is_dir(), reason="the conformance data is not available"),
    pytest.mark.slow_compile,  # deselected unless NEML2_TEST_AOTI_IMPLICIT=1 (conftest.py)
]


@pytest.fixture(scope="session")
def implicit(tmp_path_factory):
    d = tmp_path_factory.mktemp("isoharden")
    opts = CompileOptions.from_strings("model", ["stress:E"])
    res = compile_file(CASE / "model.i", opts, d / "artifacts", cache_dir=CACHE)
    return res


def _inputs(model, n):
    g = torch.Generator().manual_seed(n)
    x = {
        k: torch.zeros((n, *s), dtype=F64)
        for k, s in zip(model.input_names, model.input_base_shapes, strict=True)
    }
    x["t"] = torch.ones(n, dtype=F64)
    x["E"] = 0.02 * (torch.rand(n, 6, generator=g, dtype=F64) - 0.5)
    return x


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_matches_eager(implicit, n):
    eager = neml2.load_model(CASE / "model.i", "model")
    aoti = AOTIRuntime(implicit.artifact_dir)
    assert aoti.input_names == eager.input_names
    x = _inputs(eager, n)
    with torch.no_grad():
        out, J = aoti.jacobian(x)
        oute, Je = eager.jacobian(x)
    for k in eager.output_names:
        scale = float(oute[k].abs().max()) + 1e-300
        torch.testing.assert_close(out[k], oute[k], rtol=1e-10, atol=1e-10 * scale)
    scale = float(Je["stress"]["E"].abs().max())
    torch.testing.assert_close(J["stress"]["E"], Je["stress"]["E"], rtol=1e-10, atol=1e-10 * scale)
    f = aoti.forward(x)
    torch.testing.assert_close(f["stress"], out["stress"], rtol=1e-12, atol=0)
    t = {"E": 1e-3 * (torch.rand(n, 6, generator=torch.Generator().manual_seed(5), dtype=F64))}
    with torch.no_grad():
        _, jv = aoti.jvp(x, t)
        _, jve = eager.jvp(x, t)
    scale = float(jve["stress"].abs().max())
    torch.testing.assert_close(jv["stress"], jve["stress"], rtol=1e-10, atol=1e-10 * scale)


def test_metadata_records_the_solver(implicit):
    solvers = implicit.metadata["solvers"]
    assert solvers and solvers[0]["solver"] in ("Newton", "NewtonWithLineSearch")


def test_regression_through_the_stub(implicit, tmp_path):
    """neml2-run on the case's own driver blocks with [Models/model] -> AOTIModel."""
    from neml2.drivers._cli import run_main

    text = (CASE / "model.i").read_text()
    head = text[: text.index("[Models]")]
    shutil.copytree(CASE / "gold", tmp_path / "gold")
    stub = tmp_path / "compiled.i"
    stub.write_text(
        head
        + "[Models]\n  [model]\n    type = AOTIModel\n"
        + f"    artifact_path = '{implicit.artifact_dir}'\n  []\n[]\n"
    )
    assert run_main([str(stub), "regression", "--quiet"]) == 0


def test_graph_status_is_declared(implicit):
    graphs = implicit.metadata["graphs"]
    assert graphs["forward"]["status"] and graphs["jacobian"]["status"]


@pytest.fixture(scope="session")
def unconverging(tmp_path_factory):
    """The same model with unreachable tolerances (compiled in): forward only."""
    d = tmp_path_factory.mktemp("isoharden_bad")
    overrides = [
        "Solvers/newton/max_its=2",
        "Solvers/newton/abs_tol=1e-300",
        "Solvers/newton/rel_tol=1e-300",
    ]
    opts = CompileOptions.from_strings("model")
    return compile_file(CASE / "model.i", opts, d, overrides, cache_dir=CACHE)


def test_non_convergence_is_a_convergence_error(unconverging):
    from neml2.tensors import ConvergenceError

    aoti = AOTIRuntime(unconverging.artifact_dir)
    eager = neml2.load_model(CASE / "model.i", "model")
    x = _inputs(eager, 3)
    x["E"] = torch.tensor([[0.05, -0.02, -0.02, 0, 0, 0]] * 2 + [[1e-6, 0, 0, 0, 0, 0]], dtype=F64)
    with pytest.raises(ConvergenceError, match=r"did not converge at 2 of 3 points") as e:
        aoti.forward(x)
    assert e.value.recoverable
    # an elastic point converges
    aoti.forward({k: v[2:] for k, v in x.items()})
