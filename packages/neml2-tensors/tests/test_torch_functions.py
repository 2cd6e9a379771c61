"""torch functions on typed values (``__torch_function__``) and the "did you mean"
answers to spellings this package does not have.

``torch.exp(x)`` on a ``Scalar`` / ``Tensor`` must equal ``neml2.tensors.exp(x)``,
tangents included (checked against finite differences too); a torch function with no
typed meaning must raise a ``TypeError`` that names what to use; a reference-library
spelling (``Scalar.linspace``) must raise an ``AttributeError`` naming ours. The
traced routes (``torch.compile(fullgraph=True)``, ``torch.export``) must still trace.
"""

from __future__ import annotations

import re

import pytest
import torch

import neml2.tensors as nt
from neml2.tensors import (
    MRP,
    R2,
    SR2,
    SSR4,
    WR2,
    RegionView,
    Scalar,
    Tensor,
    Vec,
    _spellings,
    _torch_function,
)

F64 = torch.float64

# (torch function, neml2.tensors function, input range)
UNARY = [
    (torch.exp, nt.exp, (-1.0, 1.0)),
    (torch.log, nt.log, (0.2, 2.0)),
    (torch.sqrt, nt.sqrt, (0.2, 2.0)),
    (torch.sin, nt.sin, (-1.0, 1.0)),
    (torch.cos, nt.cos, (-1.0, 1.0)),
    (torch.tan, nt.tan, (-1.0, 1.0)),
    (torch.tanh, nt.tanh, (-1.0, 1.0)),
    (torch.sinh, nt.sinh, (-1.0, 1.0)),
    (torch.cosh, nt.cosh, (-1.0, 1.0)),
    (torch.atan, nt.arctan, (-1.0, 1.0)),
    (torch.arctan, nt.arctan, (-1.0, 1.0)),
    (torch.acos, nt.arccos, (-0.8, 0.8)),
    (torch.arccos, nt.arccos, (-0.8, 0.8)),
    (torch.abs, nt.abs, (0.1, 1.0)),
    (torch.absolute, nt.abs, (-1.0, -0.1)),
    (torch.relu, nt.macaulay, (-1.0, 1.0)),
    (torch.nn.functional.relu, nt.macaulay, (-1.0, 1.0)),
    (torch.rsqrt, lambda x: x**-0.5, (0.2, 2.0)),
    (torch.square, lambda x: x * x, (-1.0, 1.0)),
    (torch.reciprocal, lambda x: 1.0 / x, (0.2, 2.0)),
    (torch.neg, lambda x: -x, (-1.0, 1.0)),
]
IDS = [f"{_torch_function.torch_name(f)}" for f, _, _ in UNARY]


def _scalar(lo: float, hi: float, seed: int = 0) -> Scalar:
    """A (3, 2) Scalar with one sub-batch axis, values in ``[lo, hi]``, kept off 0 for relu."""
    g = torch.Generator().manual_seed(seed)
    v = lo + (hi - lo) * torch.rand(3, 2, generator=g, dtype=F64)
    v = torch.where(v.abs() < 0.05, torch.full_like(v, 0.3), v)
    return Scalar(v, sub_batch_ndim=1)


@pytest.mark.parametrize("tf, ntf, rng", UNARY, ids=IDS)
def test_unary_matches_neml2_function_with_tangents(tf, ntf, rng):
    x = nt.seed(_scalar(*rng), "x", second_order=True)
    got, ref = tf(x), ntf(x)
    assert type(got) is Scalar and got.sub_batch_ndim == 1
    torch.testing.assert_close(got.data, ref.data, rtol=0, atol=0)
    # the torch function on the raw values agrees too
    torch.testing.assert_close(got.data, tf(x.data), rtol=1e-14, atol=1e-14)
    assert set(got.tangents) == {"x"}
    torch.testing.assert_close(got.tangents["x"], ref.tangents["x"], rtol=0, atol=0)
    for k, v in ref.tangents2.items():
        torch.testing.assert_close(got.tangents2[k], v, rtol=0, atol=0)


