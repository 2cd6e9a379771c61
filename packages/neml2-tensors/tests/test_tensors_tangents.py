"""First- and second-order forward tangents of every op against torch.autograd.

Inputs are seeded with the identity over their whole data, so the check covers every
component and every batch coupling (off-diagonal batch blocks must be zero).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensors_ops import OPS, make_input
from tensors_testing import FAST, broadcast_partner, check_tangents, region_shapes

SMOOTH = [o for o in OPS if o.smooth]


@pytest.mark.parametrize("op", SMOOTH, ids=[o.name for o in SMOOTH])
@settings(FAST, max_examples=3)
@given(data=st.data())
def test_op_tangents(op, data):
    env = data.draw(region_shapes(max_dyn=1, max_sub=1, max_size=2))
    shapes = [data.draw(broadcast_partner(env)) for _ in op.types]
    inputs = []
    for i, (t, (dyn, sub)) in enumerate(zip(op.types, shapes, strict=True)):
        rng = op.ranges[i] if op.ranges else (-1.0, 1.0)
        shift = op.shift[i] if op.shift else 0.0
        inputs.append(make_input(t, dyn, sub, torch.float64, seed_=5 * i + 1, rng=rng, shift=shift))
    check_tangents(op.f, inputs, second=op.second, rtol=1e-6, atol=1e-8)


def test_structural_zeros_stay_absent():
    from neml2.tensors import SR2, SSR4, Scalar, seed

    C = SSR4.isotropic_E_nu(100.0, 0.3)
    e = seed(SR2.fill(0.1, 0.2, 0.3), "e")
    s = Scalar(2.0)
    out = C @ e * s + C @ SR2.fill(1.0)
    assert set(out.tangents) == {"e"}
    assert out.tangents2 is None
    e2 = seed(SR2.fill(0.1, 0.2, 0.3), "e", second_order=True)
    out2 = (C @ e2) * s
    assert out2.tangents2 == {}  # linear in e: no second-order entries materialised
    q = e2.norm_sq()
    assert set(q.tangents2) == {("e", "e")}


def test_mixed_seeds_second_order_pairs():
    from neml2.tensors import SR2, Scalar, seed

    a = seed(Scalar(torch.tensor([0.3, 0.7], dtype=torch.float64)), "a", second_order=True)
    b = seed(SR2.fill(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, dtype=torch.float64), "b", second_order=True)
    y = (a * b).norm()
    assert set(y.tangents2) == {("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")}
    ab = y.tangents2[("a", "b")]
    ba = y.tangents2[("b", "a")]
    torch.testing.assert_close(ab.expand(1, 6, 2), ba.transpose(0, 1).expand(1, 6, 2))


def test_pow_by_a_constant_scalar_exponent():
    """``x ** n`` with a tangent-free Scalar ``n`` (a parameter) is torch.pow: exact at
    ``0 ** 0`` and for negative bases, with tangents ``n x^(n-1)`` and ``n (n-1) x^(n-2)``."""
    from neml2.tensors import Scalar, seed

    xs = torch.tensor([0.0, 0.5, -2.0, 1.5], dtype=torch.float64)
    ns = torch.tensor([0.0, 2.5, 3.0, -1.0], dtype=torch.float64)
    y = Scalar(xs) ** Scalar(ns)
    torch.testing.assert_close(y.data, torch.pow(xs, ns), rtol=0, atol=0)
    assert y.tangents is None
    x = seed(Scalar(xs[1:]), "x", second_order=True)
    n = ns[1:]
    y = x ** Scalar(n)
    torch.testing.assert_close(y.tangents["x"][0], n * xs[1:] ** (n - 1))
    torch.testing.assert_close(y.tangents2[("x", "x")][0, 0], n * (n - 1) * xs[1:] ** (n - 2))
    # an exponent with tangents keeps d(x^n)/dn = x^n log x
    m = seed(Scalar(torch.tensor([2.0, 0.5], dtype=torch.float64)), "n")
    b = torch.tensor([1.5, 3.0], dtype=torch.float64)
    z = Scalar(b) ** m
    torch.testing.assert_close(z.tangents["n"][0], b**m.data * torch.log(b))
