"""neml2::small_mm, the small-matrix product libneml2 registers (cpp/ops): the values of
torch.matmul bit for bit (same summation order) for the typed tensors' 3 x 3 and 3 x 1
products and other small sizes, broadcast and transposed operands, batch sizes 0 and 1,
float32, the fallbacks (larger matrices, another dtype), shape and dtype errors, threads."""

from __future__ import annotations

import pytest
import torch

import neml2.aoti._ops as ops  # loads libneml2, which registers the operator

op = ops.small_mm


def _pair(sa, sb, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(sa, generator=g, dtype=dtype), torch.randn(sb, generator=g, dtype=dtype)


SHAPES = [
    ((3, 3), (3, 3)),  # no batch
    ((1, 3, 3), (1, 3, 3)),  # batch 1
    ((0, 3, 3), (0, 3, 3)),  # batch 0
    ((50, 3, 3), (50, 3, 3)),
    ((50, 3, 3), (50, 3, 1)),  # R2 @ Vec
    ((6, 50, 3, 3), (50, 3, 3)),  # tangents times a rotation: B broadcast, not copied
    ((50, 3, 3), (6, 1, 3, 3)),  # a broadcast axis in the middle
    ((4, 1, 7, 3, 3), (1, 5, 1, 3, 3)),  # both broadcast, three batch axes
    ((9, 2, 3), (9, 3, 4)),  # other small sizes: the runtime-size loop
    ((9, 8, 8), (8, 8)),
    ((9, 3, 0), (9, 0, 3)),  # empty contraction: zeros
]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matches_matmul_bit_for_bit(sa, sb):
    a, b = _pair(sa, sb)
    c, want = op(a, b), a @ b
    assert c.shape == want.shape and c.dtype == want.dtype and c.is_contiguous()
    assert torch.equal(c, want)


def test_strided_operands_are_read_in_place():
    a, b = _pair((20, 3, 3), (3, 20, 3))
    at = a.transpose(-1, -2)  # transposed matrices
    bt = b.transpose(0, 1)  # (20, 3, 3), the batch axis not outermost in memory
    assert torch.equal(op(at, bt), at @ bt)
    sliced = a[::2]  # every other matrix
    assert torch.equal(op(sliced, bt[::2]), sliced @ bt[::2])


def test_float32():
    a, b = _pair((33, 3, 3), (33, 3, 3), torch.float32)
    c = op(a, b)
    assert c.dtype == torch.float32 and torch.equal(c, a @ b)


@pytest.mark.parametrize(
    "a,b",
    [
        _pair((5, 9, 9), (5, 9, 9)),  # larger than the loop's 8: torch.matmul
        (torch.ones(5, 3, 3, dtype=torch.complex128), torch.ones(5, 3, 3, dtype=torch.complex128)),
    ],
)
def test_fallbacks_give_matmul(a, b):
    assert torch.equal(op(a, b), a @ b)


def test_many_batch_axes_fall_back():
    # 17 batch axes, B's in reverse memory order: no two neighbours merge, more than the
    # loop's 16 remain
    a = torch.randn((2,) * 17 + (3, 3), dtype=torch.float64)
    b = torch.randn((2,) * 17 + (3, 3), dtype=torch.float64).permute(*range(16, -1, -1), 17, 18)
    assert torch.equal(op(a, b), a @ b)


def test_shape_and_dtype_errors():
    a = torch.zeros(4, 3, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"A's columns \(3\) differ from B's rows \(2\)"):
        op(a, torch.zeros(4, 2, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="must be"):
        op(torch.zeros(3, dtype=torch.float64), a)
    with pytest.raises(RuntimeError, match="different dtypes"):
        op(a, a.float())
    with pytest.raises(RuntimeError):  # batch shapes that do not broadcast
        op(a, torch.zeros(5, 3, 3, dtype=torch.float64))


def test_threads_split_the_batch():
    a, b = _pair((3, 20001, 3, 3), (20001, 3, 3))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        c = op(a, b)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(c, a @ b)
