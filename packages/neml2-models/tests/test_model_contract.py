"""The Model contract on a real model: dict forward, v=/v2=, jvp, jacobian, parameters."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import neml2
from neml2.models import Model, input, load_model, output
from neml2.tensors import SR2, FatalError, Scalar

HELLO = Path(__file__).resolve().parents[3] / "examples" / "hello" / "input.i"


def _input(tmp_path, text: str) -> Path:
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


@pytest.fixture
def model():
    return neml2.load_model(HELLO, "elasticity")


def _strain(*batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*batch, 6, generator=g, dtype=torch.float64) * 1e-3


def test_hello_world_forward(model):
    """The seeds' example: load, then forward a dict of raw tensors."""
    e = _strain(5)
    out = model.forward({"strain": e})
    assert set(out) == {"stress"} and out["stress"].shape == (5, 6)
    E, nu = 200e3, 0.3
    K, G = E / (3 * (1 - 2 * nu)), E / (2 * (1 + nu))
    tr = e[:, :3].sum(-1, keepdim=True)
    vol = torch.cat([tr.expand(-1, 3) / 3, torch.zeros(5, 3, dtype=e.dtype)], -1)
    expected = 3 * K * vol + 2 * G * (e - vol)
    torch.testing.assert_close(out["stress"].detach(), expected)


def test_print_shows_variables_and_parameters(model):
    text = str(model)
    assert "inputs: strain: SR2" in text
    assert "outputs: stress: SR2" in text
    assert "E: Scalar" in text and "nu: Scalar" in text


def test_metadata(model):
    assert model.input_names == ["strain"] and model.output_names == ["stress"]
    assert model.input_base_shapes == [(6,)] and model.output_base_shapes == [(6,)]
    assert model.dtype == torch.float64 and model.device.type == "cpu"
    assert [n for n, _ in model.named_parameters()] == ["E", "nu"]


def test_dtype_option():
    m = neml2.load_model(HELLO, "elasticity", dtype=torch.float32)
    out = m.forward({"strain": _strain(2).float()})
    assert m.dtype == torch.float32 and out["stress"].dtype == torch.float32


def test_positional_and_v_contract(model):
    e = SR2(_strain(4))
    s = model(e)
    assert isinstance(s, SR2) and s.shape == (4, 6)
    seeds = SR2(torch.randn(3, 4, 6, dtype=torch.float64))  # K = 3 directions
    s2, v_out = model(e, v={"strain": {"e": seeds}})
    torch.testing.assert_close(s2.data, s.data)
    assert v_out["stress"]["e"].shape == (3, 4, 6)
    # linear model: the tangent is the model applied to the direction
    torch.testing.assert_close(v_out["stress"]["e"].data, model(seeds).data)


def test_second_order_is_zero_for_a_linear_model(model):
    e = SR2(_strain(2))
    d = SR2(torch.randn(1, 2, 6, dtype=torch.float64))
    *_, v2_out = model(e, v={"strain": {"a": d}}, v2={"strain": {}})
    second = v2_out["stress"].get("a", {}).get("a")
    assert second is None or torch.count_nonzero(second.data) == 0


def test_jacobian_and_jvp_agree(model):
    e = _strain(3)
    out, J = model.jacobian({"strain": e})
    assert J["stress"]["strain"].shape == (3, 6, 6)
    t = torch.randn(3, 6, dtype=torch.float64)
    out2, jvp = model.jvp({"strain": e}, {"strain": t})
    torch.testing.assert_close(out2["stress"], out["stress"])
    torch.testing.assert_close(jvp["stress"], torch.einsum("bij,bj->bi", J["stress"]["strain"], t))


def test_batch_size_one(model):
    out, J = model.jacobian({"strain": _strain(1)})
    assert out["stress"].shape == (1, 6) and J["stress"]["strain"].shape == (1, 6, 6)


