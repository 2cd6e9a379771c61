"""The while_loop-body constant rewrite (no AOT Inductor compile: cheap)."""

from __future__ import annotations

import pytest
import torch
from torch._higher_order_ops import while_loop

from neml2.compiler._subgraph_constants import inline_loop_literals, inline_subgraph_constants
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


def _export_literal_loop():
    """An outer literal exponent used outside the loop, in its body and in a loop
    nested in that body (each reaches the loops as an operand)."""

    class M(torch.nn.Module):
        def forward(self, x):
            e = torch.scalar_tensor(2.0, dtype=x.dtype)
            w = torch.scalar_tensor(0.5, dtype=x.dtype)

            def inner(j, z):
                return j + 1, torch.pow(z, e) * w

            def body(i, y):
                _, z = while_loop(
                    lambda j, z: j < 2, inner, (torch.zeros((), dtype=torch.int64), y)
                )
                return i + 1, z + torch.pow(y, e)

            y = while_loop(lambda i, y: i < 2, body, (torch.zeros((), dtype=torch.int64), x))[1]
            return y + torch.pow(x, e)

    b = torch.export.Dim("b", min=1)
    x = torch.rand(4, 2, dtype=F64) + 0.5
    return M(), torch.export.export(M(), (x,), dynamic_shapes=({0: b},), strict=False), x


def _pow_nodes(ep) -> list:
    return [
        n
        for _, gm in ep.graph_module.named_modules()
        if isinstance(gm, torch.fx.GraphModule)
        for n in gm.graph.nodes
        if n.op == "call_function"
        and n.target in (torch.ops.aten.pow.Tensor_Tensor, torch.ops.aten.pow.Tensor_Scalar)
    ]


def test_loop_literals_reach_the_bodies_and_powers_take_numbers():
    model, ep, x = _export_literal_loop()
    powers = _pow_nodes(ep)
    assert len(powers) == 3
    assert all(n.target is torch.ops.aten.pow.Tensor_Tensor for n in powers)
    # 2 operands (e, w) of the outer loop in its cond and body, 2 of the nested loop in
    # its cond and body (cond reads neither: skipped), plus the 3 powers
    assert inline_loop_literals(ep) == 3 + 2 + 2
    assert all(
        n.target is torch.ops.aten.pow.Tensor_Scalar and n.args[1] == 2.0 for n in _pow_nodes(ep)
    )
    torch.testing.assert_close(ep.module()(x), model(x), rtol=1e-14, atol=0.0)


def test_loop_literals_leave_a_variable_exponent():
    class M(torch.nn.Module):
        def forward(self, x, e):
            def body(i, y):
                return i + 1, torch.pow(y, e)

            return while_loop(lambda i, y: i < 2, body, (torch.zeros((), dtype=torch.int64), x))[1]

    x, e = torch.rand(4, 2, dtype=F64) + 0.5, torch.scalar_tensor(2.0, dtype=F64)
    ep = torch.export.export(M(), (x, e), strict=False)
    assert inline_loop_literals(ep) == 0
    assert all(n.target is torch.ops.aten.pow.Tensor_Tensor for n in _pow_nodes(ep))
    torch.testing.assert_close(ep.module()(x, 3 * e), M()(x, 3 * e), rtol=1e-14, atol=0.0)
