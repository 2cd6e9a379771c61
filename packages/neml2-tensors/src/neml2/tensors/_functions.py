"""Free functions of the algebra (typed dispatch) and elementwise math.

Tensor functions: ``tr, vol, dev, det, inv, norm, norm_sq, inner, outer, sym, skew,
transpose, rotate, exp_map, compose``. Elementwise (``Scalar`` / ``Tensor`` only):
``sqrt, exp, log, pow, sin, cos, tan, tanh, sinh, cosh, arctan, arccos, abs, macaulay,
heaviside, minimum, maximum, clamp``; ``where`` for any type.
Elementwise functions applied to a plain ``torch.Tensor`` fall back to torch.
"""

from __future__ import annotations

from typing import Any

import torch

from neml2.tensors import _tangents as T
from neml2.tensors._base import TensorWrapper, _is_const, unsqueeze_base
from neml2.tensors._broadcast import align
from neml2.tensors._tangents import Dual


def _method(name: str, doc: str):
    def f(x, *args, **kwargs):
        m = getattr(x, name, None)
        if m is None or not isinstance(x, TensorWrapper):
            raise TypeError(f"{name} is not defined for {type(x).__name__}")
        return m(*args, **kwargs)

    f.__name__ = name
    f.__doc__ = doc
    return f


tr = _method("tr", "Trace -> Scalar (SR2, R2).")
vol = _method("vol", "Volumetric part (SR2, R2).")
dev = _method("dev", "Deviatoric part (SR2, R2).")
det = _method("det", "Determinant -> Scalar (SR2, R2).")
inv = _method("inv", "Inverse (SR2, R2, SSR4).")
norm = _method("norm", "Norm -> Scalar; ``norm(x, eps)`` = sqrt(x:x + eps).")
norm_sq = _method("norm_sq", "Squared norm -> Scalar.")
inner = _method("inner", "Full contraction -> Scalar (Vec, SR2, R2, SSR4).")
outer = _method("outer", "Outer product (SR2 x SR2 -> SSR4, Vec x Vec -> R2).")
sym = _method("sym", "Symmetric part of an R2 -> SR2.")
skew = _method("skew", "Skew part of an R2 -> WR2.")
transpose = _method("transpose", "Transpose (R2, SSR4 major).")
exp_map = _method("exp", "Exponential map of a WR2 -> MRP.")


def matmul(a: TensorWrapper, b: TensorWrapper) -> TensorWrapper:
    """Typed contraction ``a @ b`` (traceable by Dynamo, unlike the ``@`` operator)."""
    return a.matmul(b)


def rotate(x: TensorWrapper, r: TensorWrapper) -> TensorWrapper:
    """Rotate a Vec / SR2 / R2 / SSR4 by ``r`` (MRP, Quaternion or R2), or compose MRPs."""
    return x.rotate(r)


def compose(a: TensorWrapper, b: TensorWrapper) -> TensorWrapper:
    """MRP of ``R(a) R(b)``."""
    return a.compose(b)


def _elementwise(name: str, dual_fn, torch_fn):
    def f(x):
        if isinstance(x, torch.Tensor):
            return torch_fn(x)
        if _is_const(x):
            return torch_fn(torch.as_tensor(x))
        if not isinstance(x, TensorWrapper) or not x._elementwise:
            raise TypeError(
                f"{name} is elementwise: defined for Scalar and Tensor, not {type(x).__name__}"
            )
        return x._unary_dual(dual_fn)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` with first- and second-order tangents."
    return f


sqrt = _elementwise("sqrt", T.sqrt, torch.sqrt)
exp = _elementwise("exp", T.exp, torch.exp)
log = _elementwise("log", T.log, torch.log)
sin = _elementwise("sin", T.sin, torch.sin)
cos = _elementwise("cos", T.cos, torch.cos)
tan = _elementwise("tan", T.tan, torch.tan)
tanh = _elementwise("tanh", T.tanh, torch.tanh)
sinh = _elementwise("sinh", T.sinh, torch.sinh)
cosh = _elementwise("cosh", T.cosh, torch.cosh)
arctan = _elementwise("arctan", T.arctan, torch.atan)
arccos = _elementwise("arccos", T.arccos, torch.acos)
abs = _elementwise("abs", T.abs, torch.abs)
macaulay = _elementwise("macaulay", T.macaulay, lambda x: torch.clamp(x, min=0.0))


def pow(x, n):
    """``x ** n`` (elementwise; ``n`` a number or Scalar)."""
    if isinstance(x, torch.Tensor):
        return torch.pow(x, n)
    return x**n


def heaviside(x):
    """``1`` where ``x > 0`` else ``0`` (tangents are structurally zero)."""
    if isinstance(x, torch.Tensor):
        return (x > 0).to(x.dtype)
    return x._new((x.data > 0).to(x.dtype), x.sub_batch_ndim)


def _as_cond(cond, ref: TensorWrapper) -> TensorWrapper:
    from neml2.tensors._scalar import Scalar

    if isinstance(cond, TensorWrapper):
        return cond.primal()
    cond = torch.as_tensor(cond)
    return Scalar(cond, min(cond.dim(), ref.sub_batch_ndim))


def where(cond, a, b) -> TensorWrapper:
    """Select ``a`` where ``cond`` else ``b``; tangents are selected the same way.

    ``cond``: a bool Scalar (e.g. ``f > 0``) or a bool tensor of batch shape (its trailing
    axes are read as the sub-batch of ``a``/``b``, i.e. right-aligned like torch);
    ``a``/``b``: values of one type or numbers.
    """
    ref = a if isinstance(a, TensorWrapper) else b
    if not isinstance(ref, TensorWrapper):
        raise TypeError("where needs at least one typed value")
    for x in (a, b):
        if isinstance(x, TensorWrapper) and type(x) is not type(ref):
            raise TypeError(
                f"where: branches of different types {type(a).__name__} and {type(b).__name__}"
            )
    c = _as_cond(cond, ref)
    ws = [c] + [x for x in (a, b) if isinstance(x, TensorWrapper)]
    duals, S = align(tuple(ws), "where")
    dc = duals[0].p
    dc = unsqueeze_base(dc if dc.dtype == torch.bool else dc != 0, ref.base_ndim)
    it = iter(duals[1:])
    da = next(it) if isinstance(a, TensorWrapper) else Dual(torch.as_tensor(a, dtype=ref.dtype))
    db = next(it) if isinstance(b, TensorWrapper) else Dual(torch.as_tensor(b, dtype=ref.dtype))
    return ref._from_dual(T.where(dc, da, db), S, ref.base_ndim)


def minimum(a, b):
    """Elementwise minimum (tangent of the selected argument)."""
    return where(a <= b, a, b)


def maximum(a, b):
    """Elementwise maximum (tangent of the selected argument)."""
    return where(a >= b, a, b)


def clamp(x, lo: Any = None, hi: Any = None):
    """Clamp to ``[lo, hi]`` (tangent zero where clamped)."""
    if lo is not None:
        x = where(x < lo, lo, x)
    if hi is not None:
        x = where(x > hi, hi, x)
    return x
