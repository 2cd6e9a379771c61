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