@pytest.mark.parametrize("tf, ntf, rng", UNARY, ids=IDS)
def test_unary_tangents_against_finite_differences(tf, ntf, rng):
    x0 = _scalar(*rng, seed=1)
    x = nt.seed(x0, "x", second_order=True)
    y = tf(x)
    h = 1e-6
    fd1 = (tf(x0.data + h) - tf(x0.data - h)) / (2 * h)
    d1 = y.tangents["x"][0].expand_as(x0.data)
    torch.testing.assert_close(d1, fd1, rtol=1e-6, atol=1e-7)
    h2 = 1e-4
    fd2 = (tf(x0.data + h2) - 2 * tf(x0.data) + tf(x0.data - h2)) / h2**2
    t2 = y.tangents2.get(("x", "x"))
    d2 = torch.zeros_like(fd2) if t2 is None else t2[0, 0].expand_as(x0.data)
    torch.testing.assert_close(d2, fd2, rtol=1e-4, atol=1e-4)


def test_unary_on_dynamic_base_tensor():
    x = nt.seed(Tensor(torch.rand(4, 2, 3, dtype=F64) + 0.5, 2), "x")
    y = torch.sqrt(x)
    ref = nt.sqrt(x)
    assert type(y) is Tensor and y.base_ndim == 2
    torch.testing.assert_close(y.data, ref.data)
    torch.testing.assert_close(y.tangents["x"], ref.tangents["x"])


def test_binary_and_selection_functions():
    a = nt.seed(_scalar(0.5, 1.5, seed=2), "a")
    b = _scalar(0.5, 1.5, seed=3)

    def same(got, ref):
        assert type(got) is type(ref)
        torch.testing.assert_close(got.data, ref.data, rtol=0, atol=0)
        if ref.tangents is not None:
            torch.testing.assert_close(got.tangents["a"], ref.tangents["a"], rtol=0, atol=0)

    same(torch.add(a, b), a + b)
    same(torch.add(a, b, alpha=2.0), a + b * 2.0)
    same(torch.sub(a, b, alpha=3), a - b * 3)
    same(torch.subtract(a, 2.0), a - 2.0)
    same(torch.mul(a, b), a * b)
    same(torch.multiply(2.0, a), 2.0 * a)
    same(torch.div(a, b), a / b)
    same(torch.true_divide(1.0, a), 1.0 / a)
    same(torch.pow(a, 3.0), a**3.0)
    same(torch.pow(a, b), a**b)
    same(torch.pow(2.0, a), 2.0**a)
    same(torch.minimum(a, b), nt.minimum(a, b))
    same(torch.maximum(a, b), nt.maximum(a, b))
    same(torch.clamp(a, 0.8, 1.2), nt.clamp(a, 0.8, 1.2))
    same(torch.clamp(a, max=1.0), nt.clamp(a, None, 1.0))
    same(torch.clip(a, min=b), nt.clamp(a, b, None))
    same(torch.clamp_min(a, 1.0), nt.clamp(a, 1.0, None))
    same(torch.clamp_max(a, 1.0), nt.clamp(a, None, 1.0))
    same(torch.where(a > b, a, b), nt.where(a > b, a, b))
    same(torch.where(a > 1.0, a, 0.0), nt.where(a > 1.0, a, 0.0))
    same(torch.stack([a, b]), nt.stack([a, b]))
    same(torch.stack([a, b], dim=1), nt.stack([a, b], 1))
    same(torch.cat([a, b]), nt.cat([a, b]))
    same(torch.concat([a, b], 0), nt.cat([a, b], 0))
    same(torch.clone(a), a)
    same(torch.detach(a), a)
    same(torch.negative(a), -a)


