"""The typed tensors' eager kernels with the runtime installed: resolving libneml2's
operators (neml2-models' DenseLU does, when it is made) installs neml2::small_mm and the
storage conversions (neml2::mandel_to_full, ...) as neml2-tensors' eager kernels, and the
crystal models of the route zoo (one crystal, a Taylor aggregate) give the same values,
Jacobians included, bit for bit with them and with the torch forms. The operators' own
tests are neml2-aoti-runtime's test_small_mm.py and test_mandel_ops.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import neml2
import neml2.solvers.linear as linear
from neml2.tensors import _kernels, use_cpu_kernels

sys.path.insert(0, str(Path(__file__).resolve().parent / "routes"))
from _zoo import CASES

import neml2.routes

NAMES = set(_kernels.NAMES)


def _runtime_kernels():
    assert linear.dense_lu_operator() is not None, "neml2-aoti-runtime is installed here"
    return {n: getattr(torch.ops.neml2, n) for n in _kernels.NAMES}


def test_resolving_the_runtime_installs_every_kernel():
    want = _runtime_kernels()
    assert set(_kernels.installed()) == NAMES
    for n, op in _kernels.installed().items():
        assert op is want[n], n


@pytest.fixture
def counted_kernels():
    """The runtime's kernels, counted per name, for the test (what was there put back)."""
    ops = _runtime_kernels()
    before = _kernels.installed()
    seen: dict[str, int] = {}

    def counted(name):
        def op(*xs):
            seen[name] = seen.get(name, 0) + 1
            return ops[name](*xs)

        return op

    yield {n: counted(n) for n in ops}, seen
    use_cpu_kernels(before)


@pytest.mark.parametrize("name", ["crystal_per_slip", "taylor"])
def test_crystal_models_same_with_and_without_the_kernels(name, counted_kernels):
    kernels, seen = counted_kernels
    case = CASES[name]
    model = neml2.routes.open_model("py-eager", case.file, case.model, sub_batch=case.sub_batch)
    x = case.inputs(7)
    use_cpu_kernels(None)
    torch_out, (_, torch_jac) = model.forward(x), model.jacobian(x)
    use_cpu_kernels(kernels)
    out, (_, jac) = model.forward(x), model.jacobian(x)
    # the products and every conversion a crystal model makes went through a kernel
    assert {"small_mm", "mandel_to_full", "full_to_mandel", "full_to_skew"} <= set(seen), seen
    assert out.keys() == torch_out.keys() and out
    for k in out:
        assert torch.equal(out[k], torch_out[k]), k
    assert jac.keys() == torch_jac.keys() and jac
    for k in jac:
        assert jac[k].keys() == torch_jac[k].keys(), k
        for j in jac[k]:
            assert torch.equal(jac[k][j], torch_jac[k][j]), (k, j)


def test_a_model_load_resolves_them_without_a_solve():
    # loading an implicit model makes its DenseLU: the kernels are in place before any call
    use_cpu_kernels(None)
    linear._operator = linear._UNRESOLVED
    try:
        neml2.load_model(CASES["crystal_per_slip"].file, CASES["crystal_per_slip"].model)
        assert set(_kernels.installed()) == NAMES
    finally:
        linear.dense_lu_operator()
