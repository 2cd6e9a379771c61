"""The typed tensors' eager R2 products with the runtime installed: resolving libneml2's
operators (neml2-models' DenseLU does, when it is made) installs neml2::small_mm as their
kernel, and the crystal models of the route zoo (one crystal, a Taylor aggregate) give
the same values, Jacobians included, bit for bit with it and with ATen's matmul. The
operator's own tests are neml2-aoti-runtime's test_small_mm.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import neml2
import neml2.solvers.linear as linear
from neml2.tensors import _small_matmul, use_small_matmul_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent / "routes"))
from _adapters import py_eager  # noqa: E402
from _zoo import CASES  # noqa: E402


def test_resolving_the_runtime_installs_the_kernel():
    assert linear.dense_lu_operator() is not None, "neml2-aoti-runtime is installed here"
    assert _small_matmul._kernel is torch.ops.neml2.small_mm


@pytest.fixture
def counted_kernel():
    """The operator, counted, installed for the test (and what was there put back)."""
    linear.dense_lu_operator()
    before = _small_matmul._kernel
    seen = []

    def op(a, b):
        seen.append(tuple(a.shape))
        return torch.ops.neml2.small_mm(a, b)

    yield op, seen
    use_small_matmul_kernel(before)


@pytest.mark.parametrize("name", ["crystal_per_slip", "taylor"])
def test_crystal_models_same_with_and_without_the_kernel(name, counted_kernel):
    op, seen = counted_kernel
    case = CASES[name]
    model = py_eager(case)
    x = case.inputs(7)
    use_small_matmul_kernel(None)
    aten_out, (_, aten_jac) = model.forward(x), model.jacobian(x)
    use_small_matmul_kernel(op)
    out, (_, jac) = model.forward(x), model.jacobian(x)
    assert seen, "the crystal model made no R2 product through the kernel"
    assert out.keys() == aten_out.keys() and out
    for k in out:
        assert torch.equal(out[k], aten_out[k]), k
    assert jac.keys() == aten_jac.keys() and jac
    for k in jac:
        assert jac[k].keys() == aten_jac[k].keys(), k
        for j in jac[k]:
            assert torch.equal(jac[k][j], aten_jac[k][j]), (k, j)


def test_a_model_load_resolves_it_without_a_solve():
    # loading an implicit model makes its DenseLU: the kernel is in place before any call
    use_small_matmul_kernel(None)
    linear._operator = linear._UNRESOLVED
    try:
        neml2.load_model(CASES["crystal_per_slip"].file, CASES["crystal_per_slip"].model)
        assert _small_matmul._kernel is torch.ops.neml2.small_mm
    finally:
        linear.dense_lu_operator()
