"""The seed's authoring contract (``neml2.models.model``), on models written as the seed
documents them (``seed_models.py``): loading from HIT, the call forms of the contract,
the generic derivative check (first and second order against finite differences), and
the contract's rules (``v2`` needs ``v``, ``Normality`` needs ``SUPPORTS_SECOND_ORDER``,
output priorities, submodules, parameter specs). The route matrix runs the same input
files on all six routes (``../routes``, cases ``seed_*``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import seed_models  # noqa: E402  (registers the Seed* types)
from test_model_derivatives import _check  # noqa: E402

import neml2  # noqa: E402
from neml2.models.model import HitSchema, Model, NLParam, input, output  # noqa: E402
from neml2.tensors import SR2, FatalError, Scalar  # noqa: E402

F64 = torch.float64


def _rand(g, *shape, lo=0.05, hi=0.15):
    return lo + (hi - lo) * torch.rand(*shape, generator=g, dtype=F64)


#: file -> typed inputs at a valid operating point (batch 4), in input_spec order
def _point(name: str, model) -> list:
    g = torch.Generator().manual_seed(11)
    xs = []
    for n, t in model.input_spec.items():
        if t is SR2:
            xs.append(SR2(_rand(g, 4, 6, lo=-0.01, hi=0.01)))
        elif n in ("T", "temperature"):
            xs.append(Scalar(_rand(g, 4, lo=250.0, hi=350.0)))
        else:
            xs.append(Scalar(_rand(g, 4, lo=-0.8, hi=0.8)))
    return xs


FILES = ["elasticity.i", "energy_normality.i", "parameters.i", "submodule.i", "priorities.i"]


def _load(name: str):
    return neml2.load_model(HERE / name, "model")


@pytest.mark.parametrize("name", FILES)
def test_derivatives_match_finite_differences(name):
    model = _load(name)
    # Normality's outputs are first derivatives: their v2= would need third ones
    _check(model, _point(name, model), seed=0, second=name != "energy_normality.i")


def test_call_forms_of_the_contract():
    """``model(*inputs)``, ``model(*inputs, v=)`` and ``model(*inputs, v=, v2=)`` as the
    seed writes them, on an explicit leaf."""
    m = _load("energy_normality.i").model  # the SeedThermalEnergy leaf
    strain = SR2(torch.tensor([[1e-3, -2e-3, 5e-4, 1e-4, 0.0, 3e-4]], dtype=F64))
    T = Scalar(torch.tensor([300.0], dtype=F64))
    out = m(strain, T)
    w = 1e3 * torch.exp(torch.tensor(-2e-3 * 300.0, dtype=F64))
    torch.testing.assert_close(out.data, 0.5 * w * (strain.data**2).sum(-1))
    v = {"strain": {"e": SR2(torch.eye(6, dtype=F64).unsqueeze(1))}}
    *vals, v_out = m(strain, T, v=v)
    torch.testing.assert_close(v_out["energy"]["e"].data[:, 0], w * strain.data[0])
    *vals, v_out, v2_out = m(strain, T, v=v, v2={})
    torch.testing.assert_close(vals[0].data, out.data)
    hess = v2_out["energy"]["e"]["e"].data[:, :, 0]
    torch.testing.assert_close(hess, w * torch.eye(6, dtype=F64))


def test_vh_gives_only_the_v_times_vh_pairs():
    """``vh=`` on an explicit leaf: the Hessian applied to the (v, vh) pairs only, equal
    to those of a v2= call over the union of the seeds (the typed-algebra form:
    packages/neml2-models/tests/test_seed_contract.py)."""
    m = _load("energy_normality.i").model
    g = torch.Generator().manual_seed(3)
    strain, T = SR2(_rand(g, 2, 6, lo=-0.01, hi=0.01)), Scalar(_rand(g, 2, lo=250, hi=350))
    da = SR2(_rand(g, 1, 2, 6))
    db = Scalar(_rand(g, 1, 2))
    _, _, v2_out, vh_out = m(
        strain, T, v={"strain": {"a": da}}, v2={}, vh={"temperature": {"b": db}}
    )
    assert set(v2_out["energy"]) == {"a"} and set(v2_out["energy"]["a"]) == {"b"}
    assert set(vh_out["energy"]) == {"b"}
    both = {"strain": {"a": da}, "temperature": {"b": db}}
    _, _, full = m(strain, T, v=both, v2={})
    torch.testing.assert_close(v2_out["energy"]["a"]["b"].data, full["energy"]["a"]["b"].data)


def test_v2_needs_v():
    m = _load("energy_normality.i").model
    x = [SR2(torch.zeros(1, 6, dtype=F64)), Scalar(torch.ones(1, dtype=F64))]
    with pytest.raises(FatalError, match="v2= needs v="):
        m(*x, v2={})
    with pytest.raises(FatalError, match="vh= needs v="):
        m(*x, vh={})


class _FirstOrderOnly(Model):
    """A leaf whose forward propagates first-order tangents only."""

    hit = HitSchema(input("x", Scalar, "x"), output("f", Scalar, "x^2"))

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        f = x * x
        if v is None:
            return f
        return f, *self.propagate_tangents(v, "f", {"x": lambda t: 2.0 * x * t}, output=f)


def test_normality_refuses_a_leaf_without_second_order(tmp_path):
    assert _FirstOrderOnly.SUPPORTS_SECOND_ORDER is False
    from neml2.models import register_neml2_object

    register_neml2_object("SeedTestFirstOrderOnly")(_FirstOrderOnly)
    p = tmp_path / "n.i"
    p.write_text(
        "[Models]\n  [f]\n    type = SeedTestFirstOrderOnly\n  []\n"
        "  [n]\n    type = Normality\n    model = 'f'\n    function = 'f'\n"
        "    from = 'x'\n    to = 'df'\n  []\n[]\n"
    )
    with pytest.raises(FatalError, match=r"n.i:\d+:\d+: .*SUPPORTS_SECOND_ORDER = False"):
        neml2.load_model(p, "n")


def test_output_priorities_pick_the_high_provider():
    m = _load("priorities.i")
    x = torch.tensor([0.5, -0.3], dtype=F64)
    out = m.forward({"x": x})
    torch.testing.assert_close(out["y"], x + x**3 / 3)
    torch.testing.assert_close(out["w"], 2 * (x + x**3 / 3) + x)
    assert seed_models.SeedHighCorrection.output_priorities == {"y": "high"}
    assert seed_models.SeedLowGuess.output_priorities == {"y": "low"}


def test_submodule_registered_under_its_block_name():
    m = _load("submodule.i")
    assert dict(m.named_children()).keys() == {"cubic"}
    x = torch.tensor([0.5, 2.0], dtype=F64)
    torch.testing.assert_close(m.forward({"x": x})["y"], 3 * (x + x**3 / 3))


def test_parameter_specs():
    """Literal, [Tensors], model output (promoted, provider pulled in) and free variable;
    the buffer from a string option."""
    m = _load("parameters.i")
    affine = m.affine
    assert list(affine.input_spec) == ["x", "k", "shift"]
    nl = NLParam.of(affine)
    assert (nl["c"].input_name, nl["c"].provider, nl["c"].tail_index) == ("k", "curvature", 0)
    assert (nl["d"].input_name, nl["d"].provider, nl["d"].tail_index) == ("shift", None, 1)
    assert float(affine.param("a").data) == 1.5
    assert float(affine.param("b").data) == 0.25
    assert "offset_value" in dict(affine.named_buffers())
    assert "offset_value" not in dict(affine.named_parameters())
    x, z, d = (torch.tensor([0.3], dtype=F64) for _ in range(3))
    y = m.forward({"x": x, "z": z, "shift": d})["y"]
    torch.testing.assert_close(y, 1.5 * x + 0.25 + 0.5 * z * x * x + d + 0.125)


def test_call_by_name_returns_typed_values():
    m = _load("elasticity.i")
    out = m.call_by_name(
        {"T": torch.tensor([20.0], dtype=F64), "strain": torch.zeros(1, 6, dtype=F64)}
    )
    assert isinstance(out["stress"], SR2)