def test_named_input_errors(model):
    with pytest.raises(FatalError, match="missing input"):
        model.forward({})
    with pytest.raises(FatalError, match=r"unknown input 'stress'; the model's inputs are: strain"):
        model.forward({"strain": _strain(1), "stress": _strain(1)})
    with pytest.raises(FatalError, match=r"input 'strain' has shape \(2, 5\)"):
        model.forward({"strain": torch.zeros(2, 5, dtype=torch.float64)})
    with pytest.raises(FatalError, match="tangent for unknown input"):
        model.jvp({"strain": _strain(1)}, {"T": torch.zeros(1)})


# ---------------------------------------------------------------------- input dtype / device
# docs/routes.md, "Input dtype and device": a tensor must already have the model's dtype and
# device; nothing is converted (the compiled routes reject the same inputs).
BAD_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.complex128]


def _as(dtype, *batch):
    return (_strain(*batch) * 1e3).round().to(dtype)


@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["forward", "jacobian", "jvp-input", "jvp-tangent", "typed"])
def test_input_of_another_dtype_is_rejected(model, op, dtype):
    bad, good = _as(dtype, 2), _strain(2)
    calls = {
        "forward": lambda: model.forward({"strain": bad}),
        "jacobian": lambda: model.jacobian({"strain": bad}),
        "jvp-input": lambda: model.jvp({"strain": bad}, {"strain": good}),
        "jvp-tangent": lambda: model.jvp({"strain": good}, {"strain": bad}),
        "typed": lambda: model(_raw_sr2(bad)),
    }
    what = "tangent" if op == "jvp-tangent" else "input"
    with pytest.raises(FatalError) as info:
        calls[op]()
    msg = str(info.value)
    assert f"{what} 'strain' has dtype {dtype} (on cpu)" in msg, msg
    assert "the model computes in torch.float64 on cpu" in msg, msg
    assert "LinearIsotropicElasticity 'elasticity'" in msg, msg


def _raw_sr2(data):
    """An SR2 holding *data* as it is (the constructor would turn an int tensor into floats)."""
    x = SR2(torch.zeros(data.shape, dtype=torch.float64))
    x.data = data
    return x


@pytest.mark.parametrize("op", ["forward", "jacobian", "jvp-tangent", "typed", "v-seed"])
def test_input_on_another_device_is_rejected(model, op):
    meta, good = _strain(2).to("meta"), _strain(2)
    calls = {
        "forward": lambda: model.forward({"strain": meta}),
        "jacobian": lambda: model.jacobian({"strain": meta}),
        "jvp-tangent": lambda: model.jvp({"strain": good}, {"strain": meta}),
        "typed": lambda: model(SR2(meta)),
        "v-seed": lambda: model(SR2(good), v={"strain": {"d": SR2(meta[None])}}),
    }
    with pytest.raises(
        FatalError,
        match=r"is on meta \(dtype torch.float64\) but the model "
        r"computes in torch.float64 on cpu",
    ):
        calls[op]()


def test_seed_of_another_dtype_is_rejected(model):
    e = SR2(_strain(2))
    with pytest.raises(
        FatalError,
        match=r"v= tangent of 'strain' \(seed 'd'\) has dtype "
        r"torch.float32",
    ):
        model(e, v={"strain": {"d": SR2(_strain(1, 2).float())}})
    with pytest.raises(
        FatalError,
        match=r"v2= tangent of 'strain' \(seed 'a'\) \(seed 'b'\) "
        r"has dtype torch.float32",
    ):
        model(e, v={}, v2={"strain": {"a": {"b": SR2(_strain(1, 1, 2).float())}}})


