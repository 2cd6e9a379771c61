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
"""Trace (SR2, R2).

Args:
    x (SR2 | R2): The tensor.

Returns:
    (Scalar): At ``(*B, *sub)``; tangents follow (linear).
"""
vol = _method("vol", "Volumetric part (SR2, R2).")
"""Volumetric part ``tr/3 I`` (SR2, R2).

Args:
    x (SR2 | R2): The tensor.

Returns:
    (SR2 | R2): *x*'s type and shape; tangents follow (linear).
"""
dev = _method("dev", "Deviatoric part (SR2, R2).")
"""Deviatoric part ``x - tr/3 I`` (SR2, R2).

Args:
    x (SR2 | R2): The tensor.

Returns:
    (SR2 | R2): *x*'s type and shape; tangents follow (linear).
"""
det = _method("det", "Determinant -> Scalar (SR2, R2).")
"""Determinant (SR2, R2).

Args:
    x (SR2 | R2): The tensor.

Returns:
    (Scalar): At ``(*B, *sub)``; tangents follow.
"""
inv = _method("inv", "Inverse (SR2, R2, SSR4).")
"""Inverse (SR2, R2, SSR4).

Args:
    x (SR2 | R2 | SSR4): The tensor.

Returns:
    (SR2 | R2 | SSR4): *x*'s type and shape; tangents follow.
"""
norm = _method("norm", "Norm -> Scalar; ``norm(x, eps)`` = sqrt(x:x + eps).")
"""Norm; ``norm(x, eps)`` = ``sqrt(x:x + eps)``.

Args:
    x (Vec | SR2 | R2 | SSR4): The tensor.
    eps (float): Added under the square root (default 0).

Returns:
    (Scalar): At ``(*B, *sub)``; tangents follow.
"""
norm_sq = _method("norm_sq", "Squared norm -> Scalar.")
"""Squared norm ``x : x``.

Args:
    x (Vec | SR2 | R2 | SSR4): The tensor.

Returns:
    (Scalar): At ``(*B, *sub)``; tangents follow.
"""
inner = _method("inner", "Full contraction -> Scalar (Vec, SR2, R2, SSR4).")
"""Full contraction (Vec, SR2, R2, SSR4).

Args:
    x (Vec | SR2 | R2 | SSR4): The left factor.
    other (Vec | SR2 | R2 | SSR4): The right factor, of *x*'s type, broadcast.

Returns:
    (Scalar): At the broadcast ``(*B, *sub)``; tangents follow.
"""
outer = _method("outer", "Outer product (SR2 x SR2 -> SSR4, Vec x Vec -> R2).")
"""Outer product (SR2 x SR2 -> SSR4, Vec x Vec -> R2).

Args:
    x (SR2 | Vec): The left factor.
    other (SR2 | Vec): The right factor, of *x*'s type, broadcast.

Returns:
    (SSR4 | R2): At the broadcast ``(*B, *sub, *base)``; tangents follow.
"""
sym = _method("sym", "Symmetric part of an R2 -> SR2.")
"""Symmetric part of an R2.

Args:
    x (R2): The tensor.

Returns:
    (SR2): At ``(*B, *sub, 6)``; tangents follow (linear).
"""
skew = _method("skew", "Skew part of an R2 -> WR2.")
"""Skew part of an R2, as its axial vector.

Args:
    x (R2): The tensor.

Returns:
    (WR2): At ``(*B, *sub, 3)``; tangents follow (linear).
"""
transpose = _method("transpose", "Transpose (R2, SSR4 major).")
"""Transpose (R2, SSR4 major; an SR2 is returned as is).

Args:
    x (R2 | SSR4 | SR2 | Tensor): The tensor.

Returns:
    (TensorWrapper): *x*'s type and shape; tangents follow (linear).
"""
exp_map = _method("exp", "Exponential map of a WR2 -> MRP.")
"""Exponential map of a WR2 to a rotation.

Args:
    x (WR2): The skew tensor (axial vector).

Returns:
    (MRP): At ``(*B, *sub, 3)``; tangents follow.
"""


def matmul(a: TensorWrapper, b: TensorWrapper) -> TensorWrapper:
    """Typed contraction ``a @ b`` (traceable by Dynamo, unlike the ``@`` operator).

    Args:
        a: The left operand.
        b: The right operand, broadcast against *a*.

    Returns:
        The registered result type at the broadcast ``(*B, *sub, *out_base)``; tangents of
            both follow.
    """
    return a.matmul(b)


def rotate(x: TensorWrapper, r: TensorWrapper) -> TensorWrapper:
    """Rotate a Vec / SR2 / R2 / SSR4 by ``r`` (MRP, Quaternion or R2); compose MRPs.

    Args:
        x: The value to rotate (an MRP: compose, applying *r* after *x*).
        r: The rotation, broadcast against *x*.

    Returns:
        *x*'s type at the broadcast shape; tangents of both follow.
    """
    return x.rotate(r)


