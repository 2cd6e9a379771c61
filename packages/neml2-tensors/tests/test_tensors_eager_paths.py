"""Eager fast paths of the SR2 algebra against the forms traced graphs use.

``dot_raw`` (``inner``) contracts large broadcast products with ``einsum`` eagerly and
``dev_raw`` / ``vol_raw`` (and ``SR2.isotropic_map`` with plain coefficients) scale the
trace by a cached mask; under torch.export /
torch.compile the elementwise forms run instead. Both must give the same values and
the same first- and second-order tangents (to round-off), and the eager forms must
match finite differences of the primal.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from neml2.tensors import SR2, Scalar, seed, sqrt
from neml2.tensors import _sr2 as sr2_mod
from neml2.tensors import _vec as vec_mod

F64 = torch.float64


def _rand(*shape, seed_=0):
    g = torch.Generator().manual_seed(seed_)
    return torch.randn(*shape, generator=g, dtype=F64)


def _von_mises(x: SR2) -> Scalar:
    s = x.dev()
    return sqrt(s.inner(s) + 1e-12) * math.sqrt(1.5)


def _second_order_case(fn):
    """``fn`` of two second-order seeded SR2 (one per-point, one shared) -> tangents."""
    a = seed(SR2(_rand(7, 6, seed_=1)), "a", second_order=True)
    b = seed(SR2(_rand(6, seed_=2)), "b", second_order=True)
    out = fn(a, b)
    return out.data, dict(out.tangents), dict(out.tangents2)


CASES = {
    "inner": lambda a, b: a.inner(b) * a.tr(),
    "dev": lambda a, b: a.dev() * b.inner(a),
    "vol": lambda a, b: (a.vol() + b.vol()).norm_sq(),
    "von_mises": lambda a, b: _von_mises(a - b),
    # plain coefficients: one mapping of A and each tangent eagerly; a coefficient with
    # tangents (b.tr()) or a batch takes the vol/dev sum
    "isotropic_map": lambda a, b: a.isotropic_map(3.0, Scalar(torch.tensor(0.7, dtype=F64))).inner(
        b
    ),
    "isotropic_map_dual": lambda a, b: a.isotropic_map(b.tr(), 2.0).norm_sq(),
    "isotropic_map_batched": lambda a, b: a.isotropic_map(Scalar(_rand(7, seed_=3)), 0.5).inner(b),
}


@pytest.mark.parametrize("name", list(CASES))
def test_eager_paths_match_the_traced_forms(name, monkeypatch):
    fn = CASES[name]
    monkeypatch.setattr(vec_mod, "_EINSUM_MIN", 0)  # einsum for every contraction
    fast = _second_order_case(fn)
    monkeypatch.setattr(vec_mod, "_tracing", lambda: True)
    monkeypatch.setattr(sr2_mod, "_tracing", lambda: True)
    slow = _second_order_case(fn)
    torch.testing.assert_close(fast[0], slow[0], rtol=1e-13, atol=1e-13)
    for i in (1, 2):
        assert set(fast[i]) == set(slow[i])
        for k in fast[i]:
            f, s = torch.broadcast_tensors(fast[i][k], slow[i][k])
            torch.testing.assert_close(f, s, rtol=1e-12, atol=1e-12, msg=f"{name} {k}")


def test_einsum_threshold_is_crossed_by_a_second_order_pair():
    """A realistic second-order pair (12 x 12 seeds, 200 points) takes the einsum path."""
    a = _rand(12, 1, 200, 6, seed_=3)
    b = _rand(1, 12, 200, 6, seed_=4)
    assert vec_mod._broadcast_numel(a, b) == 12 * 12 * 200 * 6 >= vec_mod._EINSUM_MIN
    torch.testing.assert_close(vec_mod.dot_raw(a, b), (a * b).sum(-1))


@pytest.mark.parametrize(
    ("seed_shape", "value_shape"),
    [((6, 1, 6), (1000, 6)), ((13, 1, 1, 6), (4, 50, 6)), ((7, 3), ()), ((6, 1, 3), (1, 3))],
)
def test_a_seed_against_batched_values_is_one_matrix_product(seed_shape, value_shape):
    """A tangent that is the same at every point, (K, 1, ..., 1, n), dotted with a
    batched value (*batch, n): one (K, n) @ (n, points) product, in either order, the
    values of the elementwise form and no einsum (75-155 us per call at 1e3 points, the
    slowest operation of the eager J2 step)."""
    t = _rand(*seed_shape, seed_=6)
    p = _rand(*(value_shape[:-1] if value_shape else ()), seed_shape[-1], seed_=7)
    want = (t * p).sum(-1)
    with _RecordOps() as rec:
        ab, ba = vec_mod.dot_raw(t, p), vec_mod.dot_raw(p, t)
    assert ab.shape == ba.shape == want.shape
    torch.testing.assert_close(ab, want, rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(ba, want, rtol=1e-14, atol=1e-14)
    assert rec.ops, "nothing was recorded"
    assert not {"bmm", "einsum"} & set(rec.ops), rec.ops


@pytest.mark.parametrize("traced", [False, True])
def test_von_mises_closed_form_matches_the_generic_chain(traced, monkeypatch):
    """``_sr2.von_mises``: first-order tangents in closed form (``1.5 S : dA / vm``), on a
    sub-batched tensor with a per-point leaf and a shared seed (batch-broadcast
    tangent), eager and traced; second-order tangents take the generic chain."""
    if traced:
        monkeypatch.setattr(vec_mod, "_tracing", lambda: True)
        monkeypatch.setattr(sr2_mod, "_tracing", lambda: True)
    a = seed(SR2(_rand(5, 3, 6, seed_=8), sub_batch_ndim=1), "a")
    b = seed(SR2(_rand(6, seed_=9)), "b")
    x = a * 2.0 - b
    counts = []
    for fn in (lambda: sr2_mod.von_mises(x, 1e-12), lambda: _von_mises(x)):
        with _RecordOps() as rec:
            fn()
        counts.append(len(rec.ops))
    assert counts[0] < 0.6 * counts[1], counts  # the point of the closed form
    got, want = sr2_mod.von_mises(x, 1e-12), _von_mises(x)
    assert got.sub_batch_ndim == want.sub_batch_ndim == 1 and got.tangents2 is None
    torch.testing.assert_close(got.data, want.data, rtol=1e-14, atol=1e-14)
    assert set(got.tangents) == set(want.tangents) == {"a", "b"}
    for k in got.tangents:
        g, w = torch.broadcast_tensors(got.tangents[k], want.tangents[k])
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12, msg=k)
    plain = sr2_mod.von_mises(x.primal(), 1e-12)
    assert plain.tangents is None
    torch.testing.assert_close(plain.data, want.data, rtol=1e-14, atol=1e-14)
    x2 = seed(SR2(_rand(4, 6, seed_=10)), "c", second_order=True)
    got2, want2 = sr2_mod.von_mises(x2, 1e-12), _von_mises(x2)
    torch.testing.assert_close(got2.tangents2[("c", "c")], want2.tangents2[("c", "c")])


def test_von_mises_tangents_against_finite_differences(monkeypatch):
    """First and second derivatives of the eager von Mises (central differences)."""
    monkeypatch.setattr(vec_mod, "_EINSUM_MIN", 0)
    x0 = _rand(6, seed_=5) * 3.0
    x = seed(SR2(x0), "x", second_order=True)
    vm = _von_mises(x)
    g = vm.tangents["x"].reshape(6)
    H = vm.tangents2[("x", "x")].reshape(6, 6)
    h = 1e-5
    eye = torch.eye(6, dtype=F64)

    def f(v):
        return _von_mises(SR2(v)).data

    g_fd = torch.stack([(f(x0 + h * eye[i]) - f(x0 - h * eye[i])) / (2 * h) for i in range(6)])
    torch.testing.assert_close(g, g_fd, rtol=1e-7, atol=1e-8)

    def grad(v):
        d = seed(SR2(v), "x")
        return _von_mises(d).tangents["x"].reshape(6)

    H_fd = torch.stack(
        [(grad(x0 + h * eye[i]) - grad(x0 - h * eye[i])) / (2 * h) for i in range(6)]
    )
    torch.testing.assert_close(H, H_fd, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(H, H.T, rtol=1e-12, atol=1e-12)


def test_volumetric_masks_are_cached_per_dtype():
    x64 = SR2(_rand(3, 6, seed_=6))
    x32 = SR2(_rand(3, 6, seed_=6).to(torch.float32))
    d64, d32 = x64.dev(), x32.dev()
    assert d64.dtype == F64 and d32.dtype == torch.float32
    torch.testing.assert_close(d32.data.to(F64), d64.data, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(d64.tr().data, torch.zeros(3, dtype=F64), rtol=0, atol=1e-14)
    torch.testing.assert_close((x64.dev() + x64.vol()).data, x64.data, rtol=1e-14, atol=1e-14)


class _RecordOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.dev(),
        lambda x: x.vol(),
        lambda x: x.isotropic_map(3.0, Scalar(torch.tensor(0.7, dtype=F64))),
    ],
    ids=["dev", "vol", "isotropic_map"],
)
def test_eager_volumetric_split_calls_no_blas(fn):
    """The eager dev / vol / isotropic map of a value and its tangents are pointwise: a
    BLAS product runs on every thread even for 1e3 points and slows to a crawl when
    another process holds a core (see ``vol_raw``)."""
    x = seed(SR2(_rand(1000, 6, seed_=7)), "x")
    with _RecordOps() as rec:
        out = fn(x)
    assert rec.ops, "nothing was recorded"
    blas = {"mm", "bmm", "addmm", "baddbmm", "matmul", "mv", "einsum"}
    assert not blas & set(rec.ops), rec.ops
    assert set(out.tangents) == {"x"}


# ----------------------------------------------------------- the installed eager kernels
@pytest.fixture
def kernel_calls():
    """Stand-in kernels for every name (each records its call, answers with the torch
    form), installed for the test; what was installed before is put back."""
    from neml2.tensors import _kernels, _mandel, use_cpu_kernels

    seen = []
    forms = {
        "small_mm": lambda a, b: a @ b,
        **{n: getattr(_mandel, n) for n in _kernels.NAMES if n != "small_mm"},
    }

    def recording(name):
        def op(*xs):
            seen.append((name, *(tuple(x.shape) for x in xs)))
            with _no_kernels():
                return forms[name](*xs)

        return op

    before = _kernels.installed()
    use_cpu_kernels({n: recording(n) for n in _kernels.NAMES})
    yield seen
    use_cpu_kernels(before)


class _no_kernels:
    """Inside a stand-in kernel: the torch forms themselves (no recursion into it)."""

    def __enter__(self):
        from neml2.tensors import _kernels

        self.saved = _kernels.installed()
        _kernels.use_cpu_kernels(None)

    def __exit__(self, *exc):
        from neml2.tensors import _kernels

        _kernels.use_cpu_kernels(self.saved)


def test_r2_products_go_to_the_installed_kernel(kernel_calls):
    from neml2.tensors import R2, Vec

    q = seed(R2(_rand(5, 3, 3, seed_=1)), "q")
    a = R2(_rand(5, 3, 3, seed_=2))
    v = Vec(_rand(5, 3, seed_=3))
    out = q @ a
    # the value and the tangent (the identity seed, broadcast over the batch)
    assert kernel_calls == [
        ("small_mm", (5, 3, 3), (5, 3, 3)),
        ("small_mm", (9, 1, 3, 3), (5, 3, 3)),
    ]
    assert torch.equal(out.data, q.data @ a.data)
    kernel_calls.clear()
    w = a @ v
    assert kernel_calls == [("small_mm", (5, 3, 3), (5, 3, 1))]
    assert torch.equal(w.data, (a.data @ v.data.unsqueeze(-1)).squeeze(-1))


def test_storage_conversions_go_to_the_installed_kernels(kernel_calls):
    from neml2.tensors import SR2, WR2

    s = SR2(_rand(4, 6, seed_=1))
    w = WR2(_rand(4, 3, seed_=2))
    full = s.to_R2()
    assert kernel_calls == [("mandel_to_full", (4, 6))]
    kernel_calls.clear()
    back = full.sym()
    assert [c[0] for c in kernel_calls] == ["full_to_mandel"]
    torch.testing.assert_close(back.data, s.data, rtol=0, atol=1e-15)
    kernel_calls.clear()
    assert torch.equal(w.to_R2().skew().data, w.data)
    assert [c[0] for c in kernel_calls] == ["skew_to_full", "full_to_skew"]


@pytest.mark.parametrize("case", ["grad", "float16", "another device"])
def test_the_kernel_is_skipped_where_it_does_not_apply(kernel_calls, case):
    from neml2.tensors import R2

    x, y = _rand(4, 3, 3, seed_=1), _rand(4, 3, 3, seed_=2)
    if case == "grad":
        x.requires_grad_(True)
    elif case == "float16":
        x, y = x.half(), y.half()
    else:  # (a CUDA tensor in real use)
        x, y = x.to("meta"), y.to("meta")
    out = R2(x) @ R2(y)
    assert kernel_calls == []
    assert out.data.shape == (4, 3, 3)
    if case == "grad":
        out.data.sum().backward()  # autograd through ATen's matmul
        assert x.grad is not None
        with torch.no_grad():
            R2(x) @ R2(y)
        assert len(kernel_calls) == 1  # no gradient needed: the kernel


def test_no_kernels_means_torch_forms_and_names_are_checked(kernel_calls):
    from neml2.tensors import R2, SR2, use_cpu_kernels

    use_cpu_kernels(None)
    R2(_rand(4, 3, 3)) @ R2(_rand(4, 3, 3, seed_=1))
    SR2(_rand(4, 6)).to_R2()
    assert kernel_calls == []
    with pytest.raises(ValueError, match="no eager kernel named mandel_to_skew"):
        use_cpu_kernels({"mandel_to_skew": torch.neg})


def _scaled_products(a: SR2, s: Scalar, c: Scalar):
    """Products and quotients of an SR2 by per-point Scalars, all with tangents."""
    return [a * s, (a * s) * c, a / c.primal(), s * a + a * 2.0]


@pytest.mark.parametrize("second_order", [False, True])
def test_laid_out_factors_give_the_bits_of_the_broadcast_forms(second_order, monkeypatch):
    """Eagerly, a broadcast factor of a product with tangents is laid out once at the
    product's shape (``_tangents.laid_out_as``); traced, the broadcast form runs. Values
    and tangents must be the same bits either way, the tangents of shared seeds (no batch
    axis) included."""
    from neml2.tensors import _base as base_mod
    from neml2.tensors import _tangents as tan_mod

    def case():
        a = seed(SR2(_rand(5, 6, seed_=11)), "a", second_order=second_order)
        s = seed(Scalar(_rand(5, seed_=12)), "s", second_order=second_order)
        c = seed(Scalar(_rand(5, seed_=13).abs() + 0.5), "c", second_order=second_order)
        b = seed(SR2(_rand(6, seed_=14)), "b", second_order=second_order)
        return _scaled_products(a + b, s, c)

    eager = case()
    for mod in (tan_mod, base_mod):
        monkeypatch.setattr(mod, "_tracing", lambda: True)
    traced = case()
    for e, t in zip(eager, traced, strict=True):
        assert torch.equal(e.data, t.data)
        assert set(e.tangents) == set(t.tangents)
        for k in t.tangents:
            assert e.tangents[k].shape == t.tangents[k].shape, k
            assert torch.equal(e.tangents[k], t.tangents[k]), k
        if second_order:
            assert set(e.tangents2) == set(t.tangents2)
            for k in t.tangents2:
                assert torch.equal(e.tangents2[k], t.tangents2[k]), k


def test_laid_out_as_copies_only_a_broadcast_factor_of_many_values():
    from neml2.tensors._tangents import laid_out_as

    shape = torch.Size((4, 6))
    full = _rand(4, 6)
    assert laid_out_as(full, shape) is full  # already at the product's shape
    one = _rand(1, 1)
    assert laid_out_as(one, shape) is one  # a single value: a scalar loop already
    col = _rand(4, 1)
    got = laid_out_as(col, shape)
    assert got.shape == shape and got.is_contiguous()
    assert torch.equal(got, col.expand(shape))


def test_product_rule_on_a_shared_seed_is_one_multiply_add(monkeypatch):
    """Eagerly, ``d(a b) = da b + a db`` on a seed both factors carry is one ``addcmul``
    (no separate ``add``); the tangents agree with the traced form's to round-off."""
    from neml2.tensors import _base as base_mod
    from neml2.tensors import _tangents as tan_mod

    def case():
        u = seed(SR2(_rand(5, 6, seed_=15)), "u")
        s = u.norm() * 0.5 + Scalar(_rand(5, seed_=16))
        return u * s, s * u

    with _RecordOps() as rec:
        eager = case()
    assert "addcmul" in rec.ops
    for mod in (tan_mod, base_mod):
        monkeypatch.setattr(mod, "_tracing", lambda: True)
    with _RecordOps() as rec:
        traced = case()
    assert "addcmul" not in rec.ops
    for e, t in zip(eager, traced, strict=True):
        assert torch.equal(e.data, t.data)
        torch.testing.assert_close(e.tangents["u"], t.tangents["u"], rtol=1e-14, atol=1e-14)
