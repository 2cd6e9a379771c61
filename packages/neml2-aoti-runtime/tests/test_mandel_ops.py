"""neml2::mandel_to_full, full_to_mandel, skew_to_full, full_to_skew, the storage
conversions libneml2 registers for the eager typed tensors (cpp/ops): the values of
neml2-tensors' own forms bit for bit (float64 and float32, batch shapes of 0 to 3 axes,
strided and broadcast inputs), contiguous results, clear errors for a wrong shape,
device or dtype."""

from __future__ import annotations

import pytest
import torch

import neml2.aoti._ops as ops  # loads libneml2, which registers the operators
from neml2.tensors import _mandel

CONVERSIONS = {
    "mandel_to_full": (6,),
    "full_to_mandel": (3, 3),
    "skew_to_full": (3,),
    "full_to_skew": (3, 3),
}


def _forms(name, x):
    """neml2-tensors' torch form, with no kernel installed."""
    from neml2.tensors import _kernels

    saved = _kernels.installed()
    _kernels.use_cpu_kernels(None)
    try:
        return getattr(_mandel, name)(x)
    finally:
        _kernels.use_cpu_kernels(saved)


@pytest.mark.parametrize("name", list(CONVERSIONS))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("batch", [(), (1,), (0,), (37,), (6, 50), (3, 1, 7)])
def test_bit_for_bit_the_torch_forms(name, dtype, batch):
    g = torch.Generator().manual_seed(len(batch))
    x = torch.randn(*batch, *CONVERSIONS[name], generator=g, dtype=dtype) * 100
    got, want = ops.cpu_kernels[name](x), _forms(name, x)
    assert got.shape == want.shape and got.dtype == dtype and got.is_contiguous()
    assert torch.equal(got, want)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_strided_and_broadcast_inputs(name):
    base = CONVERSIONS[name]
    x = torch.randn(8, 5, *base, dtype=torch.float64).transpose(0, 1)  # strided batch
    assert torch.equal(ops.cpu_kernels[name](x), _forms(name, x))
    e = torch.randn(1, *base, dtype=torch.float64).expand(9, *base)  # stride 0
    assert torch.equal(ops.cpu_kernels[name](e), _forms(name, e))
    if len(base) == 2:
        t = torch.randn(4, 3, 3, dtype=torch.float64).transpose(-1, -2)  # transposed entries
        assert torch.equal(ops.cpu_kernels[name](t), _forms(name, t))


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_errors_name_the_operator(name):
    op = ops.cpu_kernels[name]
    with pytest.raises(RuntimeError, match=f"neml2::{name}: x must be"):
        op(torch.zeros(4, 5, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=f"neml2::{name}: x must be float32 or float64"):
        op(torch.zeros(4, *CONVERSIONS[name], dtype=torch.int64))
    with pytest.raises(RuntimeError, match=f"neml2::{name}: x must be on the CPU"):
        op(torch.zeros(4, *CONVERSIONS[name], dtype=torch.float64, device="meta"))


def test_the_kernels_table_names_every_operator():
    assert set(ops.cpu_kernels) == {"small_mm", *CONVERSIONS}
    assert ops.cpu_kernels["small_mm"] is ops.small_mm
