"""The typed-tensor vocabulary of ``[Tensors] type = Python`` expressions.

The spellings the reference library's inputs use (``SR2.fill``, ``.dynamic_batch.expand``,
``.sub_batch.retag``, ``Type.full(*batch, fill_value=)``, ...), evaluated in the namespace
the conformance README promises: ``neml2.tensors``, ``torch``, ``math``, ``np``. Every
expression of every conformance input is evaluated through the real HIT loader by
``tests-integration/conformance`` (a case whose expression fails does not pass).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import neml2.tensors as nt


def namespace() -> dict:
    """The namespace ``[Tensors] type = Python`` expressions see (less the other tensors)."""
    ns = {name: getattr(nt, name) for name in nt.__all__}
    ns.update(torch=torch, math=math, np=np)
    return ns


@pytest.mark.parametrize(
    "expr, shape, sub",
    [
        ("SR2.fill(0.1, -0.05, -0.05, 0.0, 0.0, 0.0).dynamic_batch.expand(20)", (20, 6), 0),
        ("SR2.fill(1e-3, 0, 0, 0, 0, 0).dynamic_batch.expand(100, 1)", (100, 1, 6), 0),
        ("SR2.fill(0.09, 0.04, -0.02)", (6,), 0),
        ("Scalar([1.0, 4.0, 9.0, 16.0]).sub_batch.retag(1)", (4,), 1),
        ("linspace(Scalar(1.0).dynamic_batch, Scalar(10.0).dynamic_batch, 20)", (20,), 0),
        ("linspace(Scalar(-0.1).sub_batch, Scalar(0.2).sub_batch, 12)", (12,), 1),
        ("MRP(torch.zeros(5, 3), sub_batch_ndim=1).sub_batch.retag(1)", (5, 3), 1),
        ("Scalar(torch.full((12,), 57.5), sub_batch_ndim=1)", (12,), 1),
        ("Scalar.full(200, fill_value=0.01)", (200,), 0),
        ("SR2.full(2, 3, fill_value=1.5)", (2, 3, 6), 0),
        ("Vec.full(2.0, (4,), 1)", (4, 3), 1),
        ("MillerIndex(torch.tensor([1.0, 1.0, 0.0]))", (3,), 0),
        ("WR2(torch.zeros(100, 1, 3, dtype=torch.float64))", (100, 1, 3), 0),
    ],
)
def test_vocabulary_semantics(expr, shape, sub):
    v = eval(expr, namespace())
    assert tuple(v.shape) == shape and v.sub_batch_ndim == sub


def test_fill_values_follow_neml2():
    # 6 values are tensor components (yz, xz, xy); Mandel gets the sqrt2 factor
    v = eval("SR2.fill(1, 2, 3, 4, 5, 6)", namespace())
    np.testing.assert_allclose(
        v.data.numpy(), [1, 2, 3, 4 * 2**0.5, 5 * 2**0.5, 6 * 2**0.5], rtol=1e-6
    )
    m = eval("MillerIndex(torch.tensor([1.0, 1.0, 0.0]))", namespace())
    assert m.dtype == torch.int64


def test_full_spellings_agree():
    ours = nt.Scalar.full(0.01, (200,))
    ref = eval("Scalar.full(200, fill_value=0.01)", namespace())
    torch.testing.assert_close(ref.data, ours.data, rtol=0, atol=0)
    with pytest.raises(TypeError, match="integer batch sizes"):
        nt.Scalar.full((2, 3), fill_value=1.0)
    with pytest.raises(TypeError, match="fill_value"):
        nt.Scalar.full()