def test_misspelt_names_are_suggested(model):
    e = _strain(2)
    with pytest.raises(FatalError, match=r"unknown input 'strian' \(did you mean 'strain'\?\)"):
        model.forward({"strian": e})
    with pytest.raises(FatalError, match=r"unknown input 'strian' \(did you mean 'strain'\?\)"):
        model.jacobian({"strian": e})
    with pytest.raises(
        FatalError, match=r"tangent for unknown input 'strian' \(did you mean 'strain'\?\)"
    ):
        model.jvp({"strain": e}, {"strian": e})
    d = SR2(_strain(1, 2))
    with pytest.raises(
        FatalError, match=r"v= tangent for unknown input 'strian' \(did you mean 'strain'\?\)"
    ):
        model(SR2(e), v={"strian": {"d": d}})
    with pytest.raises(
        FatalError, match=r"v2= tangent for unknown input 'strian' \(did you mean 'strain'\?\)"
    ):
        model(SR2(e), v={"strain": {"d": d}}, v2={"strian": {}})
    with pytest.raises(FatalError, match=r"unknown input 'zzz'; the model's inputs are: strain"):
        model.forward({"zzz": e})  # nothing close: no suggestion


def test_python_numbers_take_the_model_dtype(model):
    """A Python number has no dtype of its own: it is taken in the model's (exact here)."""
    e = [[1e-3, 0.0, 0.0, 0.0, 0.0, 0.0]]
    out = model.forward({"strain": e})["stress"]
    ref = model.forward({"strain": torch.tensor(e, dtype=torch.float64)})["stress"]
    assert out.dtype == torch.float64 and torch.equal(out, ref)
    with pytest.raises(FatalError, match=r"input 'strain' has dtype torch\.float32"):
        model.forward({"strain": torch.tensor(e, dtype=torch.float32).numpy()})  # numpy: checked


def test_float32_model_takes_float32_only():
    m = neml2.load_model(HELLO, "elasticity", dtype=torch.float32)
    with pytest.raises(
        FatalError,
        match=r"has dtype torch.float64 \(on cpu\) but the model "
        r"computes in torch.float32 on cpu",
    ):
        m.forward({"strain": _strain(2)})
    assert m.forward({"strain": _strain(2).float()})["stress"].dtype == torch.float32


class _Double(Model):
    """No parameters, no buffers: its dtype can only come from .to()."""

    fields = (input("x", Scalar), output("y", Scalar))

    def forward(self, x):
        return x * 2.0


def test_model_without_parameters_follows_to():
    """Its dtype is what .to() asked for (before: always float64), so it takes those inputs."""
    m = _Double()
    assert (m.dtype, m.device) == (torch.float64, torch.device("cpu"))
    m.to(torch.float32)
    assert m.dtype == torch.float32
    x = torch.ones(3, dtype=torch.float32)
    assert m.forward({"x": x})["y"].dtype == torch.float32
    m.double()
    assert m.dtype == torch.float64
    with pytest.raises(FatalError, match=r"input 'x' has dtype torch\.float32"):
        m.forward({"x": x})
    with pytest.raises(FatalError, match=r"input 'x' has dtype torch\.float32"):
        m(Scalar(x))


def test_set_parameter_and_batched_parameter(model):
    e = _strain(4)
    s1 = model.forward({"strain": e})["stress"]
    model.set_parameter("E", torch.tensor(100e3))
    s2 = model.forward({"strain": e})["stress"]
    torch.testing.assert_close(s2, s1 / 2)
    model.set_parameter("E", torch.tensor([100e3, 200e3, 100e3, 200e3]))
    s3 = model.forward({"strain": e})["stress"]
    torch.testing.assert_close(s3[1], s1[1])
    with pytest.raises(FatalError, match="no parameter 'G'"):
        model.set_parameter("G", 1.0)


def test_parameter_gradient_by_autograd(model):
    e = _strain(3)
    s = model.forward({"strain": e})["stress"]
    s.sum().backward()
    E = model.get_parameter("E")
    assert E.grad is not None
    # stress is linear in E at fixed nu: d(sum s)/dE = sum(s)/E
    torch.testing.assert_close(E.grad, (s.sum() / E).detach())


