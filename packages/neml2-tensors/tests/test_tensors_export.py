"""Typed values as pytree nodes: torch.export with a dynamic batch, torch.compile with
fullgraph=True (no graph breaks), batch size 1 included."""

from __future__ import annotations

import pytest
import torch
import torch.utils._pytree as pytree

import neml2.tensors as nt
from neml2.tensors import SR2, SSR4, Scalar

F64 = torch.float64


def j2(strain: SR2, ep: SR2, E: Scalar, sy: Scalar):
    """Elastic predictor + J2 radial return (one step, linear hardening 0)."""
    C = SSR4.isotropic_E_nu(E, 0.3)
    G = E / 2.6
    s_tr = C.matmul(strain - ep)  # Dynamo cannot trace `@` on objects
    dev = s_tr.dev()
    vm = (1.5 * dev.norm_sq() + 1e-30) ** 0.5
    f = vm - sy
    dg = nt.macaulay(f) / (3.0 * G)
    n = 1.5 * dev / vm
    ep_new = ep + dg * n
    return nt.matmul(C, strain - ep_new), ep_new


def _inputs(b, tangents=False):
    g = torch.Generator().manual_seed(b)
    strain = SR2(torch.rand(b, 6, generator=g, dtype=F64) * 0.02)
    ep = SR2(torch.rand(b, 6, generator=g, dtype=F64) * 1e-3)
    E = Scalar(torch.full((b,), 200.0, dtype=F64))
    sy = Scalar(torch.full((b,), 1.0, dtype=F64))
    if tangents:
        strain = nt.seed(strain, "strain")
    return strain, ep, E, sy


def test_pytree_roundtrip_keeps_metadata_and_tangents():
    x = nt.seed(SR2(torch.rand(3, 2, 6), sub_batch_ndim=1), "e", second_order=True)
    x = x * x.norm()
    leaves, spec = pytree.tree_flatten({"x": x})
    assert all(isinstance(v, torch.Tensor) for v in leaves)
    assert len(leaves) == 1 + len(x.tangents) + len(x.tangents2)
    y = pytree.tree_unflatten(leaves, spec)["x"]
    assert type(y) is SR2 and y.sub_batch_ndim == 1
    assert set(y.tangents) == {"e"} and set(y.tangents2) == {("e", "e")}
    t = nt.Tensor(torch.zeros(2, 3, 4), 2)
    (t2,) = pytree.tree_unflatten(*pytree.tree_flatten((t,)))
    assert t2.base_ndim == 2


class J2(torch.nn.Module):
    def forward(self, strain, ep, E, sy):
        return j2(strain, ep, E, sy)


@pytest.mark.slow
@pytest.mark.parametrize("tangents", [False, True], ids=["plain", "with_tangents"])
def test_export_dynamic_batch(tangents):
    args = _inputs(8, tangents)
    batch = torch.export.Dim("batch", min=1, max=1_000_000)
    shapes = torch.export.ShapesCollection()
    for x in args:
        shapes[x.data] = {0: batch}  # identity seeds are (K, 1, 6): static
    ep = torch.export.export(J2(), args, dynamic_shapes=shapes)
    for b in (1, 5, 33):
        a = _inputs(b, tangents)
        got = ep.module()(*a)
        ref = j2(*a)
        for g, r in zip(got, ref, strict=True):
            assert type(g) is type(r)
            torch.testing.assert_close(g.data, r.data)
            if tangents:
                assert set(g.tangents) == set(r.tangents) == {"strain"}
                torch.testing.assert_close(g.tangents["strain"], r.tangents["strain"])


@pytest.mark.slow
def test_compile_fullgraph_dynamic_batch_with_tangents():
    torch._dynamo.reset()
    f = torch.compile(j2, fullgraph=True, dynamic=True)
    for b in (1, 4, 17):
        a = _inputs(b, tangents=True)
        for x in a:
            torch._dynamo.mark_dynamic(x.data, 0)
        got = f(*a)
        ref = j2(*a)
        for g, r in zip(got, ref, strict=True):
            torch.testing.assert_close(g.data, r.data)
            torch.testing.assert_close(g.tangents["strain"], r.tangents["strain"])


@pytest.mark.slow
def test_compile_sub_batch_second_order():
    torch._dynamo.reset()

    def f(a, b):
        return (b * a + b.dev() * b.norm()).sub_batch.sum().norm()

    cf = torch.compile(f, fullgraph=True, dynamic=True, backend="aot_eager")
    a = nt.seed(Scalar(torch.rand(3, 4, dtype=F64), 1), "a", second_order=True)
    b = SR2(torch.rand(3, 6, dtype=F64))
    got, ref = cf(a, b), f(a, b)
    torch.testing.assert_close(got.data, ref.data)
    torch.testing.assert_close(got.tangents2[("a", "a")], ref.tangents2[("a", "a")])


@pytest.mark.slow
def test_export_handles_matmul_operator():
    class M(torch.nn.Module):
        def forward(self, e):
            return SSR4.isotropic_E_nu(100.0, 0.3, dtype=F64) @ e

    e = SR2(torch.rand(4, 6, dtype=F64))
    shapes = torch.export.ShapesCollection()
    shapes[e.data] = {0: torch.export.Dim("b", min=1)}
    ep = torch.export.export(M(), (e,), dynamic_shapes=shapes)
    x = SR2(torch.rand(1, 6, dtype=F64))
    torch.testing.assert_close(ep.module()(x).data, M()(x).data)


class SmallProducts(torch.nn.Module):
    """R2 @ R2, R2 @ Vec, SSR4 @ SR2, SR2 @ SSR4, SSR4 @ SSR4, with tangents."""

    def forward(self, a: nt.R2, v: nt.Vec, C: SSR4, e: SR2):
        a = nt.seed(a, "a")
        e = nt.seed(e, "e")
        out = (nt.matmul(a, a), nt.matmul(a, v), nt.matmul(C, e), nt.matmul(e, C))
        out = (*out, nt.matmul(C, C))
        return [(x.data, *(x.tangents or {}).values()) for x in out]


def test_export_contracts_small_matrices_without_matmul():
    """Traced, the small products are broadcast products summed (Inductor fuses those
    into the kernels around them; a bmm stays an external call per product): the
    exported graph has no bmm / matmul / einsum, and its values are the eager ones."""
    g = torch.Generator().manual_seed(0)
    args = (
        nt.R2(torch.rand(4, 3, 3, generator=g, dtype=F64)),
        nt.Vec(torch.rand(4, 3, generator=g, dtype=F64)),
        SSR4(torch.rand(4, 6, 6, generator=g, dtype=F64)),
        SR2(torch.rand(4, 6, generator=g, dtype=F64)),
    )
    ep = torch.export.export(SmallProducts(), args)
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert not {t for t in targets if any(k in t for k in ("bmm", "matmul", "einsum", ".mm."))}
    got, want = ep.module()(*args), SmallProducts()(*args)
    for a, b in zip(pytree.tree_leaves(got), pytree.tree_leaves(want), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-14, atol=1e-14)
