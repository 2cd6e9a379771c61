"""Normality: gradients of a wrapped scalar function, and their own derivatives (Hessians)."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import ComposedModel, Model, input, load_input, load_model, lookup, output
from neml2.models.solid_mechanics.plasticity import (
    AssociativeIsotropicPlasticHardening,
    AssociativePlasticFlow,
    Normality,
    PerzynaPlasticFlowRate,
    YieldFunction,
)
from neml2.tensors import SR2, FatalError, Scalar, sqrt

F64 = torch.float64
B = (3, 2)
SQ23 = math.sqrt(2.0 / 3.0)


class _Overstress(Model):
    """``O = M - X`` (test-local, not registered)."""

    fields = (
        input("mandel_stress", SR2),
        input("back_stress", SR2),
        output("overstress", SR2),
    )

    def forward(self, m, x):
        return m - x


class _VonMises(Model):
    """``s = sqrt(3/2 dev(O):dev(O))`` (test-local, not registered)."""

    fields = (input("tensor", SR2), output("invariant", Scalar))

    def forward(self, x):
        d = x.dev()
        return sqrt(1.5 * d.inner(d))


class _HalfUsed(Model):
    """``f = a^3``; ``b`` is an input f does not depend on."""

    fields = (input("a", Scalar), input("b", Scalar), output("f", Scalar))

    def forward(self, a, b):
        return a * a * a


def _rand(*shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64) * scale


def _j2_normality(sy=100.0):
    flow = ComposedModel(
        models=[
            _Overstress(back_stress="X", overstress="O"),
            _VonMises(tensor="O", invariant="effective_stress"),
            YieldFunction(yield_stress=sy, isotropic_hardening="isotropic_hardening"),
        ]
    )
    return Normality(
        model=flow,
        function="yield_function",
        **{
            "from": ["mandel_stress", "X", "isotropic_hardening"],
            "to": [
                "flow_direction",
                "kinematic_hardening_direction",
                "isotropic_hardening_direction",
            ],
        },
    )


def _j2_inputs(seed=0):
    return {
        "mandel_stress": _rand(*B, 6, seed=seed, scale=200.0),
        "X": _rand(*B, 6, seed=seed + 1, scale=20.0),
        "isotropic_hardening": _rand(*B, seed=seed + 2, scale=10.0),
    }


def _dev(x):
    tr = x[..., :3].sum(-1, keepdim=True)
    return x - torch.cat([tr.expand(*x.shape[:-1], 3) / 3, torch.zeros_like(x[..., 3:])], -1)


def _f_raw(M, X, h, sy=100.0):
    """The yield function on raw Mandel vectors (an independent formula)."""
    d = _dev(M - X)
    return SQ23 * (torch.sqrt(1.5 * (d * d).sum(-1)) - sy - h)


def test_spec_follows_the_wrapped_model():
    n = _j2_normality()
    assert n.input_names == ["mandel_stress", "X", "isotropic_hardening"]
    assert n.output_names == [
        "flow_direction",
        "kinematic_hardening_direction",
        "isotropic_hardening_direction",
    ]
    assert n.output_spec["flow_direction"] is SR2
    assert n.output_spec["isotropic_hardening_direction"] is Scalar


def test_gradient_matches_the_hand_formula():
    n = _j2_normality()
    x = _j2_inputs()
    out = n.forward(x)
    d = _dev(x["mandel_stress"] - x["X"])
    s = torch.sqrt(1.5 * (d * d).sum(-1, keepdim=True))
    NM = SQ23 * 1.5 * d / s
    torch.testing.assert_close(out["flow_direction"], NM)
    torch.testing.assert_close(out["kinematic_hardening_direction"], -NM)
    torch.testing.assert_close(
        out["isotropic_hardening_direction"], torch.full(B, -SQ23, dtype=F64)
    )


def _batched_hessian(fn, args):
    """``H[i][j]`` at ``(P, *base_i, *base_j)``: per-point second derivatives of ``fn``.

    ``fn`` maps raw ``(P, *base)`` arguments to ``(P,)`` values of independent points;
    reverse-over-reverse autograd, then the batch diagonal.
    """

    def grads(*a):
        return torch.autograd.grad(fn(*a).sum(), a, create_graph=True)

    J = torch.autograd.functional.jacobian(grads, args)
    P = args[0].shape[0]
    out = []
    for i, gi in enumerate(args):
        row = []
        for j, aj in enumerate(args):
            bi, bj = tuple(gi.shape[1:]), tuple(aj.shape[1:])
            r = J[i][j].reshape(P, math.prod(bi), P, math.prod(bj))
            row.append(torch.diagonal(r, dim1=0, dim2=2).movedim(-1, 0).reshape(P, *bi, *bj))
        out.append(row)
    return out


def test_jacobian_is_the_hessian_of_the_function():
    """Normality's own derivatives against autograd second derivatives of a raw formula."""
    n = _j2_normality()
    x = _j2_inputs(seed=5)
    _, jac = n.jacobian(x)
    args = (
        x["mandel_stress"].reshape(-1, 6),
        x["X"].reshape(-1, 6),
        x["isotropic_hardening"].reshape(-1),
    )
    H = _batched_hessian(_f_raw, args)
    outs = ["flow_direction", "kinematic_hardening_direction", "isotropic_hardening_direction"]
    ins = ["mandel_stress", "X", "isotropic_hardening"]
    for i, o in enumerate(outs):
        for j, v in enumerate(ins):
            want = H[i][j].reshape(jac[o][v].shape)
            torch.testing.assert_close(jac[o][v], want, msg=f"d{o}/d{v}")


