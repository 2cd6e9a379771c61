"""Region views (``batch``, ``dynamic_batch``, ``sub_batch``, ``base``) and factories:
values against numpy index formulas, tangents against torch.func."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from tensors_ops import make_input
from tensors_testing import FAST, check_tangents, region_shapes

import neml2.tensors as nt
from neml2.tensors import SR2, Scalar, ShapeError, Tensor, Vec

F64 = torch.float64


def sr2(dyn, sub, seed_=0):
    return make_input(SR2, dyn, sub, F64, seed_)


def test_region_shapes():
    x = sr2((4, 2), (3,))
    assert x.batch.shape == (4, 2, 3)
    assert x.dynamic_batch.shape == (4, 2)
    assert x.sub_batch.shape == (3,)
    assert x.base.shape == (6,)
    assert (x.batch.ndim, x.dynamic_batch.ndim, x.sub_batch.ndim, x.base.ndim) == (3, 2, 1, 1)
    assert x.sub_batch.size(0) == 3


def test_dynamic_expand():
    x = sr2((), (3,))
    y = x.dynamic_batch.expand(5, 2)
    assert y.shape == (5, 2, 3, 6) and y.sub_batch_ndim == 1
    np.testing.assert_array_equal(y.data.numpy(), np.broadcast_to(x.data.numpy(), (5, 2, 3, 6)))


def test_sub_batch_expand_and_unsqueeze():
    x = sr2((2,), ())
    y = x.sub_batch.expand(4)
    assert y.shape == (2, 4, 6) and y.sub_batch_ndim == 1
    z = x.sub_batch.unsqueeze(0)
    assert z.shape == (2, 1, 6) and z.sub_batch_ndim == 1
    w = x.batch.unsqueeze(0)
    assert w.shape == (1, 2, 6) and w.sub_batch_ndim == 0
    assert w.dynamic_batch.squeeze(0).shape == (2, 6)


def test_retag():
    s = Scalar([1.0, 4.0, 9.0, 16.0]).sub_batch.retag(1)
    assert s.sub_batch_ndim == 1 and s.dynamic_ndim == 0
    x = sr2((2, 3), ())
    assert x.dynamic_batch.retag(1).sub_batch_ndim == 1
    assert x.sub_batch.retag(2).dynamic_ndim == 0
    with pytest.raises(ShapeError, match="sub-batch region"):
        x.sub_batch.retag(3)
    with pytest.raises(ShapeError, match="fixed"):
        x.base.retag(2)
    t = Tensor(torch.zeros(2, 3, 4), base_ndim=1)
    assert t.base.retag(2).base_shape == (3, 4)
    assert t.batch.retag(0).base_shape == (2, 3, 4)


def test_reductions_and_indexing():
    x = sr2((2, 3), (4,))
    a = x.data.numpy()
    np.testing.assert_allclose(x.sub_batch.sum().data.numpy(), a.sum(2))
    assert x.sub_batch.sum().sub_batch_ndim == 0
    np.testing.assert_allclose(x.dynamic_batch.mean(1).data.numpy(), a.mean(1))
    np.testing.assert_allclose(x.batch.sum((0, 2)).data.numpy(), a.sum((0, 2)))
    assert x.batch.sum((0, 2)).sub_batch_ndim == 0
    np.testing.assert_allclose(x.dynamic_batch[1].data.numpy(), a[1])
    np.testing.assert_allclose(x.sub_batch[1:3].data.numpy(), a[:, :, 1:3])
    assert x.sub_batch[0].sub_batch_ndim == 0
    np.testing.assert_allclose(x.dynamic_batch.reshape(6).data.numpy(), a.reshape(6, 4, 6))
    t = Tensor(torch.arange(24.0).reshape(2, 3, 4), base_ndim=2)
    np.testing.assert_allclose(t.base.sum(1).data.numpy(), np.arange(24.0).reshape(2, 3, 4).sum(2))
    with pytest.raises(ShapeError):
        x.base.sum()


def test_movedim():
    x = sr2((2,), (3, 4))
    a = x.data.numpy()
    y = x.sub_batch.movedim(0, -1)
    assert y.shape == (2, 4, 3, 6) and y.sub_batch_ndim == 2
    np.testing.assert_array_equal(y.data.numpy(), np.moveaxis(a, 1, 2))
    assert x.sub_batch.movedim(1, -1) is x
    with pytest.raises(ShapeError, match="out of range"):
        x.sub_batch.movedim(2, 0)


REGION_OPS = {
    "dynamic_expand": lambda x: x.dynamic_batch.expand(3, 2),
    "sub_expand": lambda x: x.sub_batch.expand(2, 2),
    "batch_unsqueeze": lambda x: x.batch.unsqueeze(1) * x.batch.unsqueeze(0).norm(),
    "sub_sum": lambda x: x.sub_batch.sum(),
    "dyn_mean_sq": lambda x: x.dynamic_batch.mean() * x.dynamic_batch.sum().tr(),
    "batch_sum_norm": lambda x: x.batch.sum(0).norm(),
    "dyn_index": lambda x: x.dynamic_batch[1] + x.dynamic_batch[0].norm_sq() * x.dynamic_batch[1],
    "sub_reshape": lambda x: x.sub_batch.reshape(2, 1).dev(),
    "retag": lambda x: x.sub_batch.retag(0).det(),
    "sub_movedim": lambda x: x.sub_batch.reshape(2, 1).sub_batch.movedim(0, 1) * x.tr(),
    "stack": lambda x: nt.stack([x, x.dev() * x.tr()], 1),
    "cat": lambda x: nt.cat([x, x.vol() * x.norm()], 0),
    "linspace_dyn": lambda x: nt.linspace(x.dynamic_batch, (x * x.tr()).dynamic_batch, 3),
    "linspace_sub": lambda x: nt.linspace(x.sub_batch, (x * x.tr()).sub_batch, 3),
}


@pytest.mark.parametrize("name", list(REGION_OPS))
def test_region_op_tangents(name):
    x = make_input(SR2, (2,), (2,), F64, 3)
    check_tangents(REGION_OPS[name], [x], second=True, rtol=1e-6, atol=1e-8)


def test_fill_and_logspace_tangents():
    a = make_input(Scalar, (2,), (), F64, 1)
    b = make_input(Scalar, (), (2,), F64, 2)
    check_tangents(lambda a, b: SR2.fill(a, b, a * b, 1.0, b, a), [a, b], rtol=1e-6, atol=1e-8)
    check_tangents(lambda a, b: Vec.fill(a, b, 1.0).norm(), [a, b], rtol=1e-6, atol=1e-8)
    check_tangents(lambda a, b: nt.logspace(a, b, 4), [a, b], rtol=1e-6, atol=1e-8)


def test_linspace_stack_cat_values():
    a = Scalar(torch.tensor([0.0, 1.0], dtype=F64))
    b = Scalar(torch.tensor([2.0, 5.0], dtype=F64))
    y = nt.linspace(a, b, 3)
    np.testing.assert_allclose(y.data.numpy(), np.linspace([0.0, 1.0], [2.0, 5.0], 3))
    z = nt.linspace(a.sub_batch, b.sub_batch, 3)
    assert z.shape == (2, 3) and z.sub_batch_ndim == 1
    np.testing.assert_allclose(z.data.numpy(), np.linspace([0.0, 1.0], [2.0, 5.0], 3).T)
    np.testing.assert_allclose(
        nt.logspace(a, b, 3).data.numpy(), np.logspace([0.0, 1.0], [2.0, 5.0], 3)
    )
    s = nt.stack([a, b], 1)
    np.testing.assert_allclose(s.data.numpy(), np.stack([a.data.numpy(), b.data.numpy()], 1))
    c = nt.cat([a, b.dynamic_batch[0:1]])
    np.testing.assert_allclose(c.data.numpy(), [0.0, 1.0, 2.0])
    with pytest.raises(TypeError):
        nt.stack([a, SR2.zeros(2)])


def test_factories():
    z = SR2.zeros((3, 2), 1, dtype=F64)
    assert z.shape == (3, 2, 6) and z.sub_batch_ndim == 1 and z.dtype == F64
    assert Scalar.ones(4).shape == (4,)
    assert Vec.full(2.0, (2,)).data.sum().item() == 12.0
    assert SR2.zeros_like(Scalar.zeros((5,), 1)).shape == (5, 6)
    np.testing.assert_allclose(SR2.identity().data.numpy(), [1, 1, 1, 0, 0, 0])
    np.testing.assert_allclose(nt.R2.identity().data.numpy(), np.eye(3))
    I4 = nt.SSR4.identity_sym(dtype=F64)
    e = sr2((2,), ())
    np.testing.assert_allclose((I4 @ e).data.numpy(), e.data.numpy())
    np.testing.assert_allclose((nt.SSR4.identity_vol() @ e).data, e.vol().data.float(), atol=1e-6)
    np.testing.assert_allclose(
        (nt.SSR4.identity_dev(dtype=F64) @ e).data.numpy(), e.dev().data.numpy()
    )
    assert nt.Quaternion.identity().to_R2().data.allclose(torch.eye(3))
    assert nt.MRP.identity().to_R2().data.allclose(torch.eye(3))
    m = nt.MillerIndex(torch.tensor([1.0, 1.0, 0.0]))
    assert m.dtype == torch.int64
    np.testing.assert_allclose(m.normalized(F64).data.numpy(), np.array([1, 1, 0]) / np.sqrt(2))
    t = Tensor.zeros((2,), (3, 4))
    assert t.base_shape == (3, 4) and t.batch_shape == (2,)
    assert (Tensor.identity(3) @ Tensor(torch.ones(3), 1)).data.tolist() == [1.0, 1.0, 1.0]


@FAST
@given(data=st.data())
def test_region_ops_random_shapes(data):
    dyn, sub = data.draw(region_shapes(max_dyn=2, max_sub=2))
    x = make_input(SR2, dyn, sub, F64, 7)
    a = x.data.numpy()
    d, s = len(dyn), len(sub)
    # expand the dynamic region by a new leading axis
    y = x.dynamic_batch.expand(2, *dyn)
    assert y.sub_batch_ndim == s
    np.testing.assert_array_equal(y.data.numpy(), np.broadcast_to(a, (2, *a.shape)))
    # unsqueeze at the start of the sub-batch region
    z = x.sub_batch.unsqueeze(0)
    assert z.sub_batch_ndim == s + 1
    np.testing.assert_array_equal(z.data.numpy(), np.expand_dims(a, d))
    # sums over each region
    np.testing.assert_allclose(x.sub_batch.sum().data.numpy(), a.sum(tuple(range(d, d + s))))
    np.testing.assert_allclose(x.dynamic_batch.sum().data.numpy(), a.sum(tuple(range(d))))
    np.testing.assert_allclose(x.batch.mean().data.numpy(), a.mean(tuple(range(d + s))))
    # retag moves the boundary, not the data
    r = x.sub_batch.retag(d + s)
    assert r.dynamic_ndim == 0 and r.data is x.data
