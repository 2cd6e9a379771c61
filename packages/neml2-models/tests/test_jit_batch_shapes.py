"""py-jit (neml2.compile, Dynamo's eager backend) at the batch shapes the flattened,
dynamic batch axis does not cover by itself: unbatched inputs (batch shape ``()``), a
Python float for a Scalar input, and parameters with a batch of their own.

A parameter at batch ``(3,)`` fixes every call's batch size: the inputs are then not
flattened to one dynamic axis (``(2, 3)`` flattened to 6 would no longer broadcast with
it), and before that a typed call's marked axis made Dynamo decide ``s0 == 3`` on the
size hint and fail ("RuntimeError when making fake tensor call").
"""

from __future__ import annotations

import pytest
import torch

import neml2
from neml2.models.porous_flow.permeability import PowerLawPermeability
from neml2.tensors import FatalError, Scalar

F64 = torch.float64


def _close_tree(got, want):
    lg, tg = torch.utils._pytree.tree_flatten(got)
    lw, tw = torch.utils._pytree.tree_flatten(want)
    assert tg == tw
    for g, w in zip(lg, lw, strict=True):
        g, w = getattr(g, "data", g).detach(), getattr(w, "data", w).detach()
        assert g.shape == w.shape
        err = (g - w).abs()
        assert not bool((~(err <= 1e-13 * (1 + w.abs()))).any()), err.max()


def _pinned():
    """K = K0 (φ/φ0)^p with φ0 and p at batch (3,)."""
    return PowerLawPermeability(
        reference_permeability=3.0,
        reference_porosity=torch.tensor([0.71, 0.35, 1.0], dtype=F64),
        exponent=torch.tensor([0.0, 0.4, 1.8], dtype=F64),
    )


@pytest.fixture(scope="module")
def pinned():
    m = _pinned()
    return m, neml2.compile(m, backend="eager")


@pytest.mark.parametrize("batch", [(3,), (2, 3), ()], ids=["3", "2x3", "unbatched"])
def test_batched_parameters_name_keyed(pinned, batch):
    """The inputs broadcast with the parameters' (3,): py-eager's shapes and values."""
    eager, jit = pinned
    phi = 0.05 + 0.9 * torch.rand(batch, dtype=F64, generator=torch.Generator().manual_seed(1))
    x, t = {"porosity": phi}, {"porosity": torch.ones_like(phi)}
    _close_tree(jit.forward(x), eager.forward(x))
    _close_tree(jit.jacobian(x), eager.jacobian(x))
    _close_tree(jit.jvp(x, t), eager.jvp(x, t))


@pytest.mark.parametrize("batch", [(3,), ()], ids=["3", "unbatched"])
def test_batched_parameters_typed(pinned, batch):
    eager, jit = pinned
    phi = Scalar(torch.full(batch, 0.3, dtype=F64))
    _close_tree(jit(phi), eager(phi))


def test_parameter_batch_that_does_not_broadcast(pinned):
    """py-eager's error: the parameter named, the inputs' batch shape given."""
    eager, jit = pinned
    x = {"porosity": torch.full((4,), 0.3, dtype=F64)}
    with pytest.raises(FatalError, match=r"parameter 'reference_porosity' has batch shape \(3,\)"):
        jit.forward(x)
    with pytest.raises(FatalError, match=r"parameter 'reference_porosity' has batch shape \(3,\)"):
        eager.forward(x)


@pytest.fixture(scope="module")
def scalar():
    """The same law with unbatched parameters: every input and output a Scalar."""
    m = PowerLawPermeability(reference_permeability=3.0, reference_porosity=0.35, exponent=1.8)
    return m, neml2.compile(m, backend="eager")


def test_unbatched_name_keyed(scalar):
    """Every input at batch shape (): outputs, Jacobian blocks and jvp at () too."""
    eager, jit = scalar
    x, t = {"porosity": torch.tensor(0.3, dtype=F64)}, {"porosity": torch.tensor(1.0, dtype=F64)}
    got = jit.forward(x), jit.jacobian(x), jit.jvp(x, t)
    assert got[0]["permeability"].shape == ()
    _close_tree(got, (eager.forward(x), eager.jacobian(x), eager.jvp(x, t)))


def test_float_scalar_input(scalar):
    eager, jit = scalar
    x = {"porosity": 0.3}
    got = jit.forward(x), jit.jacobian(x)
    assert got[0]["permeability"].shape == ()
    _close_tree(got, (eager.forward(x), eager.jacobian(x)))
