"""The tangent API used by the model contract: seed / attach / tangents_of."""

from __future__ import annotations

import torch

import neml2.tensors as nt
from neml2.tensors import SR2, SSR4, Scalar

F64 = torch.float64


def j2_forward(strain, E, nu, sy):
    """A leaf forward written once: trial stress, von Mises, yield function."""
    C = SSR4.isotropic_E_nu(E, nu)
    s = C @ strain
    vm = (1.5 * s.dev().norm_sq()) ** 0.5
    return s, nt.macaulay(vm - sy)


def test_contract_v_roundtrip():
    B = 4
    strain = SR2(torch.rand(B, 6, dtype=F64) * 1e-2)
    E = Scalar(torch.full((B,), 100.0, dtype=F64))
    # v["strain"]["strain"]: identity seed (K=6) as a typed value (K, *B, 6)
    v = {
        "strain": {"strain": SR2(torch.eye(6, dtype=F64).unsqueeze(1).expand(6, B, 6))},
        "E": {"E": Scalar(torch.ones(1, B, dtype=F64))},
    }
    e = nt.attach(strain, v["strain"])
    Ev = nt.attach(E, v["E"])
    s, f = j2_forward(e, Ev, 0.3, 0.1)
    v_out = {"stress": nt.tangents_of(s), "f": nt.tangents_of(f)}
    assert set(v_out["stress"]) == {"strain", "E"}
    ds = v_out["stress"]["strain"]
    assert isinstance(ds, SR2) and ds.shape == (6, B, 6)

    def g(eps, Em):
        return j2_forward(SR2(eps), Scalar(Em), 0.3, 0.1)[1].data

    J = torch.func.jacfwd(g, argnums=(0, 1))(strain.data, E.data)
    ref_e = torch.einsum("bbi->ib", J[0])
    torch.testing.assert_close(v_out["f"]["strain"].data, ref_e)
    torch.testing.assert_close(v_out["f"]["E"].data[0], torch.diagonal(J[1]))


def test_contract_v2():
    x = SR2.fill(1.0, 2.0, 3.0, 0.4, 0.5, 0.6, dtype=F64)
    xs = nt.attach(x, {"x": torch.eye(6, dtype=F64)}, v2={})
    y = xs.dev().norm()
    h = nt.tangents2_of(y)["x"]["x"]
    assert isinstance(h, Scalar) and h.shape == (6, 6)
    ref = torch.func.hessian(lambda d: SR2(d).dev().norm().data)(x.data)
    torch.testing.assert_close(h.data, ref)


def test_attach_aligns_sub_batch_of_direction():
    x = SR2(torch.rand(3, 5, 6, dtype=F64), sub_batch_ndim=1)  # 3 points, 5 grains
    d = SR2(torch.rand(2, 3, 6, dtype=F64))  # K=2, no sub-batch: same for every grain
    xs = nt.attach(x, {"a": d})
    t = xs.tangents["a"]
    assert t.shape == (2, 3, 1, 6)
    w = xs.tangent("a")
    assert w.shape == (2, 3, 5, 6) and w.sub_batch_ndim == 1


def test_seed_identity_gives_jacobian():
    C = SSR4.isotropic_E_nu(200.0, 0.25)
    e = nt.seed(SR2.zeros(dtype=torch.float32), "e")
    s = C @ e
    torch.testing.assert_close(s.tangent("e").data.T, C.data)


def test_primal_drops_tangents():
    e = nt.seed(SR2.zeros(), "e", second_order=True)
    assert e.has_tangents and not e.primal().has_tangents
    assert e.tangent("nope") is None and e.tangent2("e", "e") is None


def test_jacobian_block_layout():
    B = 3
    e = nt.seed(SR2(torch.rand(B, 6, dtype=F64)), "e")
    C = SSR4(torch.rand(6, 6, dtype=F64))
    s = C @ e
    J = nt.jacobian_block(s, "e", (6,))
    assert isinstance(J, nt.Tensor) and J.shape == (B, 6, 6) and J.base_ndim == 2
    torch.testing.assert_close(J.data, C.data.expand(B, 6, 6))
    q = s.norm_sq()
    Jq = nt.jacobian_block(q, "e")
    assert Jq.shape == (B, 6) and Jq.base_ndim == 1
    assert nt.jacobian_block(q, "other") is None
    assert float(Scalar(2.5)) == 2.5
