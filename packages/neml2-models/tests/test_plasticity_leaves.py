"""Plasticity leaves: equations against hand formulas, Jacobians against autograd, errors."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch
from _op_count import CountOps

from neml2.models import load_model
from neml2.models.solid_mechanics.plasticity import (
    AssociativeIsotropicPlasticHardening,
    AssociativeKinematicPlasticHardening,
    AssociativePlasticFlow,
    ChabochePlasticHardening,
    FredrickArmstrongPlasticHardening,
    IsotropicMandelStress,
    LinearIsotropicHardening,
    LinearKinematicHardening,
    PerzynaPlasticFlowRate,
    PowerLawIsotropicHardeningStaticRecovery,
    PowerLawKinematicHardeningStaticRecovery,
    SlopeSaturationVoceIsotropicHardening,
    VoceIsotropicHardening,
    YieldFunction,
)
from neml2.tensors import SR2, FatalError, Scalar

B = (4, 3)
F64 = torch.float64


def _rand(*shape, seed=0, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _check_jacobian(model, inputs: dict[str, torch.Tensor]):
    """Every block of ``model.jacobian`` against reverse-mode autograd of the forward."""
    names = list(model.input_spec)
    _, jac = model.jacobian(inputs)

    def f(*xs):
        out = model.forward(dict(zip(names, xs, strict=True)))
        return tuple(out[n] for n in model.output_spec)

    ref = torch.autograd.functional.jacobian(f, tuple(inputs[n] for n in names))
    P = math.prod(B)
    for i, o in enumerate(model.output_spec):
        ob = tuple(model.output_spec[o].BASE_SHAPE)
        for j, n in enumerate(names):
            ib = tuple(model.input_spec[n].BASE_SHAPE)
            # (*B, *ob, *B, *ib): keep the batch diagonal (points are independent)
            r = ref[i][j].reshape(P, math.prod(ob), P, math.prod(ib))
            d = torch.diagonal(r, dim1=0, dim2=2).movedim(-1, 0).reshape(*B, *ob, *ib)
            torch.testing.assert_close(jac[o][n], d, msg=f"d{o}/d{n}")


# ---------------------------------------------------------------- equations


def test_mandel_stress_is_the_cauchy_stress():
    m = IsotropicMandelStress()
    S = _rand(*B, 6)
    out = m.forward({"cauchy_stress": S})
    torch.testing.assert_close(out["mandel_stress"], S)
    assert out["mandel_stress"].data_ptr() != S.data_ptr()
    _check_jacobian(m, {"cauchy_stress": S})


def test_yield_function_with_and_without_hardening():
    s, h = _rand(*B, seed=1, scale=100, shift=500), _rand(*B, seed=2, scale=10, shift=50)
    m = YieldFunction(yield_stress=250.0, isotropic_hardening="isotropic_hardening")
    assert m.input_names == ["effective_stress", "isotropic_hardening"]
    out = m.forward({"effective_stress": s, "isotropic_hardening": h})
    torch.testing.assert_close(out["yield_function"], math.sqrt(2 / 3) * (s - 250.0 - h))
    _check_jacobian(m, {"effective_stress": s, "isotropic_hardening": h})

    m0 = YieldFunction(yield_stress=250.0)
    assert m0.input_names == ["effective_stress"]
    out = m0.forward({"effective_stress": s})
    torch.testing.assert_close(out["yield_function"], math.sqrt(2 / 3) * (s - 250.0))


def test_yield_function_renamed_variables_and_promoted_yield_stress():
    m = YieldFunction(
        yield_stress="sy", effective_stress="s", yield_function="f", isotropic_hardening="k"
    )
    assert m.input_names == ["s", "k", "sy"] and m.output_names == ["f"]
    s, k, sy = _rand(*B, seed=3), _rand(*B, seed=4), _rand(*B, seed=5)
    out = m.forward({"s": s, "k": k, "sy": sy})
    torch.testing.assert_close(out["f"], math.sqrt(2 / 3) * (s - sy - k))
    _check_jacobian(m, {"s": s, "k": k, "sy": sy})


def test_associative_flow_rules():
    g = _rand(*B, seed=6).abs()
    N = _rand(*B, 6, seed=7)
    Nh = _rand(*B, seed=8)
    m = AssociativePlasticFlow()
    torch.testing.assert_close(
        m.forward({"flow_rate": g, "flow_direction": N})["plastic_strain_rate"], g[..., None] * N
    )
    _check_jacobian(m, {"flow_rate": g, "flow_direction": N})
    m = AssociativeKinematicPlasticHardening()
    out = m.forward({"flow_rate": g, "kinematic_hardening_direction": N})
    torch.testing.assert_close(out["kinematic_plastic_strain_rate"], -g[..., None] * N)
    _check_jacobian(m, {"flow_rate": g, "kinematic_hardening_direction": N})
    m = AssociativeIsotropicPlasticHardening()
    out = m.forward({"flow_rate": g, "isotropic_hardening_direction": Nh})
    torch.testing.assert_close(out["equivalent_plastic_strain_rate"], -g * Nh)
    _check_jacobian(m, {"flow_rate": g, "isotropic_hardening_direction": Nh})


def test_kinematic_hardening_rate_negates_the_flow_rate_not_the_sr2():
    """``-(γ̇ N_X)`` as ``(-γ̇) N_X``: the same bits, and on py-eager the negation touches
    only Scalar-sized values (the rate and its tangents), never an SR2 or its tangents."""
    g = _rand(*B, seed=6).abs()
    N = _rand(*B, 6, seed=7)
    m = AssociativeKinematicPlasticHardening()
    x = {"flow_rate": g, "kinematic_hardening_direction": N}
    with CountOps() as ops:
        out, _ = m.jacobian(x)
    torch.testing.assert_close(
        out["kinematic_plastic_strain_rate"], -(g[..., None] * N), rtol=0, atol=0
    )
    assert ops["neg"] >= 1, ops.counts
    assert all(6 not in shape for shape in ops.shapes["neg"]), ops.shapes["neg"]


def test_isotropic_hardening_laws():
    ep = _rand(*B, seed=9).abs() * 0.1
    m = LinearIsotropicHardening(hardening_modulus=1000.0)
    torch.testing.assert_close(
        m.forward({"equivalent_plastic_strain": ep})["isotropic_hardening"], 1000.0 * ep
    )
    _check_jacobian(m, {"equivalent_plastic_strain": ep})
    m = VoceIsotropicHardening(saturated_hardening=100.0, saturation_rate=1.1)
    torch.testing.assert_close(
        m.forward({"equivalent_plastic_strain": ep})["isotropic_hardening"],
        100.0 * (1.0 - torch.exp(-1.1 * ep)),
    )
    _check_jacobian(m, {"equivalent_plastic_strain": ep})


def test_voce_with_batched_parameters_and_trainable_gradients():
    R = torch.tensor([50.0, 100.0, 150.0], dtype=F64)
    m = VoceIsotropicHardening(saturated_hardening=Scalar(R), saturation_rate=2.0)
    ep = _rand(*B, seed=10).abs()
    h = m.forward({"equivalent_plastic_strain": ep})["isotropic_hardening"]
    torch.testing.assert_close(h.detach(), R * (1.0 - torch.exp(-2.0 * ep)))
    h.sum().backward()
    torch.testing.assert_close(m.saturated_hardening.grad, (1.0 - torch.exp(-2.0 * ep)).sum(0))


def test_linear_kinematic_hardening():
    Kp = _rand(*B, 6, seed=11)
    m = LinearKinematicHardening(hardening_modulus=1000.0, back_stress="X")
    assert m.output_names == ["X"]
    torch.testing.assert_close(m.forward({"kinematic_plastic_strain": Kp})["X"], 1000.0 * Kp)
    _check_jacobian(m, {"kinematic_plastic_strain": Kp})


def _dev(x):
    tr = x[..., :3].sum(-1, keepdim=True)
    return x - torch.cat([tr.expand(*x.shape[:-1], 3) / 3, torch.zeros_like(x[..., 3:])], -1)


def test_frederick_armstrong_and_chaboche():
    g = _rand(*B, seed=12).abs() * 0.01
    N = _rand(*B, 6, seed=13)
    X = _rand(*B, 6, seed=14, scale=10)
    ins = {"flow_rate": g, "flow_direction": N, "back_stress": X}
    fa = FredrickArmstrongPlasticHardening(C=1000.0, g=10.0)
    assert fa.output_names == ["back_stress_rate"]
    want = g[..., None] * (2 / 3 * 1000.0 * N - 10.0 * X)
    torch.testing.assert_close(fa.forward(ins)["back_stress_rate"], want)
    _check_jacobian(fa, ins)

    ch = ChabochePlasticHardening(C=1000.0, g=10.0, A=1e-3, a=2.1, back_stress="X1")
    assert ch.input_names == ["flow_rate", "flow_direction", "X1"]
    assert ch.output_names == ["X1_rate"]
    ins = {"flow_rate": g, "flow_direction": N, "X1": X}
    s = torch.sqrt((X * X).sum(-1) + torch.finfo(X.dtype).eps)
    want = want - 1e-3 * (s ** (2.1 - 1.0))[..., None] * X
    torch.testing.assert_close(ch.forward(ins)["X1_rate"], want)
    _check_jacobian(ch, ins)
    assert [n for n, _ in ch.named_parameters()] == ["C", "g", "A", "a"]

    named = ChabochePlasticHardening(C=1.0, g=1.0, A=1.0, a=2.0, back_stress_rate="Xdot")
    assert named.output_names == ["Xdot"]


def _hardening_inputs(second_order=False):
    """Flow rate, direction and back stress on shared seeds: ``u`` (per point) reaches all
    three, ``b`` (one value for every point: tangents ``(6, 1, 6)``) only the direction,
    ``s`` only the flow rate."""
    from neml2.tensors import seed

    u = seed(SR2(_rand(5, 6, seed=40)), "u", second_order=second_order)
    b = seed(SR2(_rand(6, seed=41)), "b", second_order=second_order)
    s = seed(Scalar(_rand(5, seed=42).abs()), "s", second_order=second_order)
    N = u * 0.3 + b
    X = u * 20.0 + SR2(_rand(5, 6, seed=43, scale=5.0))
    g = u.norm() * 0.01 + s * 0.02
    return g, N, X


@pytest.mark.parametrize(
    "model",
    [
        FredrickArmstrongPlasticHardening(C=1000.0, g=10.0),
        ChabochePlasticHardening(C=1000.0, g=10.0, A=1e-3, a=2.1),
        ChabochePlasticHardening(
            C=_rand(5, seed=44).abs() * 100 + 500, g=10.0, A=1e-3, a=_rand(5, seed=45).abs() + 1.5
        ),
    ],
    ids=["frederick-armstrong", "chaboche", "chaboche-per-point-parameters"],
)
def test_back_stress_rate_closed_form_tangents_match_the_typed_algebra(model, monkeypatch):
    """Eagerly the back-stress rates write their first-order tangents in closed form
    (``kinematic_hardening._rate_closed_form``): the same value bit for bit and the same
    tangents (to round-off) as the typed algebra, on per-point and shared seeds."""
    from neml2.models.solid_mechanics.plasticity import kinematic_hardening as kh

    used = []
    closed = kh._rate_closed_form
    monkeypatch.setattr(kh, "_rate_closed_form", lambda *a, **k: used.append(1) or closed(*a, **k))
    fast = model(*_hardening_inputs())
    assert used and fast.tangents is not None
    monkeypatch.setattr(kh, "_rate_closed_form", lambda *a, **k: None)
    slow = model(*_hardening_inputs())
    assert torch.equal(fast.data, slow.data)
    assert set(fast.tangents) == set(slow.tangents) == {"u", "b", "s"}
    for k, t in slow.tangents.items():
        assert fast.tangents[k].shape == t.shape, k
        torch.testing.assert_close(fast.tangents[k], t, rtol=1e-12, atol=1e-12, msg=k)


def test_back_stress_rate_closed_form_leaves_what_it_does_not_cover_to_the_typed_algebra():
    """Second-order tangents, a parameter with tangents and inputs at different batch
    shapes take the typed algebra (None from the closed form)."""
    from neml2.models.solid_mechanics.plasticity import kinematic_hardening as kh
    from neml2.tensors import seed

    ch = ChabochePlasticHardening(C=1000.0, g=10.0, A=1e-3, a=2.1)
    g, N, X = _hardening_inputs(second_order=True)
    assert kh._rate_closed_form(ch, g, N, X, recovery=True) is None
    assert ch(g, N, X).tangents2 is not None
    g, N, X = _hardening_inputs()
    assert kh._rate_closed_form(ch, g, N, X, recovery=True) is not None
    g1 = seed(Scalar(_rand(1, seed=46).abs()), "s")  # one point against five
    assert kh._rate_closed_form(ch, g1, N, X, recovery=True) is None
    assert ch(g1, N, X).data.shape == (5, 6)
    assert kh._rate_closed_form(ch, g.primal(), N.primal(), X.primal(), recovery=True) is None

    class Seeded:  # a parameter given with tangents (a promoted, seeded parameter)
        def param(self, name):
            p = ch.param(name)
            return seed(p, name) if name == "C" else p

    assert kh._rate_closed_form(Seeded(), g, N, X, recovery=True) is None


def test_perzyna_flow_rate():
    f = _rand(*B, seed=15, scale=50.0, shift=10.0)
    m = PerzynaPlasticFlowRate(reference_stress=150.0, exponent=6.0)
    got = m.forward({"yield_function": f})["flow_rate"]
    torch.testing.assert_close(got, torch.clamp(f, min=0.0).div(150.0) ** 6.0)
    assert (f < 0).any() and (f > 0).any()
    _check_jacobian(m, {"yield_function": f})
    # exactly at and below the yield surface: zero rate with finite (zero) derivatives
    f0 = torch.tensor([0.0, -5.0, 5.0], dtype=F64)
    out, jac = m.jacobian({"yield_function": f0})
    assert torch.isfinite(jac["flow_rate"]["yield_function"]).all()
    torch.testing.assert_close(out["flow_rate"][:2], torch.zeros(2, dtype=F64))
    torch.testing.assert_close(
        jac["flow_rate"]["yield_function"],
        torch.tensor([0.0, 0.0, 6.0 * 5.0**5 / 150.0**6], dtype=F64),
    )


def test_perzyna_first_derivatives_take_one_power():
    """Constant parameters: the rate's derivative comes from the rate (n rate / f), so a
    call with tangents raises to a power once; the generic chain did it twice."""
    f = _rand(*B, seed=18, scale=50.0, shift=10.0)
    m = PerzynaPlasticFlowRate(reference_stress=150.0, exponent=6.0)
    with CountOps() as ops:
        m.jacobian({"yield_function": f})
    assert ops["pow"] == 1, ops.counts


def test_perzyna_closed_form_with_per_point_parameters():
    """A reference stress per point (not one value) still takes the closed form where it
    broadcasts into the yield function's shape: one power, the rate and derivative of
    the formula."""
    f = _rand(*B, seed=19, scale=50.0, shift=10.0)
    eta = _rand(*B, seed=20).abs() * 100.0 + 50.0
    m = PerzynaPlasticFlowRate(reference_stress=150.0, exponent=4.0)
    m.set_parameter("reference_stress", eta)
    with CountOps() as ops:
        out, jac = m.jacobian({"yield_function": f})
    assert ops["pow"] == 1, ops.counts
    fp = torch.clamp(f, min=0.0)
    torch.testing.assert_close(out["flow_rate"], (fp / eta) ** 4.0)
    torch.testing.assert_close(jac["flow_rate"]["yield_function"], 4.0 * fp**3 / eta**4)


def test_perzyna_promoted_exponent_derivative():
    m = PerzynaPlasticFlowRate(reference_stress=100.0, exponent="n")
    f = _rand(*B, seed=16).abs() * 50 + 1.0
    n = _rand(*B, seed=17).abs() + 1.0
    torch.testing.assert_close(
        m.forward({"yield_function": f, "n": n})["flow_rate"], (f / 100.0) ** n
    )
    _check_jacobian(m, {"yield_function": f, "n": n})


def test_slope_saturation_voce():
    g = _rand(*B, seed=30).abs()
    h = _rand(*B, seed=31, scale=20.0)
    m = SlopeSaturationVoceIsotropicHardening(
        saturated_hardening=-80.0, initial_hardening_rate=500.0
    )
    assert m.output_names == ["isotropic_hardening_rate"]
    ins = {"flow_rate": g, "isotropic_hardening": h}
    want = -1.0 * 500.0 * (1.0 - h / -80.0) * g
    torch.testing.assert_close(m.forward(ins)["isotropic_hardening_rate"], want)
    _check_jacobian(m, ins)
    m = SlopeSaturationVoceIsotropicHardening(
        saturated_hardening=80.0, initial_hardening_rate="theta0", isotropic_hardening="k"
    )
    assert m.input_names == ["flow_rate", "k", "theta0"] and m.output_names == ["k_rate"]
    ins = {"flow_rate": g, "k": h, "theta0": h.abs() + 1.0}
    _check_jacobian(m, ins)


def test_power_law_static_recovery():
    h = _rand(*B, seed=32, scale=20.0)
    m = PowerLawIsotropicHardeningStaticRecovery(tau=30.0, n=2.5)
    assert m.output_names == ["isotropic_hardening_rate"]
    got = m.forward({"isotropic_hardening": h})["isotropic_hardening_rate"]
    torch.testing.assert_close(got, -((h.abs() / 30.0) ** 1.5) * h / 30.0)
    _check_jacobian(m, {"isotropic_hardening": h})
    zero = torch.zeros(2, dtype=F64)
    out, jac = m.jacobian({"isotropic_hardening": zero})
    assert torch.isfinite(jac["isotropic_hardening_rate"]["isotropic_hardening"]).all()
    torch.testing.assert_close(out["isotropic_hardening_rate"], zero)

    X = _rand(*B, 6, seed=33, scale=50.0)
    m = PowerLawKinematicHardeningStaticRecovery(tau=40.0, n=3.0, back_stress="X2")
    assert m.output_names == ["X2_rate"]
    s = torch.sqrt((X * X).sum(-1, keepdim=True) + torch.finfo(F64).eps)
    torch.testing.assert_close(m.forward({"X2": X})["X2_rate"], -((s / 40.0) ** 2.0) * X / 40.0)
    _check_jacobian(m, {"X2": X})
    m = PowerLawKinematicHardeningStaticRecovery(tau=1.0, n=2.0, back_stress_rate="Xr")
    assert m.output_names == ["Xr"]


def test_sub_batched_hardening():
    """Per-grain inputs (one sub-batch axis) broadcast against per-grain parameters."""
    ep = Scalar(_rand(5, 3, seed=18).abs(), sub_batch_ndim=1)
    R = Scalar(torch.tensor([10.0, 20.0, 30.0], dtype=F64), sub_batch_ndim=1)
    m = VoceIsotropicHardening(saturated_hardening=R, saturation_rate=3.0)
    h = m(ep)
    assert h.sub_batch_ndim == 1 and tuple(h.shape) == (5, 3)
    torch.testing.assert_close(h.data, R.data * (1.0 - torch.exp(-3.0 * ep.data)))
    N = SR2(_rand(5, 3, 6, seed=19), sub_batch_ndim=1)
    Ep = AssociativePlasticFlow()(ep, N)
    assert Ep.sub_batch_ndim == 1
    torch.testing.assert_close(Ep.data, ep.data[..., None] * N.data)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("block", "pattern"),
    [
        (
            "type = YieldFunction\n    yield_stress = 10\n    isotropic_hardening = 'a b'",
            r":5:5: .*takes one variable name",
        ),
        ("type = YieldFunction", r"missing the required option 'yield_stress'"),
        (
            "type = PerzynaPlasticFlowRate\n    reference_stress = 1\n    exponant = 2",
            r":5:5: unknown option 'exponant'.*accepted: .*exponent",
        ),
        (
            "type = VoceIsotropicHardening\n    saturated_hardening = '1 2'\n"
            "    saturation_rate = 1",
            r":4:5: option 'saturated_hardening' = '1 2' is not a valid Scalar",
        ),
        ("type = ChabochePlasticHardening\n    C = 1\n    g = 1\n    A = 1", r"'a'"),
    ],
)
def test_construction_errors_name_the_option(tmp_path, block, pattern):
    p = _write(tmp_path, f"[Models]\n  [m]\n    {block}\n  []\n[]\n")
    with pytest.raises(FatalError, match=pattern) as e:
        load_model(p, "m")
    assert str(e.value).startswith(str(p))