def test_functions_meaningful_on_every_type():
    e = nt.seed(SR2(torch.rand(5, 6, dtype=F64)), "e")
    C = SSR4.isotropic_E_nu(100.0, 0.3, dtype=F64)
    s = torch.matmul(C, e)
    ref = C @ e
    assert type(s) is SR2
    torch.testing.assert_close(s.data, ref.data)
    torch.testing.assert_close(s.tangents["e"], ref.tangents["e"])
    torch.testing.assert_close(torch.neg(e).tangents["e"], -e.tangents["e"])
    torch.testing.assert_close(torch.add(e, e).data, 2 * e.data)
    w = torch.where(e.norm() > 1.0, e, SR2.zeros(dtype=F64))
    torch.testing.assert_close(w.data, nt.where(e.norm() > 1.0, e, SR2.zeros(dtype=F64)).data)
    assert torch.stack([e, e]).shape == (2, 5, 6)


def test_raw_tensor_operators_still_reach_the_reflected_methods():
    x = nt.seed(Scalar(torch.tensor([0.5, 2.0], dtype=F64)), "x")
    t0 = torch.tensor(3.0, dtype=F64)
    p = torch.nn.Parameter(torch.tensor(3.0, dtype=F64))
    for got, ref in [
        (t0 * x, 3.0 * x),
        (p * x, 3.0 * x),
        (t0 + x, 3.0 + x),
        (t0 - x, 3.0 - x),
        (t0 / x, 3.0 / x),
        (x * t0, x * 3.0),
    ]:
        assert type(got) is Scalar
        torch.testing.assert_close(got.data, ref.data)
        torch.testing.assert_close(got.tangents["x"], ref.tangents["x"])
    assert torch.equal((t0 < x).data, (x > 3.0).data)
    assert torch.equal((t0 >= x).data, (x <= 3.0).data)
    # a raw tensor with axes has no typed layout: Python's own TypeError, as before
    with pytest.raises(TypeError, match="unsupported operand"):
        _ = torch.ones(2, dtype=F64) * x


@pytest.mark.parametrize(
    "value, pattern",
    [
        (SR2.fill(1.0, 2.0, 3.0), r"neml2\.tensors\.exp.*not the tensor exponential"),
        (R2.identity(), r"on the 9 stored components one by one"),
        (WR2.fill(0.1, 0.2, 0.3), r"neml2\.tensors\.exp_map\(w\)"),
        (Vec.fill(1.0, 2.0, 3.0), r"Scalar and Tensor values only"),
    ],
)
def test_elementwise_math_refused_on_tensor_types(value, pattern):
    with pytest.raises(TypeError, match=pattern):
        torch.exp(value)
    with pytest.raises(TypeError, match=r"x\.data"):
        torch.exp(value)


@pytest.mark.parametrize(
    "call, pattern",
    [
        (lambda: torch.sqrt(SR2.identity()), r"not the tensor square root"),
        (lambda: torch.abs(SR2.identity()), r"neml2\.tensors\.norm"),
        (lambda: torch.minimum(SR2.identity(), SR2.identity()), r"neml2\.tensors\.minimum"),
        (lambda: torch.clamp(SR2.identity(), 0.0), r"neml2\.tensors\.clamp"),
        (lambda: torch.linalg.det(SR2.identity()), r"torch\.linalg\.det.*neml2\.tensors\.det"),
        (lambda: torch.det(R2.identity()), r"neml2\.tensors\.det"),
        (lambda: torch.trace(R2.identity()), r"neml2\.tensors\.tr"),
        (lambda: torch.inverse(SSR4.identity()), r"neml2\.tensors\.inv"),
        (lambda: torch.linalg.norm(SR2.identity()), r"neml2\.tensors\.norm"),
        (lambda: torch.outer(Vec.fill(1, 2, 3), Vec.fill(1, 2, 3)), r"neml2\.tensors\.outer"),
        (lambda: torch.sum(Scalar([1.0, 2.0])), r"x\.batch\.sum\(dim\)"),
        (lambda: torch.reshape(Scalar([1.0, 2.0]), (2, 1)), r"x\.dynamic_batch\.reshape"),
        (lambda: torch.log10(Scalar(2.0)), r"neml2\.tensors\.log\(x\) / math\.log\(10\.0\)"),
        (lambda: torch.sigmoid(Scalar(2.0)), r"neml2\.tensors\.exp\(-x\)"),
        (lambda: torch.erf(Scalar(2.0)), r"TORCH_FUNCTIONS.*x\.data"),
        (lambda: torch.stack([Scalar(1.0), Scalar(2.0)], -1), r"neml2\.tensors\.stack.*dim >= 0"),
        (lambda: torch.exp(Scalar(1.0), out=torch.empty(())), r"out=.*never written in place"),
        (lambda: torch.div(Scalar(1.0), Scalar(2.0), rounding_mode="floor"), r"rounding_mode"),
        (lambda: torch.mul(torch.ones(3), Scalar(2.0)), r"wrap it first.*Scalar\(t\)"),
        (lambda: torch.where(Scalar([1.0]) > 0), r"torch\.nonzero\(cond\.data\)"),
    ],
)
def test_refusals_name_what_to_use(call, pattern):
    with pytest.raises(TypeError, match=pattern):
        call()


