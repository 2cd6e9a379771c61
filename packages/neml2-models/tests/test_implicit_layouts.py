"""An eager ImplicitUpdate finds its unknowns' and residuals' layouts from one residual
evaluation, and reuses them while the inputs keep their shapes (each step of a transient
run): a call shaped as the last one evaluates the residuals once less; another batch, a
sub-batch or a parameter of another shape evaluates them again."""

from __future__ import annotations

import pytest
import torch
from test_block_seeds import MEAN, G, _given, _model

from neml2.models import implicit_update


@pytest.fixture
def calls(monkeypatch):
    """How many times the system model is evaluated (residual evaluations)."""
    count = [0]
    real = implicit_update.ImplicitUpdate._call

    def spy(self, values, v=None):
        count[0] += 1
        return real(self, values, v)

    monkeypatch.setattr(implicit_update.ImplicitUpdate, "_call", spy)
    return count


def _run(model, batch):
    given = _given(batch)
    return [y.data for y in model(*[given[n] for n in model.input_spec])]


def _evaluations(calls, model, batch):
    before = calls[0]
    out = _run(model, batch)
    return calls[0] - before, out


def test_same_shapes_reuse_the_layouts(tmp_path, calls):
    model = _model(tmp_path, MEAN)
    _run(model, (5,))  # the first call also checks the block seeds (two more evaluations)
    found, out1 = _evaluations(calls, model, (3, 2))  # another batch: layouts found anew
    reused, out2 = _evaluations(calls, model, (3, 2))
    assert reused == found - 1  # the same Newton iterations, no layout evaluation
    for a, b in zip(out1, out2, strict=True):
        assert torch.equal(a, b)
    fresh = _run(_model(tmp_path, MEAN), (3, 2))
    for a, b in zip(out2, fresh, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert out2[0].shape == (3, 2, G)


def test_a_parameter_of_another_shape_finds_the_layouts_again(tmp_path, calls):
    """The system model's parameters are part of what the layouts depend on."""
    model = _model(tmp_path, MEAN)
    _run(model, (5,))
    reused, before = _evaluations(calls, model, (5,))
    scalars = [(n, b) for n, b in model.system.model.named_buffers() if b.dim() == 0]
    assert scalars, "the system model has a scalar buffer"
    name, b = scalars[0]
    owner, _, attr = name.rpartition(".")
    setattr(model.system.model.get_submodule(owner), attr, b.expand(5).clone())  # per point
    found, after = _evaluations(calls, model, (5,))
    assert found == reused + 1  # the layouts were found again
    for x, y in zip(after, before, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=1e-12)
