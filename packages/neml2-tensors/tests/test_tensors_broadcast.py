"""Sub-batch-first broadcasting and the error messages of the algebra."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import neml2.tensors as nt
from neml2.tensors import MRP, R2, SR2, SSR4, WR2, Scalar, ShapeError, Tensor, Vec

F64 = torch.float64


def test_sub_batch_aligns_before_dynamic():
    # per-grain (20 points x 5 grains) with a global (20 points) value
    a = SR2(torch.rand(20, 5, 6, dtype=F64), sub_batch_ndim=1)
    b = SR2(torch.rand(20, 6, dtype=F64))
    c = a + b
    assert c.shape == (20, 5, 6) and c.sub_batch_ndim == 1
    np.testing.assert_allclose(c.data.numpy(), a.data.numpy() + b.data.numpy()[:, None, :])


def test_sub_only_with_dynamic_only():
    a = Scalar(torch.arange(5.0, dtype=F64), sub_batch_ndim=1)  # (; 5)
    b = Scalar(torch.arange(20.0, dtype=F64))  # (20;)
    c = a * b
    assert c.shape == (20, 5) and c.sub_batch_ndim == 1 and c.dynamic_shape == (20,)
    np.testing.assert_allclose(c.data.numpy(), np.outer(np.arange(20.0), np.arange(5.0)))


def test_plain_torch_would_misalign():
    # (3; 3) sub=1 with (3;) sub=0: torch would pair the 3s wrongly
    a = Scalar(torch.tensor([[1.0, 2.0, 3.0]] * 3, dtype=F64), sub_batch_ndim=1)
    b = Scalar(torch.tensor([10.0, 20.0, 30.0], dtype=F64))
    c = a + b
    np.testing.assert_allclose(c.data.numpy(), a.data.numpy() + b.data.numpy()[:, None])


def test_tangent_seed_axis_stays_leading():
    # K (=6) equals the batch size: right-aligned broadcasting would silently mix them
    x = nt.seed(SR2.fill(0.1, 0.2, 0.3, dtype=F64), "x")  # unbatched, K = 6
    s = Scalar(torch.arange(1.0, 7.0, dtype=F64))  # batch 6
    y = s * x
    t = y.tangents["x"].expand(6, 6, 6)
    for b in range(6):
        np.testing.assert_allclose(t[:, b].numpy(), (b + 1.0) * np.eye(6))


def test_sub_batch_shape_mismatch_names_region():
    a = Scalar(torch.zeros(2, 3), sub_batch_ndim=1)
    b = Scalar(torch.zeros(2, 4), sub_batch_ndim=1)
    with pytest.raises(ShapeError, match=r"sub-batch shapes do not broadcast.*\(3,\).*\(4,\)"):
        a + b


def test_dynamic_shape_mismatch_names_region():
    a = SR2(torch.zeros(3, 6))
    b = SR2(torch.zeros(4, 6))
    with pytest.raises(ShapeError, match=r"dynamic batch shapes do not broadcast.*SR2.*SR2"):
        a - b
    with pytest.raises(ShapeError, match="dynamic batch"):
        SSR4(torch.zeros(3, 6, 6)) @ b


def test_shape_error_is_value_error():
    assert issubclass(ShapeError, ValueError)
    assert not issubclass(ShapeError, nt.FatalError)


@pytest.mark.parametrize(
    "f, names",
    [
        (lambda: SR2.zeros() + Vec.zeros(), ("SR2", "Vec")),
        (lambda: SR2.zeros() * SR2.zeros(), ("SR2", "SR2")),
        (lambda: Vec.zeros() @ SR2.zeros(), ("Vec", "SR2")),
        (lambda: SR2.zeros() / SR2.zeros(), ("SR2", "SR2")),
        (lambda: SR2.zeros() ** 2, ("SR2", "int")),
        (lambda: WR2.zeros() + MRP.zeros(), ("WR2", "MRP")),
        (lambda: R2.zeros() * Vec.zeros(), ("R2", "Vec")),
        (lambda: Tensor(torch.zeros(2), 1) + Tensor(torch.zeros(3), 1), ("Tensor", "Tensor")),
    ],
)
def test_type_errors_name_both_types(f, names):
    with pytest.raises(TypeError) as e:
        f()
    for n in names:
        assert n in str(e.value)


def test_elementwise_functions_reject_tensor_types():
    with pytest.raises(TypeError, match="SR2"):
        nt.sqrt(SR2.zeros())
    with pytest.raises(TypeError, match="SR2"):
        1.0 / SR2.zeros()


def test_construction_errors():
    with pytest.raises(ShapeError, match=r"SR2 needs data of shape \(\*batch, 6\).*\(5,\)"):
        SR2(torch.zeros(5))
    with pytest.raises(ShapeError, match=r"SSR4.*\(6, 6\)"):
        SSR4(torch.zeros(6))
    with pytest.raises(ShapeError, match="sub_batch_ndim=2"):
        Vec(torch.zeros(4, 3), sub_batch_ndim=2)
    with pytest.raises(ShapeError, match="cannot expand"):
        SR2(torch.zeros(3, 6)).dynamic_batch.expand(4)


def test_dtype_promotion():
    a = SSR4.identity_sym(dtype=torch.float32)
    e = SR2.fill(1.0, 2.0, 3.0, dtype=F64)
    assert (a @ e).dtype == F64


def test_where_with_raw_bool_condition_is_right_aligned():
    a = Scalar(torch.arange(6.0, dtype=F64).reshape(2, 3), sub_batch_ndim=1)
    cond = a.data > 2.0  # (2, 3): the trailing axis is a's sub-batch
    w = nt.where(cond, a, 0.0)
    assert w.shape == (2, 3) and w.sub_batch_ndim == 1
    np.testing.assert_allclose(w.data.numpy(), np.where(a.data.numpy() > 2, a.data.numpy(), 0))


# ---------------------------------------------------------------- eager fast lane
def _operands():
    """Pairs that need no alignment (same batch shape, sub-batch rank and dtype), with
    and without tangents: per-point and shared (batch-broadcast) seeds, second order."""
    g = torch.Generator().manual_seed(11)

    def r(*s):
        return torch.randn(*s, generator=g, dtype=F64)

    a = nt.seed(SR2(r(4, 3, 6), sub_batch_ndim=1), "a", second_order=True)
    shared = nt.attach(SR2(r(4, 3, 6), sub_batch_ndim=1), {"s": r(6, 1, 1, 6)})
    plain = SR2(r(4, 3, 6), sub_batch_ndim=1)
    k = nt.seed(Scalar(r(4, 3), sub_batch_ndim=1), "k")
    return {
        "plain-plain": (plain, SR2(r(4, 3, 6), sub_batch_ndim=1)),
        "seeded-plain": (a, plain),
        "plain-seeded": (plain, a),
        "seeded-shared": (a, shared),
        "scalar-scale": (a, k),
    }


def _same(x, y):
    assert type(x) is type(y) and x.sub_batch_ndim == y.sub_batch_ndim
    assert x.data.shape == y.data.shape and torch.equal(x.data, y.data)
    for tx, ty in ((x.tangents, y.tangents), (x.tangents2, y.tangents2)):
        assert (tx is None) == (ty is None)
        assert set(tx or {}) == set(ty or {})
        for key in tx or {}:
            assert tx[key].shape == ty[key].shape and torch.equal(tx[key], ty[key]), key


@pytest.mark.parametrize("case", list(_operands()))
def test_lined_up_operands_skip_alignment_with_the_same_results(case, monkeypatch):
    """Operands with nothing to align go straight to the arithmetic (no general pass of
    ``align``: 8 instead of 16 us for ``a - b`` at 1e3 points); the values, tangents and
    second-order tangents are bit for bit those of the general pass."""
    from neml2.tensors import _base, _broadcast

    x, y = _operands()[case]
    ops = (
        [lambda p, q: p * q, lambda p, q: q * p, lambda p, q: p / q]
        if case == "scalar-scale"
        else [lambda p, q: p + q, lambda p, q: p - q, lambda p, q: q - p, lambda p, q: p.inner(q)]
    )

    def no_general_pass(*_):
        raise AssertionError("lined-up operands went through the general alignment")

    with monkeypatch.context() as m:
        m.setattr(_broadcast, "_quick_check", no_general_pass)
        m.setattr(_broadcast, "check_broadcastable", no_general_pass)
        fast = [f(x, y) for f in ops]
    with monkeypatch.context() as m:
        m.setattr(_broadcast, "_lined_up", lambda a, b: False)
        m.setattr(_base, "_lined_up", lambda a, b: False)
        slow = [f(x, y) for f in ops]
    assert len(fast) == len(slow) == len(ops)
    for got, want in zip(fast, slow, strict=True):
        _same(got, want)


def test_the_fast_lane_leaves_alignment_where_it_is_needed(monkeypatch):
    """Different sub-batch ranks, batch shapes or dtypes, a dynamic base, or a trace
    (symbolic sizes: comparing them would add guards) take the general pass, with its
    promotion and its errors."""
    from neml2.tensors import _broadcast

    lined = _broadcast._lined_up
    a = SR2(torch.rand(4, 3, 6, dtype=F64), sub_batch_ndim=1)
    assert lined(a, SR2(torch.rand(4, 3, 6, dtype=F64), sub_batch_ndim=1))
    assert not lined(a, SR2(torch.rand(4, 3, 6, dtype=F64)))  # sub-batch rank
    assert not lined(a, SR2(torch.rand(4, 1, 6, dtype=F64), sub_batch_ndim=1))  # batch
    f32 = SR2(torch.rand(4, 3, 6, dtype=torch.float32), sub_batch_ndim=1)
    assert not lined(a, f32)
    assert (a + f32).dtype == F64  # promoted by the general pass
    t1, t2 = Tensor(torch.rand(4, 6, dtype=F64), base_ndim=1), Tensor(torch.rand(4, 6, dtype=F64))
    with pytest.raises(TypeError, match=r"\+"):
        t1 + t2  # same data shape, different base: still refused
    with pytest.raises(ShapeError, match="sub-batch"):
        a + SR2(torch.rand(4, 2, 6, dtype=F64), sub_batch_ndim=1)
    monkeypatch.setattr(_broadcast, "_tracing", lambda: True)
    assert not lined(a, SR2(torch.rand(4, 3, 6, dtype=F64), sub_batch_ndim=1))