def test_refusal_names_the_call_and_the_typed_value():
    with pytest.raises(TypeError) as info:
        torch.erf(Scalar(torch.zeros(4), sub_batch_ndim=1))
    msg = str(info.value)
    assert msg.startswith("torch.erf(Scalar): torch.erf is not defined for typed tensors")
    assert "sub_batch=(4,)" in msg


def test_torch_functions_list_is_complete_and_real():
    assert "torch.exp" in nt.TORCH_FUNCTIONS and "torch.sqrt" in nt.TORCH_FUNCTIONS
    assert "torch.where" in nt.TORCH_FUNCTIONS and "torch.nn.functional.relu" in nt.TORCH_FUNCTIONS
    for name in nt.TORCH_FUNCTIONS:
        obj = torch
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        assert callable(obj), name
    # every elementwise function of neml2.tensors with a torch twin is reachable
    for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "abs"):
        assert f"torch.{name}" in nt.TORCH_FUNCTIONS


def _named_api(text: str) -> tuple[set[str], set[str]]:
    """The ``neml2.tensors.<name>`` and ``x.<region>.<method>`` spellings in a text."""
    funcs = set(re.findall(r"neml2\.tensors\.([A-Za-z_]\w*)", text))
    regions = set(re.findall(r"\bx\.(batch|dynamic_batch|sub_batch|base)\.(\w+)", text))
    return funcs, regions


def _check_named_api(text: str) -> None:
    funcs, regions = _named_api(text)
    for f in funcs:
        assert hasattr(nt, f), f"message names neml2.tensors.{f}, which does not exist: {text}"
    for region, method in regions:
        assert hasattr(RegionView, method), f"message names x.{region}.{method}: {text}"


def test_every_hint_names_existing_api():
    for text in _torch_function._HINTS.values():
        _check_named_api(text)
    for entry in _spellings.REFERENCE_SPELLINGS.values():
        for text in entry.values():
            _check_named_api(text)
            for cls_name, method in re.findall(r"\b(Scalar|SR2|R2|Vec|MRP|Tensor)\.(\w+)", text):
                if method == "data":
                    continue
                assert hasattr(getattr(nt, cls_name), method), f"{cls_name}.{method}: {text}"