def test_jvp_matches_autograd_of_the_forward():
    n = _j2_normality()
    x = _j2_inputs(seed=9)
    t = {k: _rand(*v.shape, seed=20 + i) for i, (k, v) in enumerate(x.items())}
    _, jvp = n.jvp(x, t)
    names = list(n.input_spec)

    def f(*xs):
        out = n.forward(dict(zip(names, xs, strict=True)))
        return tuple(out[k] for k in n.output_spec)

    _, ref = torch.autograd.functional.jvp(
        f, tuple(x[k] for k in names), tuple(t[k] for k in names)
    )
    for k, r in zip(n.output_spec, ref, strict=True):
        torch.testing.assert_close(jvp[k], r, msg=k)


def test_partial_from_and_promoted_parameter():
    """Only some inputs in 'from'; the others (a promoted yield stress) still carry derivatives."""
    flow = ComposedModel(
        models=[
            _VonMises(tensor="mandel_stress", invariant="effective_stress"),
            YieldFunction(yield_stress="sy"),
            PerzynaPlasticFlowRate(reference_stress=50.0, exponent=3.0),
        ]
    )
    n = Normality(model=flow, function="flow_rate", **{"from": ["mandel_stress"], "to": ["N"]})
    assert n.input_names == ["mandel_stress", "sy"] and n.output_names == ["N"]
    M = _rand(*B, 6, seed=3, scale=200.0)
    sy = torch.full(B, 20.0, dtype=F64) + _rand(*B, seed=4)
    _, jac = n.jacobian({"mandel_stress": M, "sy": sy})

    def rate(M, sy):
        d = _dev(M)
        f = SQ23 * (torch.sqrt(1.5 * (d * d).sum(-1)) - sy)
        return torch.clamp(f, min=0.0).div(50.0) ** 3.0

    flatM, flats = M.reshape(-1, 6), sy.reshape(-1)
    flatM.requires_grad_(True)
    (grad,) = torch.autograd.grad(rate(flatM, flats).sum(), flatM)
    torch.testing.assert_close(n.forward({"mandel_stress": M, "sy": sy})["N"], grad.reshape(*B, 6))
    H = _batched_hessian(rate, (flatM.detach(), flats))
    torch.testing.assert_close(jac["N"]["mandel_stress"], H[0][0].reshape(*B, 6, 6))
    torch.testing.assert_close(jac["N"]["sy"], H[0][1].reshape(*B, 6))


def test_structural_zero_gives_zeros():
    n = Normality(model=_HalfUsed(), function="f", **{"from": ["a", "b"], "to": ["da", "db"]})
    a, b = _rand(*B, seed=1), _rand(*B, seed=2)
    out, jac = n.jacobian({"a": a, "b": b})
    torch.testing.assert_close(out["da"], 3 * a * a)
    torch.testing.assert_close(out["db"], torch.zeros(B, dtype=F64))
    torch.testing.assert_close(jac["da"]["a"], 6 * a)
    torch.testing.assert_close(jac["db"]["a"], torch.zeros(B, dtype=F64))