def compose(a: TensorWrapper, b: TensorWrapper) -> TensorWrapper:
    """The MRP of ``R(a) R(b)`` (apply *b* first).

    Args:
        a: The MRP applied second.
        b: The MRP applied first, broadcast against *a*.

    Returns:
        The MRP at the broadcast ``(*B, *sub, 3)``; tangents follow.
    """
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
"""Elementwise square root.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
exp = _elementwise("exp", T.exp, torch.exp)
"""Elementwise exponential.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
log = _elementwise("log", T.log, torch.log)
"""Elementwise natural logarithm.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
sin = _elementwise("sin", T.sin, torch.sin)
"""Elementwise sine.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
cos = _elementwise("cos", T.cos, torch.cos)
"""Elementwise cosine.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
tan = _elementwise("tan", T.tan, torch.tan)
"""Elementwise tangent.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
tanh = _elementwise("tanh", T.tanh, torch.tanh)
"""Elementwise hyperbolic tangent.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
sinh = _elementwise("sinh", T.sinh, torch.sinh)
"""Elementwise hyperbolic sine.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
cosh = _elementwise("cosh", T.cosh, torch.cosh)
"""Elementwise hyperbolic cosine.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
arctan = _elementwise("arctan", T.arctan, torch.atan)
"""Elementwise arctangent.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
arccos = _elementwise("arccos", T.arccos, torch.acos)
"""Elementwise arccosine.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
abs = _elementwise("abs", T.abs, torch.abs)
"""Elementwise absolute value.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""
macaulay = _elementwise("macaulay", T.macaulay, lambda x: torch.clamp(x, min=0.0))
"""Elementwise Macaulay bracket ``max(x, 0)``.

Args:
    x (float | torch.Tensor | Scalar | Tensor): The argument; a plain tensor or number
        falls back to torch.

Returns:
    (Scalar | Tensor | torch.Tensor): *x*'s type and shape; first- and second-order
        tangents follow.
"""


def pow(x, n):
    """``x ** n``, elementwise.

    Args:
        x (float | torch.Tensor | Scalar | Tensor): The base; a plain tensor falls back to
            ``torch.pow``.
        n (float | Scalar): The exponent, a number or a Scalar.

    Returns:
        (Scalar | Tensor | torch.Tensor): *x*'s type at the broadcast shape; first- and
            second-order tangents follow.
    """
    if isinstance(x, torch.Tensor):
        return torch.pow(x, n)
    return x**n


def heaviside(x):
    """``1`` where ``x > 0`` else ``0``.

    Args:
        x (torch.Tensor | Scalar | Tensor): The argument.

    Returns:
        (Scalar | Tensor | torch.Tensor): *x*'s type and shape, in *x*'s dtype; tangents
            are structurally zero (none are attached).
    """
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

    Args:
        cond (Scalar | torch.Tensor | bool): A bool Scalar (e.g. ``f > 0``) or a bool
            tensor of batch shape (its trailing axes are read as the sub-batch of
            ``a``/``b``, i.e. right-aligned like torch).
        a (TensorWrapper | float): The value where *cond* holds.
        b (TensorWrapper | float): The value elsewhere; of *a*'s type, or a number.

    Returns:
        The typed branch type at the broadcast ``(*B, *sub, *base)``.

    Raises:
        TypeError: If neither branch is typed, or they are of different types.
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
    """Elementwise minimum (tangent of the selected argument).

    Args:
        a (Scalar | Tensor | float): The first argument.
        b (Scalar | Tensor | float): The second argument, of *a*'s type or a number.

    Returns:
        (Scalar | Tensor): At the broadcast shape; where ``a <= b``, *a* and its tangent.
    """
    return where(a <= b, a, b)


def maximum(a, b):
    """Elementwise maximum (tangent of the selected argument).

    Args:
        a (Scalar | Tensor | float): The first argument.
        b (Scalar | Tensor | float): The second argument, of *a*'s type or a number.

    Returns:
        (Scalar | Tensor): At the broadcast shape; where ``a >= b``, *a* and its tangent.
    """
    return where(a >= b, a, b)


def clamp(x, lo: Any = None, hi: Any = None):
    """Clamp to ``[lo, hi]`` (tangent zero where clamped).

    Args:
        x (Scalar | Tensor): The argument.
        lo: The lower bound (number or value of *x*'s type); ``None`` for none.
        hi: The upper bound; ``None`` for none.

    Returns:
        (Scalar | Tensor): *x*'s type at the broadcast shape.
    """
    if lo is not None:
        x = where(x < lo, lo, x)
    if hi is not None:
        x = where(x > hi, hi, x)
    return x