def test_internal_paths_do_not_go_through_torch_function(monkeypatch):
    """The package applies torch to raw tensors only: its own ops never reach dispatch."""

    def forbidden(func, args, kwargs):
        raise AssertionError(f"internal call through __torch_function__: {func}")

    monkeypatch.setattr(_torch_function, "dispatch", forbidden)
    e = nt.seed(SR2(torch.rand(4, 2, 6, dtype=F64), sub_batch_ndim=1), "e", second_order=True)
    T = Scalar(torch.rand(4, dtype=F64) + 1.0)
    C = SSR4.isotropic_E_nu(nt.constant(Scalar, 100.0, like=T), 0.3)
    s = C @ e * nt.exp(-1.0 / T) + nt.sqrt(e.norm_sq() + 1.0) * e.dev()
    s = nt.where(s.norm() > 1.0, s, s * 0.5) + nt.macaulay(e.tr()) * SR2.identity(dtype=F64)
    r = MRP.from_axis_angle(Vec.fill(0.0, 0.0, 1.0, dtype=F64), Scalar(0.3, dtype=F64))
    q = nt.stack([s.rotate(r), s]).sub_batch.sum().norm() ** 1.5
    t = nt.linspace(T.dynamic_batch, (2.0 * T).dynamic_batch, 3)
    t = nt.cat([t, T.dynamic_batch.unsqueeze(0)])
    assert q.tangents2 is not None and t.shape == (4, 4)
    assert nt.jacobian_block(q, "e").shape[-1] == 6


# ----------------------------------------------------------------------- did you mean
@pytest.mark.parametrize(
    "cls, name, pattern",
    [
        (Scalar, "linspace", r"did you mean neml2\.tensors\.linspace\(start, end, steps\)"),
        (SR2, "linspace", r"did you mean neml2\.tensors\.linspace"),
        (Scalar, "dynamic_linspace", r"neml2\.tensors\.linspace\(start\.dynamic_batch"),
        (Scalar, "logspace", r"neml2\.tensors\.logspace"),
        (Scalar, "from_value", r"neml2\.tensors\.constant\(Scalar, value, like=like\)"),
        (Scalar, "arange", r"Scalar\(torch\.arange"),
        (SR2, "empty", r"SR2\.zeros\(batch_shape\)"),
        (Tensor, "empty", r"Tensor\.zeros\(batch_shape, base_shape\)"),
        (SR2, "full_like", r"SR2\.full\(value, other\.batch_shape"),
        (SR2, "rand", r"SR2\(torch\.rand\(\*batch_shape, \*SR2\.BASE_SHAPE\)\)"),
        (MRP, "rand", r"MRP\.from_axis_angle"),
        (MRP, "fill_matrix", r"MRP\.from_matrix\(R\)"),
        (Tensor, "from_typed", r"Tensor\(x\)"),
        (Scalar, "zero", r"did you mean 'zeros'"),
        (SR2, "identiy", r"did you mean 'identity'"),
    ],
)
def test_class_spellings_answer_did_you_mean(cls, name, pattern):
    with pytest.raises(AttributeError, match=pattern) as info:
        getattr(cls, name)
    assert str(info.value).startswith(f"type object '{cls.__name__}' has no attribute '{name}'")
    assert not hasattr(cls, name)


def test_suggested_factories_work():
    # what the messages propose for the reference's Scalar.linspace / from_value / SR2.rand
    t = nt.linspace(0.0, 1.0, 5)
    assert type(t) is Scalar and tuple(t.shape) == (5,)
    s = nt.linspace(SR2.zeros(dtype=F64), SR2.fill(1.0, dtype=F64), 4)
    assert type(s) is SR2 and tuple(s.shape) == (4, 6)
    like = Scalar(torch.zeros(2, dtype=F64))
    c = nt.constant(Scalar, 2.0, like=like)
    assert c.dtype == F64 and float(c) == 2.0
    assert tuple(SR2(torch.rand(3, *SR2.BASE_SHAPE)).shape) == (3, 6)


@pytest.mark.parametrize(
    "value, name, pattern",
    [
        (Scalar(1.0), "torch", r"did you mean x\.data"),
        (SR2.identity(), "batch_sizes", r"x\.batch_shape"),
        (SR2.identity(), "dynamic_batch_shape", r"x\.dynamic_shape"),
        (Scalar(1.0), "exp", r"neml2\.tensors\.exp\(x\) \(or torch\.exp\(x\)\)"),
        (SR2.identity(), "exp", r"Scalar invariant of the SR2"),
        (Scalar([1.0, 2.0]), "sum", r"x\.batch\.sum\(dim\)"),
        (Scalar([1.0, 2.0]), "reshape", r"x\.dynamic_batch\.reshape"),
        (SR2.identity(), "nrom", r"did you mean 'norm'"),
    ],
)
def test_instance_spellings_answer_did_you_mean(value, name, pattern):
    with pytest.raises(AttributeError, match=pattern) as info:
        getattr(value, name)
    assert str(info.value).startswith(f"'{type(value).__name__}' object has no attribute")


