"""Test helpers: hypothesis strategies, independent numpy references, tangent oracles."""

from __future__ import annotations

import math
import os

import numpy as np
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from neml2.tensors import seed

S2 = math.sqrt(2.0)

# ----------------------------------------------------------------------- numpy references
# Mandel index map written out independently of the library: (I) -> (i, j)
MANDEL_IJ = [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]


def np_m2f(x: np.ndarray) -> np.ndarray:
    """Mandel (..., 6) -> full (..., 3, 3), by the index table."""
    out = np.zeros((*x.shape[:-1], 3, 3), dtype=x.dtype)
    for a, (i, j) in enumerate(MANDEL_IJ):
        f = 1.0 if i == j else 1.0 / S2
        out[..., i, j] = x[..., a] * f
        out[..., j, i] = x[..., a] * f
    return out


def np_f2m(a: np.ndarray) -> np.ndarray:
    """Full (..., 3, 3) -> Mandel (..., 6) of the symmetric part."""
    s = 0.5 * (a + np.swapaxes(a, -1, -2))
    out = np.zeros((*a.shape[:-2], 6), dtype=a.dtype)
    for k, (i, j) in enumerate(MANDEL_IJ):
        out[..., k] = s[..., i, j] * (1.0 if i == j else S2)
    return out


def np_ssr4_full(c: np.ndarray) -> np.ndarray:
    """Mandel (..., 6, 6) -> (..., 3, 3, 3, 3)."""
    out = np.zeros((*c.shape[:-2], 3, 3, 3, 3), dtype=c.dtype)
    for a, (i, j) in enumerate(MANDEL_IJ):
        fa = 1.0 if i == j else 1.0 / S2
        for b, (k, m) in enumerate(MANDEL_IJ):
            fb = 1.0 if k == m else 1.0 / S2
            v = c[..., a, b] * fa * fb
            for ii, jj in {(i, j), (j, i)}:
                for kk, ll in {(k, m), (m, k)}:
                    out[..., ii, jj, kk, ll] = v
    return out


def np_full_ssr4(t: np.ndarray) -> np.ndarray:
    out = np.zeros((*t.shape[:-4], 6, 6), dtype=t.dtype)
    for a, (i, j) in enumerate(MANDEL_IJ):
        fa = 1.0 if i == j else S2
        for b, (k, m) in enumerate(MANDEL_IJ):
            fb = 1.0 if k == m else S2
            out[..., a, b] = t[..., i, j, k, m] * fa * fb
    return out


def np_skew(w: np.ndarray) -> np.ndarray:
    """Axial vector -> skew matrix with W v = w x v."""
    out = np.zeros((*w.shape[:-1], 3, 3), dtype=w.dtype)
    out[..., 0, 1] = -w[..., 2]
    out[..., 0, 2] = w[..., 1]
    out[..., 1, 0] = w[..., 2]
    out[..., 1, 2] = -w[..., 0]
    out[..., 2, 0] = -w[..., 1]
    out[..., 2, 1] = w[..., 0]
    return out


def np_mrp_matrix(r: np.ndarray) -> np.ndarray:
    """Rotation matrix of MRP via axis-angle (Rodrigues' formula), independent route."""
    n = np.linalg.norm(r, axis=-1, keepdims=True)
    theta = 4.0 * np.arctan(n)
    axis = np.where(n > 0, r / np.where(n > 0, n, 1.0), 0.0)
    K = np_skew(axis)
    th = theta[..., None]
    eye = np.broadcast_to(np.eye(3), K.shape)
    return eye + np.sin(th) * K + (1.0 - np.cos(th)) * (K @ K)


# ----------------------------------------------------------------------- strategies
#: hypothesis settings of this package's tests (per test, not a global profile, so that
#: running several packages' suites together does not change the others' settings)
EXAMPLES = int(os.environ.get("NEML2_TENSORS_EXAMPLES", "12"))
FAST = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(rtol=2e-4, atol=2e-5), torch.float64: dict(rtol=1e-10, atol=1e-12)}


@st.composite
def region_shapes(draw, max_dyn=2, max_sub=2, max_size=3):
    dyn = tuple(draw(st.lists(st.integers(1, max_size), max_size=max_dyn)))
    sub = tuple(draw(st.lists(st.integers(1, max_size), max_size=max_sub)))
    return dyn, sub


@st.composite
def broadcast_partner(draw, shapes):
    """A (dyn, sub) pair that broadcasts against ``shapes`` region by region."""
    dyn, sub = shapes

    def shrink(s):
        k = draw(st.integers(0, len(s)))
        s = list(s[k:])
        return tuple(1 if draw(st.booleans()) else d for d in s)

    return shrink(dyn), shrink(sub)