def test_sub_batched_inputs():
    """Per-grain Mandel stresses (one sub-batch axis) with a per-point hardening."""
    n = _j2_normality()
    M = SR2(_rand(4, 5, 6, seed=7, scale=200.0), sub_batch_ndim=1)
    X = SR2(_rand(4, 5, 6, seed=8, scale=20.0), sub_batch_ndim=1)
    h = Scalar(_rand(4, seed=9))
    NM, NX, Nh = n(M, X, h)
    assert NM.sub_batch_ndim == 1 and tuple(NM.shape) == (4, 5, 6)
    assert tuple(Nh.shape) == (4, 5)
    d = _dev(M.data - X.data)
    s = torch.sqrt(1.5 * (d * d).sum(-1, keepdim=True))
    torch.testing.assert_close(NM.data, SQ23 * 1.5 * d / s)
    torch.testing.assert_close(NX.data, -NM.data)
    # directional derivative along M only, against autograd
    dMdir = SR2(_rand(1, 4, 5, 6, seed=10), sub_batch_ndim=1)
    *_, v_out = n(M, X, h, v={"mandel_stress": {"m": dMdir}})

    def g(m):
        return n(SR2(m, sub_batch_ndim=1), X, h)[0].data

    _, ref = torch.autograd.functional.jvp(g, (M.data,), (dMdir.data[0],))
    torch.testing.assert_close(v_out["flow_direction"]["m"].data[0], ref)


def test_inside_a_composition():
    """The flow rule of a viscoplastic model: the Jacobian of the whole against autograd."""
    n = _j2_normality(sy=50.0)
    model = ComposedModel(
        models=[
            n,
            n.model,  # the function model is also part of the composition (as in the inputs)
            PerzynaPlasticFlowRate(reference_stress=100.0, exponent=2.0),
            AssociativePlasticFlow(),
            AssociativeIsotropicPlasticHardening(),
        ]
    )
    assert set(model.input_names) == {"mandel_stress", "X", "isotropic_hardening"}
    x = _j2_inputs(seed=11)
    _, jac = model.jacobian(x)
    names = list(model.input_spec)

    def f(*xs):
        out = model.forward(dict(zip(names, xs, strict=True)))
        return tuple(out[k] for k in model.output_spec)

    ref = torch.autograd.functional.jacobian(f, tuple(x[k] for k in names))
    P = math.prod(B)
    for i, o in enumerate(model.output_spec):
        ob = tuple(model.output_spec[o].BASE_SHAPE)
        for j, v in enumerate(names):
            ib = tuple(model.input_spec[v].BASE_SHAPE)
            r = ref[i][j].reshape(P, math.prod(ob), P, math.prod(ib))
            want = torch.diagonal(r, dim1=0, dim2=2).movedim(-1, 0).reshape(*B, *ob, *ib)
            torch.testing.assert_close(jac[o][v], want, msg=f"d{o}/d{v}")


@pytest.mark.parametrize("sub", [False, True])
def test_traced_form_matches_the_hessian_chain(sub, monkeypatch):
    """The eager Hessian chain and the traced mixed-pair form give the same tangents."""
    from neml2.models.solid_mechanics.plasticity import normality as mod

    n = _j2_normality()
    if sub:
        M = SR2(_rand(4, 5, 6, seed=7, scale=200.0), sub_batch_ndim=1)
        X = SR2(_rand(4, 5, 6, seed=8, scale=20.0), sub_batch_ndim=1)
        h = Scalar(_rand(4, seed=9))
        v = {
            "mandel_stress": {"m": SR2(_rand(2, 4, 5, 6, seed=10), sub_batch_ndim=1)},
            "X": {"m": SR2(_rand(2, 1, 6, seed=11)), "x": SR2(_rand(3, 4, 5, 6, seed=12), 1)},
            "isotropic_hardening": {"e": Scalar(_rand(1, 4, seed=13))},
        }
    else:
        M = SR2(_rand(*B, 6, seed=1, scale=200.0))
        X = SR2(_rand(*B, 6, seed=2, scale=20.0))
        h = Scalar(_rand(*B, seed=3))
        v = {
            "mandel_stress": {"s": SR2(torch.eye(6, dtype=F64).reshape(6, 1, 1, 6))},
            "X": {"x1": SR2(_rand(6, *B, 6, seed=4)), "x2": SR2(_rand(6, 1, 1, 6, seed=5))},
            "isotropic_hardening": {"e": Scalar(_rand(1, *B, seed=6))},
        }
    *chain, v_chain = n(M, X, h, v=v)
    monkeypatch.setattr(mod, "_tracing", lambda: True)
    *pairs, v_pairs = n(M, X, h, v=v)
    for a, b in zip(chain, pairs, strict=True):
        torch.testing.assert_close(a.data, b.data, rtol=1e-13, atol=1e-13)
    assert set(v_chain) == set(v_pairs)
    for o in v_chain:
        assert set(v_chain[o]) == set(v_pairs[o]), o
        for leaf in v_chain[o]:
            a, b = torch.broadcast_tensors(v_chain[o][leaf].data, v_pairs[o][leaf].data)
            torch.testing.assert_close(a, b, rtol=1e-11, atol=1e-11, msg=f"{o}/{leaf}")