def test_missing_private_and_dunder_names_stay_plain():
    x = Scalar(1.0)
    assert getattr(x, "_nope", None) is None
    assert getattr(Scalar, "__nope__", None) is None
    with pytest.raises(AttributeError) as info:
        _ = x._nope
    assert str(info.value) == "'Scalar' object has no attribute '_nope'"
    with pytest.raises(AttributeError) as info:
        _ = x.qqqqqq
    assert "did you mean" not in str(info.value)


# ----------------------------------------------------------------------- traced routes
def _internal(e: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """Typed values made and used inside the function (raw tensors in and out)."""
    eps = SR2(e)
    temp = Scalar(T)
    q = nt.exp(-1.0 / temp) * nt.sqrt(eps.norm_sq() + 1.0)
    return nt.matmul(SSR4.isotropic_E_nu(100.0, 0.3, dtype=e.dtype), eps * q).data


def _torch_on_typed(e: SR2, T: Scalar):
    """torch functions called on typed values (tangents ride along)."""
    q = torch.exp(-1.0 / T) * torch.sqrt(e.norm_sq() + 1.0)
    r = torch.where(q > 1.2, torch.clamp(q, max=1.5), torch.tanh(q))
    return torch.stack([r, torch.log(q)]), torch.tensor(2.0, dtype=q.dtype) * r


def _inputs(b: int, tangents: bool):
    g = torch.Generator().manual_seed(b)
    e = SR2(torch.rand(b, 6, generator=g, dtype=F64))
    T = Scalar(torch.rand(b, generator=g, dtype=F64) + 1.0)
    return (nt.seed(e, "e", second_order=True) if tangents else e), T


def _same(got, ref):
    for g, r in zip(got, ref, strict=True):
        assert type(g) is type(r)
        torch.testing.assert_close(g.data, r.data)
        if r.tangents is not None:
            torch.testing.assert_close(g.tangents["e"], r.tangents["e"])
            torch.testing.assert_close(g.tangents2[("e", "e")], r.tangents2[("e", "e")])


@pytest.mark.slow
def test_compile_fullgraph_typed_internals_and_torch_exp_on_scalar():
    torch._dynamo.reset()
    e, T = _inputs(4, False)
    ci = torch.compile(_internal, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(ci(e.data, T.data), _internal(e.data, T.data))
    ct = torch.compile(_torch_on_typed, fullgraph=True, backend="aot_eager")
    for b in (3, 5):
        args = _inputs(b, True)
        _same(ct(*args), _torch_on_typed(*args))


class _TorchOnTyped(torch.nn.Module):
    def forward(self, e, T):
        return _torch_on_typed(e, T)


class _Internal(torch.nn.Module):
    def forward(self, e, T):
        return _internal(e, T)


@pytest.mark.slow
def test_export_typed_internals_and_torch_exp_on_scalar():
    batch = torch.export.Dim("batch", min=2, max=1024)
    e, T = _inputs(4, False)
    ep = torch.export.export(_Internal(), (e.data, T.data), dynamic_shapes=({0: batch}, {0: batch}))
    e7, T7 = _inputs(7, False)
    torch.testing.assert_close(ep.module()(e7.data, T7.data), _internal(e7.data, T7.data))

    args = _inputs(4, True)
    shapes = torch.export.ShapesCollection()
    for x in args:
        shapes[x.data] = {0: batch}
    ep = torch.export.export(_TorchOnTyped(), args, dynamic_shapes=shapes)
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "aten.exp.default" in ops and "aten.log.default" in ops
    a7 = _inputs(7, True)
    _same(ep.module()(*a7), _torch_on_typed(*a7))
