"""The single-crystal benchmark model (12 slip systems, Newton with line search) exports.

Its residual function once packed the residuals with the batch shape captured from
outside the Newton loop; inside the traced ``while_loop`` body Dynamo cannot pass such a
symbolic size to ``reshape`` ("Unsupported argument type in tensor method call"), so
``torch.export`` of the model failed. Export only (about 50 s), no AOT Inductor; the
compiled crystal models are checked by the route matrix.
"""

from __future__ import annotations

from pathlib import Path

import torch

import neml2
from neml2.compiler._compile import export_graph
from neml2.compiler._graphs import ForwardGraph

ROOT = Path(__file__).resolve().parents[1]
SCP = ROOT / "benchmarks" / "suite" / "workloads" / "scp.i"


def _inputs(n: int) -> list[torch.Tensor]:
    """One step of 0.1 from rest: uniaxial-ish deformation rate, spread orientations."""
    g = torch.Generator().manual_seed(n)
    F64 = torch.float64
    d = torch.tensor([0.1, -0.05, -0.05, 0.0, 0.0, 0.0], dtype=F64)
    x = {
        "deformation_rate": d * (1 + 0.1 * torch.rand(n, 1, generator=g, dtype=F64)),
        "vorticity": 0.01 * torch.rand(n, 3, generator=g, dtype=F64),
        "slip_hardening~1": torch.zeros(n, dtype=F64),
        "t": torch.full((n,), 0.1, dtype=F64),
        "t~1": torch.zeros(n, dtype=F64),
        "elastic_strain~1": torch.zeros(n, 6, dtype=F64),
        "orientation~1": 0.3 * (torch.rand(n, 3, generator=g, dtype=F64) - 0.5),
    }
    return list(x.values())


def test_single_crystal_exports_and_matches_eager():
    model = neml2.load_model(SCP, "model_with_stress")
    assert list(model.input_spec)[:2] == ["deformation_rate", "vorticity"]
    graph = ForwardGraph(model, [], {})
    ep = export_graph(graph, _inputs(3), [])
    loops = [
        n
        for n in ep.graph.nodes
        if n.op == "call_function" and n.target is torch.ops.higher_order.while_loop
    ]
    assert len(loops) == 1
    with torch.no_grad():
        for n in (3, 1, 7):  # the exported batch axis is dynamic; 1 is not specialised
            xs = _inputs(n)
            want, got = graph(*xs), ep.module()(*xs)
            assert int(got[-1]) == int(want[-1]) == 0  # no failed point
            for g, w in zip(got[:-1], want[:-1], strict=True):
                scale = float(w.abs().max()) + 1e-300
                torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-10 * scale)
