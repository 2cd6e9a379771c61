"""Every op of the op table against its independent numpy reference.

Random dynamic and sub-batch shapes (hypothesis), each operand broadcast region by region
against the others (sub-batch regions aligned first), float32 and float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from tensors_ops import OPS, make_input
from tensors_testing import (
    DTYPES,
    FAST,
    TOL,
    aligned_np,
    broadcast_partner,
    np_broadcast,
    region_shapes,
)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("op", OPS, ids=[o.name for o in OPS])
@FAST
@given(data=st.data())
def test_op_value(op, dtype, data):
    env = data.draw(region_shapes())
    shapes = [data.draw(broadcast_partner(env)) for _ in op.types]
    inputs = []
    for i, (t, (dyn, sub)) in enumerate(zip(op.types, shapes, strict=True)):
        rng = op.ranges[i] if op.ranges else (-1.0, 1.0)
        shift = op.shift[i] if op.shift else 0.0
        inputs.append(make_input(t, dyn, sub, dtype, seed_=17 * i + 3, rng=rng, shift=shift))
    out = op.f(*inputs)

    S = max(x.sub_batch_ndim for x in inputs)
    arrs = [aligned_np(x.data, x.sub_batch_ndim, S, x.base_ndim) for x in inputs]
    arrs = np_broadcast(*[(a, x.base_ndim) for a, x in zip(arrs, inputs, strict=True)])
    ref = np.asarray(op.ref(*[a.astype(np.float64) for a in arrs]))

    assert out.sub_batch_ndim == S
    assert tuple(out.data.shape) == ref.shape, (tuple(out.data.shape), ref.shape)
    assert out.dtype == dtype
    tol = TOL[dtype]
    if op.name in ("sr2_inv", "r2_inv", "ssr4_inv", "sr2_det", "r2_det", "ssr4_rotate") and (
        dtype is torch.float32
    ):
        tol = dict(rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(out.data.double().numpy(), ref, **tol)