def rand(dyn, sub, base, dtype=torch.float64, seed_=0, lo=-1.0, hi=1.0):
    g = np.random.default_rng(seed_)
    a = g.uniform(lo, hi, size=tuple(dyn) + tuple(sub) + tuple(base))
    return torch.tensor(a, dtype=dtype)


def aligned_np(x: torch.Tensor, sub_ndim: int, S: int, base_ndim: int) -> np.ndarray:
    """numpy array of ``x`` with singleton axes at the start of its sub-batch region."""
    a = x.detach().cpu().numpy()
    pos = a.ndim - base_ndim - sub_ndim
    for _ in range(S - sub_ndim):
        a = np.expand_dims(a, pos)
    return a


def np_broadcast(*arrays_and_base):
    """Broadcast arrays on their batch dims only (base dims kept)."""
    arrs = [a for a, _ in arrays_and_base]
    bases = [b for _, b in arrays_and_base]
    batch = np.broadcast_shapes(*[a.shape[: a.ndim - b] for a, b in zip(arrs, bases, strict=True)])
    return [
        np.broadcast_to(a, batch + a.shape[a.ndim - b :]) for a, b in zip(arrs, bases, strict=True)
    ]


# ----------------------------------------------------------------------- tangent oracle
def _rewrap(x, raw):
    return type(x)._make(raw, x.sub_batch_ndim, None, None, x.base_ndim)


def check_tangents(fn, inputs, second: bool = True, rtol=1e-7, atol=1e-9):
    """Compare the forward tangents of ``fn(*inputs)`` with torch.autograd.

    Every input is seeded with the identity over its *whole* data (K = numel), so the
    comparison covers all batch couplings. Second order is compared with the Hessian
    (jacobian of the jacobian).
    """
    seeded = []
    for i, x in enumerate(inputs):
        k = x.data.numel()
        d = torch.eye(k, dtype=x.dtype).reshape(k, *x.data.shape)
        seeded.append(seed(x, f"x{i}", d, second_order=second))
    out = fn(*seeded)
    raws = tuple(x.data.detach().clone() for x in inputs)

    def g(*r):
        return fn(*[_rewrap(x, ri) for x, ri in zip(inputs, r, strict=True)]).data

    ref_out = g(*raws)
    torch.testing.assert_close(out.data, ref_out, rtol=rtol, atol=atol)
    oshape = out.data.shape
    on = out.data.numel()
    argn = tuple(range(len(raws)))
    J = torch.func.jacfwd(g, argnums=argn)(*raws)
    for i, x in enumerate(inputs):
        k = x.data.numel()
        ref = J[i].reshape(on, k).T
        t = (out.tangents or {}).get(f"x{i}")
        ours = torch.zeros(k, on, dtype=x.dtype) if t is None else t.expand(k, *oshape)
        torch.testing.assert_close(ours.reshape(k, on), ref, rtol=rtol, atol=atol)
    if not second:
        return out
    assert out.tangents2 is not None
    H = torch.func.jacfwd(torch.func.jacfwd(g, argnums=argn), argnums=argn)(*raws)
    for i, xi in enumerate(inputs):
        ki = xi.data.numel()
        for j, xj in enumerate(inputs):
            kj = xj.data.numel()
            ref = H[i][j].reshape(on, ki, kj).permute(1, 2, 0)
            t = out.tangents2.get((f"x{i}", f"x{j}"))
            ours = (
                torch.zeros(ki, kj, on, dtype=xi.dtype) if t is None else t.expand(ki, kj, *oshape)
            )
            torch.testing.assert_close(ours.reshape(ki, kj, on), ref, rtol=rtol, atol=atol)
    return out
    assert out.tangents2 is not None
    for i, xi in enumerate(inputs):

        def gi(*r, i=i):
            return torch.autograd.functional.jacobian(g, r, create_graph=True)[i]

        H = torch.autograd.functional.jacobian(gi, raws)
        ki = xi.data.numel()
        for j, xj in enumerate(inputs):
            kj = xj.data.numel()
            ref = H[j].reshape(on, ki, kj).permute(1, 2, 0)
            t = out.tangents2.get((f"x{i}", f"x{j}"))
            ours = (
                torch.zeros(ki, kj, on, dtype=xi.dtype) if t is None else t.expand(ki, kj, *oshape)
            )
            torch.testing.assert_close(ours.reshape(ki, kj, on), ref, rtol=rtol, atol=atol)
    return out
