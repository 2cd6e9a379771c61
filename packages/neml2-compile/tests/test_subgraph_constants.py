"""The while_loop-body constant rewrite (no AOT Inductor compile: cheap)."""

from __future__ import annotations

import pytest
import torch
from torch._higher_order_ops import while_loop

from neml2.compiler._subgraph_constants import inline_subgraph_constants
from neml2.tensors import FatalError

F64 = torch.float64


def _export(const: torch.Tensor):
    vals, shape = const.flatten().tolist(), tuple(const.shape)

    class M(torch.nn.Module):
        def forward(self, x):
            def cond(i, y):
                return i < 3

            def body(i, y):
                c = torch.tensor(vals, dtype=y.dtype).reshape(shape)
                return i + 1, y * c.reshape(-1)[:2]

            return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))[1]

    b = torch.export.Dim("b", min=1)
    x = torch.rand(4, 2, dtype=F64)
    return torch.export.export(M(), (x,), dynamic_shapes=({0: b},), strict=False), x


def _body_get_attrs(ep) -> list:
    return [
        n
        for name, gm in ep.graph_module.named_modules()
        if gm is not ep.graph_module and isinstance(gm, torch.fx.GraphModule)
        for n in gm.graph.nodes
        if n.op == "get_attr"
    ]


def test_constants_in_loop_bodies_become_literals():
    ep, x = _export(torch.tensor([[1.0, 2.0], [0.5, -1.0]]))
    assert _body_get_attrs(ep)  # the shape of the torch 2.13 AOTI failure
    assert inline_subgraph_constants(ep, "test") == 1
    assert not _body_get_attrs(ep)
    torch.testing.assert_close(ep.module()(x), x * torch.tensor([1.0, 8.0], dtype=F64))


def test_large_constant_is_refused():
    ep, _ = _export(torch.ones(5000))
    with pytest.raises(FatalError, match=r"test: a tensor constant of shape \(5000,\)"):
        inline_subgraph_constants(ep, "test")
