"""The boundary checks every route shares: broadcast_batch_shapes, checked_parameter, and
a typed value that remembers the integer dtype its constructor converted."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neml2.tensors import (
    SR2,
    SSR4,
    FatalError,
    MillerIndex,
    Scalar,
    broadcast_batch_shapes,
    checked_parameter,
)

F64 = torch.float64
CPU = torch.device("cpu")


def test_broadcast_batch_shapes_names_the_pair():
    shapes = {"input 'strain'": (2,), "input 'T'": (1,), "input 'time'": (3,)}
    message = r"^m: input 'strain' has batch shape \(2,\) and input 'time' \(3,\): they do not"
    with pytest.raises(FatalError, match=message):
        broadcast_batch_shapes(shapes, "m")
    assert broadcast_batch_shapes({"a": (4, 1), "b": (5,), "c": ()}) == (4, 5)
    assert broadcast_batch_shapes({}) == ()
    # the pair that disagrees, not the first two: (2, 1) and (1, 3) broadcast
    shapes = {"a": (2, 1), "b": (1, 3), "c": (4, 3)}
    with pytest.raises(FatalError, match=r"^a has batch shape \(2, 1\) and c \(4, 3\)"):
        broadcast_batch_shapes(shapes)


def _check(value, **kw):
    kw = {"dtype": F64, "device": CPU, "typ": Scalar, **kw}
    return checked_parameter("E", value, **kw)


def test_checked_parameter_converts():
    assert _check(2).dtype == F64 and float(_check(2)) == 2.0
    assert _check(0.1).item() == 0.1  # a Python float keeps its float64 digits
    assert _check(torch.tensor([1.0, 2.0], dtype=torch.float32)).dtype == F64
    assert _check(np.array([1.0, 2.0])).shape == (2,)
    t = torch.ones(3, dtype=F64)
    assert _check(t) is t  # already right: the tensor itself
    assert _check(Scalar(t)) is t
    x = SSR4(torch.zeros(2, 6, 6, dtype=F64))
    assert _check(x, typ=SSR4).shape == (2, 6, 6)
    assert _check([[1, 0, 0]], typ=MillerIndex, dtype=torch.int64).dtype == torch.int64


@pytest.mark.parametrize(
    ("value", "kw", "message"),
    [
        (float("nan"), {}, r"^m: parameter 'E' has the non-finite value nan: a parameter must"),
        (
            torch.tensor([[1.0, 2.0], [float("inf"), float("nan")]], dtype=F64),
            {},
            r"value inf at index \(1, 0\) \(2 of 4 values are not finite\)",
        ),
        (np.array([1, 2]), {}, r"is torch\.float64: the value has dtype torch\.int64, which"),
        (True, {}, r"the value has dtype torch\.bool, which is not floating-point"),
        (1 + 2j, {}, r"the value has dtype torch\.complex64"),
        (None, {}, r"^m: parameter 'E': a NoneType is not a number or tensor$"),
        (object(), {}, r"^m: parameter 'E': a object that is not a number"),
        (SR2(torch.zeros(6)), {}, r"is a Scalar \(base shape \(\)\) but the value is a SR2"),
        (torch.zeros(3, 3), {"typ": SR2}, r"is a SR2: the value has shape \(3, 3\) but must be"),
        (
            torch.zeros(2, 6, 6),
            {"typ": SSR4, "sub_batch_shape": (3,)},
            r"shape \(2, 6, 6\) but must be \(\*batch, 3, 6, 6\) \(sub-batch \(3,\), base",
        ),
        (torch.zeros(2), {"typ": None, "shape": ()}, r"has shape \(2,\) but was compiled with"),
        (
            torch.tensor([1e39], dtype=F64),
            {"dtype": torch.float32},
            r"value inf at index \(0,\) \(the given 1e\+39 overflows torch\.float32\)",
        ),
        (1.5, {"typ": MillerIndex, "dtype": torch.int64}, r"is torch\.int64: the value has dtype"),
        (torch.empty(1, device="meta"), {}, r"the value on meta cannot be moved to cpu"),
    ],
)
def test_checked_parameter_refuses(value, kw, message):
    with pytest.raises(FatalError, match=message) as e:
        _check(value, label="m", **kw)
    assert "\n" not in str(e.value)


def test_converted_from():
    assert SR2(torch.zeros(6, dtype=torch.int64)).converted_from == torch.int64
    assert SR2([1, 2, 3, 4, 5, 6]).converted_from == torch.int64
    assert SR2(torch.zeros(6)).converted_from is None
    assert (SR2(torch.zeros(6, dtype=torch.int32)) * 2.0).converted_from is None
    assert MillerIndex([1, 1, 0]).converted_from is None


def test_broadcast_batch_shapes_keeps_a_traced_batch_dynamic():
    """Under torch.export the sizes stay symbolic: an int() of them would specialize the
    dynamic batch to the example's (the implicit models' export failed with 'Constraints
    violated (batch)')."""

    class Sum(torch.nn.Module):
        def forward(self, a, b):
            n = broadcast_batch_shapes({"input 'a'": a.shape[:-1], "input 'b'": b.shape[:-1]})
            return a.expand(*n, 3) + b.expand(*n, 3)

    batch = torch.export.Dim("batch")
    x = torch.ones(4, 3)
    program = torch.export.export(Sum(), (x, x), dynamic_shapes=({0: batch}, {0: batch}))
    assert program.module()(torch.ones(7, 3), torch.ones(7, 3)).shape == (7, 3)