def test_second_order_request_is_refused():
    n = _j2_normality()
    x = [SR2(_rand(6, seed=1)), SR2(_rand(6, seed=2)), Scalar(_rand((), seed=3))]
    with pytest.raises(FatalError, match="third derivatives"):
        n(*x, v={"mandel_stress": {"a": SR2(_rand(1, 6))}}, v2={"mandel_stress": {}})


# ---------------------------------------------------------------- HIT


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


NORMALITY = """\
[Models]
  [yield]
    type = YieldFunction
    yield_stress = 'sy'
    isotropic_hardening = 'isotropic_hardening'
  []
  [rate]
    type = PerzynaPlasticFlowRate
    reference_stress = 150
    exponent = 3.5
  []
  [flow]
    type = ComposedModel
    models = 'yield rate'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = '{function}'
    from = '{src}'
    to = '{dst}'
  []
[]
"""


@pytest.mark.parametrize(
    ("function", "src", "dst", "pattern"),
    [
        ("flow_rat", "effective_stress", "N", r":19:5: 'flow_rat' is not an output"),
        ("flow_rate", "stress", "N", r":20:5: 'stress' is not an input"),
        ("flow_rate", "effective_stress sy", "N", r":21:5: 'from' and 'to' must pair"),
        ("flow_rate", "sy sy", "N M", r":20:5: 'from' repeats"),
        ("flow_rate", "sy", "effective_stress", r":21:5: output 'effective_stress' is also"),
    ],
)
def test_construction_errors_name_the_option(tmp_path, function, src, dst, pattern):
    p = _write(tmp_path, NORMALITY.format(function=function, src=src, dst=dst))
    with pytest.raises(FatalError, match=pattern):
        load_model(p, "normality")


UNIT = """\
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'normality'
    input_Scalar_names = 'effective_stress isotropic_hardening sy'
    input_Scalar_values = '300 20 100'
    output_Scalar_names = 'Ns Nh'
    output_Scalar_values = '{Ns} {Nh}'
  []
[]
"""


@pytest.mark.needs_sibling  # neml2.drivers: run by the integration session
def test_model_unit_test_driver(tmp_path):
    """The conformance harness' check: values, and first derivatives against autograd."""
    pytest.importorskip("neml2.drivers")
    f = SQ23 * (300 - 100 - 20)
    Ns = 3.5 * (f / 150) ** 2.5 * SQ23 / 150
    text = UNIT.format(Ns=repr(Ns), Nh=repr(-Ns)) + NORMALITY.format(
        function="flow_rate", src="effective_stress isotropic_hardening", dst="Ns Nh"
    )
    ctx = load_input(_write(tmp_path, text))
    driver = ctx.object("Drivers", "unit")
    assert driver.run(), driver.failures


J2_KINHARDEN = """\
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'normality'
    input_SR2_names = 'mandel_stress X'
    input_SR2_values = 'M X'
    input_Scalar_names = 'isotropic_hardening'
    input_Scalar_values = '12'
    check_values = false
  []
[]
[Tensors]
  [M]
    type = Python
    expr = 'SR2.fill(150.0, -40.0, 10.0, 30.0, -25.0, 60.0)'
  []
  [X]
    type = Python
    expr = 'SR2.fill(-10.0, 15.0, 5.0, -7.0, 15.0, 20.0)'
  []
[]
[Models]
  [overstress]
    type = SR2LinearCombination
    to = 'O'
    from = 'mandel_stress X'
    weights = '1 -1'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'O'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 10
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'overstress vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress X isotropic_hardening'
    to = 'flow_direction kinematic_hardening_direction isotropic_hardening_direction'
  []
[]
"""


@pytest.mark.needs_sibling  # neml2.drivers: run by the integration session
def test_model_unit_test_driver_j2(tmp_path):
    """The regression inputs' J2 set-up (needs the common SR2 models)."""
    pytest.importorskip("neml2.drivers")
    missing = [t for t in ("SR2LinearCombination", "SR2Invariant") if lookup(t) is None]
    if missing:
        pytest.skip(f"not registered yet: {', '.join(missing)}")
    ctx = load_input(_write(tmp_path, J2_KINHARDEN))
    driver = ctx.object("Drivers", "unit")
    assert driver.run(), driver.failures
    assert isinstance(ctx.model("normality"), Normality)
