"""The AOTIModel stub's typed call with ``v=`` tangents (what drivers seed: ModelUnitTest's
derivative checks, a Newton on the model): the compiled Jacobian blocks applied to them,
against py-eager's forward-mode tangents, on the hello elasticity."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2
import neml2.routes
from neml2.tensors import SR2, FatalError

ROOT = Path(__file__).resolve().parents[1]
INPUT = ROOT / "examples" / "hello" / "input.i"
F64 = torch.float64


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    out = tmp_path_factory.mktemp("tangents")
    art = neml2.routes.build_artifact(
        INPUT,
        "elasticity",
        pairs=["stress:strain"],
        output_dir=out,
        cache_dir=ROOT / "build" / "aoti-cache",
    )
    return neml2.load_model(art.stub_path, "elasticity")


@pytest.mark.parametrize("batch", [(), (1,), (4,), (2, 3)])
def test_v_tangents_are_the_compiled_jacobian_applied(stub, batch):
    eager = neml2.load_model(INPUT, "elasticity")
    g = torch.Generator().manual_seed(3)
    x = SR2(1e-3 * torch.randn(*batch, 6, generator=g, dtype=F64))
    # two seeds: the six unit vectors (the same at every point), and K=2 random ones
    unit = SR2(torch.eye(6, dtype=F64).reshape(6, *([1] * len(batch)), 6))
    rand = SR2(torch.randn(2, *batch, 6, generator=g, dtype=F64))
    v = {"strain": {"unit": unit, "rand": rand}}
    with torch.no_grad():
        y, vo = stub(x, v=v)
        ye, voe = eager(x, v=v)
    torch.testing.assert_close(y.data, ye.data, rtol=1e-12, atol=0.0)
    for k in ("unit", "rand"):
        got, want = vo["stress"][k].data, voe["stress"][k].data
        assert got.shape == want.expand_as(got).shape
        torch.testing.assert_close(got, want.expand_as(got), rtol=1e-12, atol=1e-9)


def test_second_order_tangents_are_refused_in_one_line(stub):
    x = SR2(torch.zeros(2, 6, dtype=F64))
    seed = SR2(torch.eye(6, dtype=F64)[:, None, :])
    with pytest.raises(FatalError, match=r"no second derivatives \(v2=\)"):
        stub(x, v={"strain": {"a": seed}}, v2={"strain": {}})
