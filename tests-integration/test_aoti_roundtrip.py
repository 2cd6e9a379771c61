"""compile -> load round trips: neml2-compile, then py-aoti (neml2.aoti.Model and the
AOTIModel stub through load_model / neml2-run) against py-eager.

Each artifact is compiled once per session; the graphs come from the content-hashed
cache in build/aoti-cache when an earlier session (or the neml2-compile tests) built them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import neml2
import neml2.drivers
from neml2.aoti import Model as AOTIRuntime
from neml2.compiler import CompileOptions, compile_file
from neml2.tensors import FatalError

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "aoti-cache"
F64 = torch.float64

ELASTICITY = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 6, dtype=torch.float64).unsqueeze(-1).expand(6, 4))'
  []
  [strains]
    type = Python
    expr = '''
      SR2(torch.linspace(0.0, 1.0, 6, dtype=torch.float64).reshape(6, 1, 1)
          * torch.tensor([[0.01, -0.003, -0.003, 0.0, 0.002, 0.0]], dtype=torch.float64)
          * torch.arange(1, 5, dtype=torch.float64).reshape(1, 4, 1))
    '''
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    save_as = 'result.pt'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture(scope="session")
def elasticity(tmp_path_factory):
    """(input file, CompileResult) of elasticity with -d stress:strain -p elasticity.E."""
    d = tmp_path_factory.mktemp("elasticity")
    src = d / "elasticity.i"
    src.write_text(ELASTICITY)
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["elasticity.E"])
    res = compile_file(src, opts, d / "artifacts", cache_dir=CACHE)
    return src, res


def _strain(n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(n + 1000 * seed)
    return 1e-2 * (torch.rand(n, 6, generator=g, dtype=F64) - 0.5)


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10 * float(b.abs().max()) + 1e-300)


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_elasticity_matches_eager(elasticity, n):
    src, res = elasticity
    eager = neml2.load_model(src, "elasticity")
    aoti = AOTIRuntime(res.artifact_dir)
    x = {"strain": _strain(n)}
    t = {"strain": _strain(n, seed=1)}
    _close(aoti.forward(x)["stress"], eager.forward(x)["stress"])
    _, J = aoti.jacobian(x)
    _, Je = eager.jacobian(x)
    assert J["stress"]["strain"].shape == (n, 6, 6)
    _close(J["stress"]["strain"], Je["stress"]["strain"])
    _, jv = aoti.jvp(x, t)
    _, jve = eager.jvp(x, t)
    _close(jv["stress"], jve["stress"])


def test_promoted_parameter(elasticity):
    src, res = elasticity
    aoti = AOTIRuntime(res.artifact_dir)
    assert list(aoti.named_parameters()) == ["E"]
    eager = neml2.load_model(src, "elasticity")
    x = {"strain": _strain(5)}
    aoti.named_parameters()["E"].fill_(150e3)
    eager.set_parameter("E", torch.tensor(150e3, dtype=F64))
    _close(aoti.forward(x)["stress"], eager.forward(x)["stress"])


def test_stub_runs_through_load_model(elasticity):
    src, res = elasticity
    m = neml2.load_model(res.stub_path, "elasticity")
    assert type(m).__name__ == "AOTIModel"
    assert m.input_names == ["strain"] and m.output_names == ["stress"]
    assert m.input_base_shapes == [(6,)] and m.dtype == F64
    eager = neml2.load_model(src, "elasticity")
    x = {"strain": _strain(3)}
    _close(m.forward(x)["stress"], eager.forward(x)["stress"])
    _close(m.jacobian(x)[1]["stress"]["strain"], eager.jacobian(x)[1]["stress"]["strain"])


def test_stub_is_relocatable(elasticity, tmp_path):
    import shutil

    _, res = elasticity
    dst = tmp_path / "moved"
    shutil.copytree(res.artifact_dir.parent, dst)
    m = neml2.load_model(dst / "elasticity_aoti.i", "elasticity")
    assert str(dst) in str(m.runtime.path)


def test_neml2_run_with_the_stub_matches_eager(elasticity, tmp_path):
    """The same driver input, with [Models/elasticity] swapped for the AOTIModel stub."""
    from neml2.drivers._cli import run_main

    _, res = elasticity
    eager_in = tmp_path / "eager.i"
    eager_in.write_text(ELASTICITY)
    aoti_in = tmp_path / "aoti.i"
    body = ELASTICITY[: ELASTICITY.index("[Models]")]
    aoti_in.write_text(
        body
        + "[Models]\n  [elasticity]\n    type = AOTIModel\n"
        + f"    artifact_path = '{res.artifact_dir}'\n  []\n[]\n"
    )
    assert run_main([str(eager_in), "driver", "--quiet"]) == 0
    eager = torch.load(tmp_path / "result.pt")
    assert run_main([str(aoti_in), "driver", "--quiet"]) == 0
    aoti = torch.load(tmp_path / "result.pt")
    assert set(aoti) == set(eager)
    for k in eager:
        _close(aoti[k], eager[k])


def test_bad_artifact_through_the_stub(elasticity, tmp_path):
    import shutil

    _, res = elasticity
    dst = tmp_path / "a"
    shutil.copytree(res.artifact_dir.parent, dst)
    meta = json.loads((dst / "elasticity" / "metadata.json").read_text())
    meta["torch_version"] = "1.13.0"
    (dst / "elasticity" / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(FatalError, match=r"elasticity_aoti.i:\d+.*built with torch 1.13.0"):
        neml2.load_model(dst / "elasticity_aoti.i", "elasticity")


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"strian": torch.zeros(2, 6, dtype=F64)},
            "unknown input 'strian' \\(did you mean 'strain'",
        ),
        ({"strain": torch.zeros(2, 3, dtype=F64)}, "input 'strain' has shape"),
        ({"strain": torch.zeros(2, 6, dtype=torch.float32)}, "input 'strain' has dtype"),
    ],
)
def test_bad_inputs(elasticity, inputs, message):
    _, res = elasticity
    with pytest.raises(FatalError, match=message):
        AOTIRuntime(res.artifact_dir).forward(inputs)


def test_missing_pair_at_runtime(elasticity):
    _, res = elasticity
    aoti = AOTIRuntime(res.artifact_dir)
    _, J = aoti.jacobian({"strain": _strain(2)})
    with pytest.raises(FatalError, match="no Jacobian block of output 'strain'"):
        J["strain"]
