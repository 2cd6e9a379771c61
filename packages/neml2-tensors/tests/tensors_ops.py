"""The op table shared by the value tests and the tangent tests.

Each :class:`Op` names its input types, the typed function under test and an
independent numpy reference acting on batch-broadcast numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tensors_testing import (
    np_f2m,
    np_full_ssr4,
    np_m2f,
    np_mrp_matrix,
    np_skew,
    np_ssr4_full,
)

import neml2.tensors as nt
from neml2.tensors import MRP, R2, SR2, SSR4, WR2, Scalar, Tensor, Vec

I3 = np.eye(3)


def tr3(a):
    return np.trace(a, axis1=-2, axis2=-1)


def rodrigues(w):
    """exp(skew(w)) via the axis-angle formula."""
    th = np.linalg.norm(w, axis=-1)[..., None, None]
    K = np_skew(w)
    safe = np.where(th > 0, th, 1.0)
    return (
        np.broadcast_to(I3, K.shape) + np.sin(th) / safe * K + (1 - np.cos(th)) / safe**2 * (K @ K)
    )


@dataclass
class Op:
    name: str
    types: list[type]
    f: Any
    ref: Any
    # (lo, hi) of uniform inputs per argument; "spd" shifts SR2/R2/SSR4 towards identity
    ranges: list[tuple[float, float]] = field(default_factory=list)
    shift: list[float] = field(default_factory=list)
    second: bool = True  # check second-order tangents
    smooth: bool = True  # has tangents at all (False: integer / piecewise-constant)


def _sym_shift(a, s, t):
    if s == 0:
        return a
    if t is SR2:
        a = a.copy()
        a[..., :3] += s
    elif t in (R2,):
        a = a + s * I3
    elif t is SSR4:
        a = a + s * np.eye(6)
    return a


OPS: list[Op] = [
    # ---------------------------------------------------------------- Scalar
    Op("scalar_add", [Scalar, Scalar], lambda a, b: a + b, lambda a, b: a + b),
    Op("scalar_sub", [Scalar, Scalar], lambda a, b: a - b, lambda a, b: a - b),
    Op("scalar_mul", [Scalar, Scalar], lambda a, b: a * b, lambda a, b: a * b),
    Op(
        "scalar_div",
        [Scalar, Scalar],
        lambda a, b: a / b,
        lambda a, b: a / b,
        ranges=[(-1, 1), (0.5, 2)],
    ),
    Op(
        "scalar_const",
        [Scalar],
        lambda a: 2.0 - 3.0 * a / 4.0 + 1.0,
        lambda a: 2.0 - 3.0 * a / 4.0 + 1.0,
    ),
    Op("scalar_rdiv", [Scalar], lambda a: 2.0 / a, lambda a: 2.0 / a, ranges=[(0.5, 2)]),
    Op("scalar_pow", [Scalar], lambda a: a**2.5, lambda a: a**2.5, ranges=[(0.5, 2)]),
    Op("scalar_pow2", [Scalar], lambda a: a**2, lambda a: a**2),
    Op(
        "scalar_pow_scalar",
        [Scalar, Scalar],
        lambda a, b: a**b,
        lambda a, b: a**b,
        ranges=[(0.5, 2), (-1, 1)],
    ),
    Op("scalar_rpow", [Scalar], lambda a: 10.0**a, lambda a: 10.0**a),
    Op("sqrt", [Scalar], nt.sqrt, np.sqrt, ranges=[(0.5, 2)]),
    Op("exp", [Scalar], nt.exp, np.exp),
    Op("log", [Scalar], nt.log, np.log, ranges=[(0.5, 2)]),
    Op("sin", [Scalar], nt.sin, np.sin),
    Op("cos", [Scalar], nt.cos, np.cos),
    Op("tan", [Scalar], nt.tan, np.tan),
    Op("tanh", [Scalar], nt.tanh, np.tanh),
    Op("sinh", [Scalar], nt.sinh, np.sinh),
    Op("cosh", [Scalar], nt.cosh, np.cosh),
    Op("arctan", [Scalar], nt.arctan, np.arctan),
    Op("arccos", [Scalar], nt.arccos, np.arccos, ranges=[(-0.9, 0.9)]),
    Op("abs", [Scalar], nt.abs, np.abs),
    Op("macaulay", [Scalar], nt.macaulay, lambda a: np.maximum(a, 0.0)),
    Op("neg", [Scalar], lambda a: -a, lambda a: -a),
    Op(
        "where",
        [Scalar, Scalar],
        lambda a, b: nt.where(a > b, a * b, b),
        lambda a, b: np.where(a > b, a * b, b),
    ),
    Op(
        "where_sr2",
        [Scalar, SR2],
        lambda a, b: nt.where(a > 0, a * b, b.dev()),
        lambda a, b: np.where(
            a[..., None] > 0,
            a[..., None] * b,
            np_f2m(np_m2f(b) - tr3(np_m2f(b))[..., None, None] * I3 / 3),
        ),
    ),
    Op("minimum", [Scalar, Scalar], nt.minimum, np.minimum),
    Op("maximum", [Scalar, Scalar], nt.maximum, np.maximum),
    Op("clamp", [Scalar], lambda a: nt.clamp(a, -0.3, 0.4), lambda a: np.clip(a, -0.3, 0.4)),
    Op("heaviside", [Scalar], nt.heaviside, lambda a: (a > 0).astype(a.dtype), smooth=False),
    # ---------------------------------------------------------------- Vec
    Op("vec_add", [Vec, Vec], lambda a, b: a - b + a, lambda a, b: a - b + a),
    Op(
        "vec_scale",
        [Scalar, Vec],
        lambda s, v: s * v / (s * s + 1.0),
        lambda s, v: s[..., None] * v / (s[..., None] ** 2 + 1.0),
    ),
    Op("vec_inner", [Vec, Vec], nt.inner, lambda a, b: np.einsum("...i,...i", a, b)),
    Op("vec_cross", [Vec, Vec], lambda a, b: a.cross(b), np.cross),
    Op("vec_outer", [Vec, Vec], nt.outer, lambda a, b: np.einsum("...i,...j->...ij", a, b)),
    Op("vec_norm", [Vec], nt.norm, lambda a: np.linalg.norm(a, axis=-1)),
    Op("vec_component", [Vec], lambda a: a[1], lambda a: a[..., 1]),
    Op(
        "vec_rotate",
        [Vec, MRP],
        nt.rotate,
        lambda v, r: np.einsum("...ij,...j->...i", np_mrp_matrix(r), v),
    ),
    # ---------------------------------------------------------------- SR2
    Op("sr2_add", [SR2, SR2], lambda a, b: a + b - 0.5, lambda a, b: a + b - 0.5),
    Op("sr2_scale", [Scalar, SR2], lambda s, a: s * a + a * s, lambda s, a: 2 * s[..., None] * a),
    Op(
        "sr2_div",
        [SR2, Scalar],
        lambda a, s: a / s,
        lambda a, s: a / s[..., None],
        ranges=[(-1, 1), (0.5, 2)],
    ),
    Op("sr2_tr", [SR2], nt.tr, lambda a: tr3(np_m2f(a))),
    Op("sr2_vol", [SR2], nt.vol, lambda a: np_f2m(tr3(np_m2f(a))[..., None, None] * I3 / 3)),
    Op(
        "sr2_dev",
        [SR2],
        nt.dev,
        lambda a: np_f2m(np_m2f(a) - tr3(np_m2f(a))[..., None, None] * I3 / 3),
    ),
    Op("sr2_det", [SR2], nt.det, lambda a: np.linalg.det(np_m2f(a))),
    Op("sr2_inv", [SR2], nt.inv, lambda a: np_f2m(np.linalg.inv(np_m2f(a))), shift=[3.0]),
    Op(
        "sr2_norm",
        [SR2],
        nt.norm,
        lambda a: np.sqrt(np.einsum("...ij,...ij", np_m2f(a), np_m2f(a))),
    ),
    Op(
        "sr2_norm_eps",
        [SR2],
        lambda a: a.norm(1e-3),
        lambda a: np.sqrt(np.einsum("...ij,...ij", np_m2f(a), np_m2f(a)) + 1e-3),
    ),
    Op("sr2_norm_sq", [SR2], nt.norm_sq, lambda a: np.einsum("...ij,...ij", np_m2f(a), np_m2f(a))),
    Op(
        "sr2_inner",
        [SR2, SR2],
        nt.inner,
        lambda a, b: np.einsum("...ij,...ij", np_m2f(a), np_m2f(b)),
    ),
    Op(
        "sr2_outer",
        [SR2, SR2],
        nt.outer,
        lambda a, b: np_full_ssr4(np.einsum("...ij,...kl->...ijkl", np_m2f(a), np_m2f(b))),
    ),
    Op(
        "sr2_component",
        [SR2],
        lambda a: a[0, 1] + a[2, 2],
        lambda a: np_m2f(a)[..., 0, 1] + np_m2f(a)[..., 2, 2],
    ),
    Op("sr2_to_r2", [SR2], lambda a: a.to_R2(), np_m2f),
    Op(
        "sr2_rotate",
        [SR2, MRP],
        nt.rotate,
        lambda a, r: np_f2m(np_mrp_matrix(r) @ np_m2f(a) @ np.swapaxes(np_mrp_matrix(r), -1, -2)),
    ),
    Op(
        "sr2_fill6",
        [Scalar, Scalar],
        lambda a, b: SR2.fill(a, b, 1.0, a * b, b, 0.5),
        lambda a, b: np_f2m(_full_from(a, b)),
    ),
    Op(
        "sr2_fill3",
        [Scalar],
        lambda a: SR2.fill(a, 2.0, a * a),
        lambda a: np_f2m(_diag(a, 2.0 + 0 * a, a * a)),
    ),
    Op("sr2_fill1", [Scalar], SR2.fill, lambda a: np_f2m(a[..., None, None] * I3)),
    # ---------------------------------------------------------------- R2
    Op("r2_matmul", [R2, R2], lambda a, b: a @ b, lambda a, b: a @ b),
    Op(
        "r2_matvec", [R2, Vec], lambda a, v: a @ v, lambda a, v: np.einsum("...ij,...j->...i", a, v)
    ),
    Op("r2_tr", [R2], nt.tr, tr3),
    Op(
        "r2_vol_dev",
        [R2],
        lambda a: a.vol() + 2.0 * a.dev(),
        lambda a: tr3(a)[..., None, None] * I3 / 3 + 2 * (a - tr3(a)[..., None, None] * I3 / 3),
    ),
    Op("r2_det", [R2], nt.det, np.linalg.det),
    Op("r2_inv", [R2], nt.inv, np.linalg.inv, shift=[3.0]),
    Op("r2_transpose", [R2], nt.transpose, lambda a: np.swapaxes(a, -1, -2)),
    Op("r2_sym", [R2], nt.sym, np_f2m),
    Op("r2_skew", [R2], lambda a: nt.skew(a).to_R2(), lambda a: 0.5 * (a - np.swapaxes(a, -1, -2))),
    Op("r2_inner", [R2, R2], nt.inner, lambda a, b: np.einsum("...ij,...ij", a, b)),
    Op("r2_norm", [R2], nt.norm, lambda a: np.sqrt(np.einsum("...ij,...ij", a, a))),
    Op(
        "r2_rotate",
        [R2, MRP],
        nt.rotate,
        lambda a, r: np_mrp_matrix(r) @ a @ np.swapaxes(np_mrp_matrix(r), -1, -2),
    ),
    Op(
        "r2_fill9",
        [Scalar],
        lambda a: R2.fill(a, 1.0, 2.0, 3.0, a * a, 5.0, 6.0, 7.0, 8.0),
        lambda a: _r2_fill9(a),
    ),
    # ---------------------------------------------------------------- WR2
    Op("wr2_to_r2", [WR2], lambda w: w.to_R2(), np_skew),
    Op("wr2_exp", [WR2], lambda w: nt.exp_map(w).to_R2(), rodrigues),
    Op(
        "wr2_exp_small",
        [WR2],
        lambda w: nt.exp_map(w * 1e-4).to_R2(),
        lambda w: rodrigues(w * 1e-4),
    ),
    # ---------------------------------------------------------------- SSR4
    Op(
        "ssr4_matvec",
        [SSR4, SR2],
        lambda c, e: c @ e,
        lambda c, e: np_f2m(np.einsum("...ijkl,...kl->...ij", np_ssr4_full(c), np_m2f(e))),
    ),
    Op(
        "ssr4_vecmat",
        [SR2, SSR4],
        lambda e, c: e @ c,
        lambda e, c: np_f2m(np.einsum("...ij,...ijkl->...kl", np_m2f(e), np_ssr4_full(c))),
    ),
    Op(
        "ssr4_matmul",
        [SSR4, SSR4],
        lambda c, d: c @ d,
        lambda c, d: np_full_ssr4(
            np.einsum("...ijkl,...klmn->...ijmn", np_ssr4_full(c), np_ssr4_full(d))
        ),
    ),
    Op("ssr4_inv", [SSR4], nt.inv, np.linalg.inv, shift=[4.0]),
    Op("ssr4_transpose", [SSR4], nt.transpose, lambda c: np.swapaxes(c, -1, -2)),
    Op(
        "ssr4_add_scale",
        [Scalar, SSR4],
        lambda s, c: s * c - c / 2.0,
        lambda s, c: s[..., None, None] * c - c / 2.0,
    ),
    Op(
        "ssr4_inner",
        [SSR4, SSR4],
        nt.inner,
        lambda c, d: np.einsum("...ijkl,...ijkl", np_ssr4_full(c), np_ssr4_full(d)),
    ),
    Op("ssr4_to_full", [SSR4], lambda c: c.to_full(), np_ssr4_full),
    Op(
        "ssr4_isotropic",
        [Scalar, Scalar],
        lambda E, nu: SSR4.isotropic_E_nu(E, nu),
        lambda E, nu: _iso(E, nu),
        ranges=[(50, 150), (0.1, 0.4)],
    ),
    Op(
        "ssr4_rotate",
        [SSR4, MRP],
        nt.rotate,
        lambda c, r: np_full_ssr4(
            np.einsum(
                "...ip,...jq,...kr,...ls,...pqrs->...ijkl", *[np_mrp_matrix(r)] * 4, np_ssr4_full(c)
            )
        ),
    ),
    # ---------------------------------------------------------------- rotations
    Op("mrp_to_r2", [MRP], lambda r: r.to_R2(), np_mrp_matrix),
    Op(
        "mrp_compose",
        [MRP, MRP],
        lambda a, b: nt.compose(a, b).to_R2(),
        lambda a, b: np_mrp_matrix(a) @ np_mrp_matrix(b),
        ranges=[(-0.5, 0.5), (-0.5, 0.5)],
    ),
    Op(
        "mrp_rotate",
        [MRP, MRP],
        lambda a, b: a.rotate(b).to_R2(),
        lambda a, b: np_mrp_matrix(b) @ np_mrp_matrix(a),
        ranges=[(-0.5, 0.5), (-0.5, 0.5)],
    ),
    Op(
        "mrp_inverse",
        [MRP],
        lambda a: a.inverse().to_R2(),
        lambda a: np.swapaxes(np_mrp_matrix(a), -1, -2),
    ),
    Op("mrp_quaternion", [MRP], lambda a: a.to_quaternion().to_R2(), np_mrp_matrix),
    Op(
        "mrp_from_matrix",
        [MRP],
        lambda a: MRP.from_matrix(a.to_R2()).to_R2(),
        np_mrp_matrix,
        ranges=[(-0.5, 0.5)],
    ),
    Op(
        "mrp_axis_angle",
        [Vec, Scalar],
        lambda n, t: MRP.from_axis_angle(n, t).to_R2(),
        lambda n, t: rodrigues(n / np.linalg.norm(n, axis=-1, keepdims=True) * t[..., None]),
        ranges=[(0.2, 1), (-2, 2)],
    ),
    # ---------------------------------------------------------------- Tensor
    Op(
        "tensor_matmul",
        [Tensor, Tensor],
        lambda a, b: a @ b.transpose(),
        lambda a, b: a @ np.swapaxes(b, -1, -2),
    ),
    Op(
        "tensor_elementwise",
        [Tensor, Tensor],
        lambda a, b: a * b + a / (b * b + 1.0),
        lambda a, b: a * b + a / (b * b + 1.0),
    ),
]


def _full_from(a, b):
    A = np.zeros((*a.shape, 3, 3))
    vals = {
        (0, 0): a,
        (1, 1): b,
        (2, 2): 1.0 + 0 * a,
        (1, 2): a * b,
        (0, 2): b,
        (0, 1): 0.5 + 0 * a,
    }
    for (i, j), v in vals.items():
        A[..., i, j] = v
        A[..., j, i] = v
    return A


def _diag(a, b, c):
    A = np.zeros((*a.shape, 3, 3))
    A[..., 0, 0], A[..., 1, 1], A[..., 2, 2] = a, b, c
    return A


def _r2_fill9(a):
    A = np.broadcast_to(np.arange(9.0).reshape(3, 3), (*a.shape, 3, 3)).copy()
    A[..., 0, 0] = a
    A[..., 1, 1] = a * a
    return A


def _iso(E, nu):
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    d = np.eye(3)
    full = lam[..., None, None, None, None] * np.einsum("ij,kl->ijkl", d, d) + mu[
        ..., None, None, None, None
    ] * (np.einsum("ik,jl->ijkl", d, d) + np.einsum("il,jk->ijkl", d, d))
    return np_full_ssr4(full)


def make_input(t: type, dyn, sub, dtype, seed_: int, rng=(-1.0, 1.0), shift=0.0):
    """A random typed input of type ``t`` with region shapes ``dyn``/``sub``."""
    import torch

    base = (2, 3) if t is Tensor else t.BASE_SHAPE
    g = np.random.default_rng(seed_)
    a = g.uniform(rng[0], rng[1], size=tuple(dyn) + tuple(sub) + tuple(base))
    a = _sym_shift(a, shift, t)
    data = torch.tensor(a, dtype=dtype)
    if t is Tensor:
        return Tensor(data, 2, len(sub))
    return t(data, len(sub))