def test_promoted_parameter_becomes_an_input(tmp_path):
    p = _input(
        tmp_path,
        """
        [Models]
          [m]
            type = LinearIsotropicElasticity
            coefficients = 'youngs 0.25'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
          []
        []
        """,
    )
    m = load_model(p, "m")
    assert m.input_names == ["strain", "youngs"]
    e = _strain(2)
    out, J = m.jacobian({"strain": e, "youngs": torch.tensor([1e3, 2e3], dtype=torch.float64)})
    assert J["stress"]["youngs"].shape == (2, 6)
    # linear in E: dS/dE = S / E
    torch.testing.assert_close(J["stress"]["youngs"][1], out["stress"][1] / 2e3)


def test_parameter_from_a_tensors_block(tmp_path):
    p = _input(
        tmp_path,
        """
        [Tensors]
          [Es]
            type = Python
            expr = 'Scalar(torch.tensor([1e3, 2e3, 3e3]))'
          []
        []
        [Models]
          [m]
            type = LinearIsotropicElasticity
            coefficients = 'Es 0.25'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
          []
        []
        """,
    )
    m = load_model(p, "m")
    assert m.input_names == ["strain"]
    out = m.forward({"strain": _strain(3)})
    assert out["stress"].shape == (3, 6)


def test_rate_and_compliance_forms(tmp_path):
    p = _input(
        tmp_path,
        """
        [Models]
          [C]
            type = LinearIsotropicElasticity
            coefficients = '1e3 0.25'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
          []
          [S]
            type = LinearIsotropicElasticity
            coefficients = '1e3 0.25'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
            compliance = true
          []
          [R]
            type = LinearIsotropicElasticity
            coefficients = '666.6666666666666 400'
            coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
            rate_form = true
          []
        []
        """,
    )
    stiff, comp, rate = (load_model(p, n) for n in "CSR")
    assert comp.input_names == ["stress"] and comp.output_names == ["strain"]
    assert rate.input_names == ["strain_rate"] and rate.output_names == ["stress_rate"]
    e = _strain(4)
    s = stiff.forward({"strain": e})["stress"]
    torch.testing.assert_close(comp.forward({"stress": s})["strain"], e)
    # E = 1e3, nu = 0.25  <=>  K = 1e3 / 1.5, G = 400
    torch.testing.assert_close(rate.forward({"strain_rate": e})["stress_rate"], s)


def test_scalar_parameter_literal_must_be_one_number(tmp_path):
    p = _input(
        tmp_path,
        """
        [Tensors]
          [C]
            type = Python
            expr = 'SR2.fill(1, 2, 3)'
          []
        []
        [Models]
          [m]
            type = GeneralElasticity
            elastic_stiffness_tensor = 'C'
          []
        []
        """,
    )
    with pytest.raises(
        FatalError, match=r":10:\d+: option 'elastic_stiffness_tensor' needs a SSR4"
    ):
        load_model(p, "m")


def test_scalar_input_types():
    m = neml2.load_model(HELLO, "elasticity")
    with pytest.raises(FatalError, match="forward takes 1 inputs"):
        m(SR2(_strain(1)), Scalar(1.0))


def test_parameter_given_by_another_model(tmp_path):
    """Mode 3: a parameter naming a [Models] block is that model's output; the provider is
    composed in automatically and its inputs become inputs of the loaded model."""
    p = _input(
        tmp_path,
        """
        [Models]
          [youngs]
            type = LinearIsotropicHardening
            hardening_modulus = 1e5
            equivalent_plastic_strain = 'T'
            isotropic_hardening = 'E_of_T'
          []
          [m]
            type = LinearIsotropicElasticity
            coefficients = 'youngs 0.25'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
          []
        []
        """,
    )
    m = load_model(p, "m")
    assert sorted(m.input_names) == ["T", "strain"]
    assert m.output_names == ["stress"]
    names = [n for n, _ in m.named_parameters()]
    assert "youngs.hardening_modulus" in names and "m.nu" in names
    e = _strain(3)
    T = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    out, J = m.jacobian({"strain": e, "T": T})
    # E = 1e5 * T and stress is linear in E: dS/dT = S / T
    torch.testing.assert_close(J["stress"]["T"], out["stress"] / T.unsqueeze(-1))
