"""An eager composition calls its children directly (``Model._call_within``), skipping
``torch.nn.Module.__call__`` and the public entry point's checks (about 12 us per child
call), except where a hook is registered: then the child is called publicly, so that
its hooks run as torch documents them."""

from __future__ import annotations

import textwrap

import pytest
import torch

import neml2
from neml2.models import _composed
from neml2.models._model import Model
from neml2.tensors import SR2, Scalar

F64 = torch.float64

INPUT = """
[Models]
  [youngs]
    type = LinearIsotropicHardening
    hardening_modulus = 1e5
    equivalent_plastic_strain = 'T'
    isotropic_hardening = 'E_of_T'
  []
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [stress]
    type = LinearIsotropicElasticity
    coefficients = 'youngs 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'stress'
    invariant = 'effective_stress'
  []
  [inner]
    type = ComposedModel
    models = 'elastic_strain stress'
  []
  [model]
    type = ComposedModel
    models = 'inner vonmises'
    additional_outputs = 'stress'
  []
[]
"""


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(INPUT).lstrip())
    return neml2.load_model(p, "model")


def _inputs(n=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {
        "strain": SR2(torch.randn(n, 6, generator=g, dtype=F64) * 1e-3),
        "plastic_strain": SR2(torch.randn(n, 6, generator=g, dtype=F64) * 1e-4),
        "T": Scalar(1.0 + torch.rand(n, generator=g, dtype=F64)),
    }


def _evaluate(model):
    """Outputs, first- and second-order tangents of the typed call."""
    x = _inputs()
    args = [x[n] for n in model.input_spec]
    v = {"strain": {"strain": torch.eye(6, dtype=F64).unsqueeze(1)}}
    v2 = {"strain": {"strain": {"strain": torch.zeros(6, 6, 1, 6, dtype=F64)}}}
    return model(*args, v=v, v2=v2)


def _count_direct(monkeypatch):
    seen: list[str] = []
    within = Model._call_within

    def counting(self, args):
        seen.append(self._label())
        return within(self, args)

    monkeypatch.setattr(Model, "_call_within", counting)
    return seen


def test_direct_calls_give_the_public_calls_results(model, monkeypatch):
    """Values and first- and second-order tangents are bit for bit those of calling
    every child through ``torch.nn.Module.__call__``; the direct path is taken for every
    child (nested compositions, a promoted parameter's provider)."""
    seen = _count_direct(monkeypatch)
    direct = _evaluate(model)
    assert len(seen) >= 5, seen  # inner, its two leaves, the provider, vonmises
    with monkeypatch.context() as m:
        m.setattr(_composed, "direct_calls", lambda: False)
        seen.clear()
        public = _evaluate(model)
        assert seen == []
    assert len(direct) == len(public) == len(model.output_spec) + 2
    n = len(model.output_spec)
    for got, want in zip(direct[:n], public[:n], strict=True):
        assert torch.equal(got.data, want.data)
    for got, want in zip(direct[-2:], public[-2:], strict=True):
        assert got.keys() == want.keys()
        flat_got = torch.utils._pytree.tree_leaves(got)
        flat_want = torch.utils._pytree.tree_leaves(want)
        assert len(flat_got) == len(flat_want) > 0
        for a, b in zip(flat_got, flat_want, strict=True):
            a = a.data if hasattr(a, "data") else a
            b = b.data if hasattr(b, "data") else b
            assert torch.equal(a, b)


def test_a_hooked_child_is_called_publicly(model, monkeypatch):
    """A forward hook on a child runs at every composed call and what it returns is
    what the composition uses; the other children still go directly."""
    seen = _count_direct(monkeypatch)
    child = next(m for m in model.modules() if type(m).__name__ == "SR2Invariant")
    calls = []

    def hook(mod, args, out):
        calls.append(type(mod).__name__)
        return Scalar(out.data * 2.0)

    x = _inputs()
    plain = model.forward({k: v.data for k, v in x.items()})["effective_stress"]
    seen.clear()
    handle = child.register_forward_hook(hook)
    try:
        doubled = model.forward({k: v.data for k, v in x.items()})["effective_stress"]
    finally:
        handle.remove()
    assert calls == ["SR2Invariant"]
    torch.testing.assert_close(doubled, 2.0 * plain, rtol=0, atol=0)
    assert seen and child._label() not in seen


def test_a_global_hook_sees_every_child(model, monkeypatch):
    """With a global module hook registered, every child goes through ``__call__``."""
    seen = _count_direct(monkeypatch)
    calls = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda mod, args, out: calls.append(type(mod).__name__)
    )
    try:
        model.forward({k: v.data for k, v in _inputs().items()})
    finally:
        handle.remove()
    assert seen == []
    assert calls.count("LinearIsotropicElasticity") == 1 and calls.count("SR2Invariant") == 1
    assert calls.count("LinearIsotropicHardening") == 1
