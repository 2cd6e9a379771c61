"""``torch.<function>(typed value)``: the typed tensors' side of torch's
``__torch_function__`` protocol.

Typed tensors are not ``torch.Tensor`` subclasses, but torch hands every call that
receives one (``torch.exp(x)``, ``torch.stack([a, b])``, ``t * x``) to
:meth:`TensorWrapper.__torch_function__ <neml2.tensors.TensorWrapper.__torch_function__>`,
which lands in :func:`dispatch`. A call is

* **dispatched** to the ``neml2.tensors`` function of the same meaning, which
  propagates the value *and* its forward-mode tangents (first and second order):
  elementwise math on ``Scalar`` / ``Tensor`` (``torch.exp`` ->
  :func:`neml2.tensors.exp`, ...), arithmetic (``torch.add`` -> ``+``, ...),
  ``torch.where``, ``torch.clamp``, ``torch.minimum`` / ``torch.maximum``,
  ``torch.matmul`` (the typed contraction), ``torch.stack`` / ``torch.cat`` (along
  dynamic batch axes) and ``torch.neg`` / ``torch.clone`` / ``torch.detach``;
* **refused** with a ``TypeError`` naming what to use instead: elementwise math on a
  type whose stored components are not independent numbers (``torch.exp`` of an
  ``SR2`` would act on its six Mandel components, which is not the tensor
  exponential), and every other torch function (the message names the
  ``neml2.tensors`` function or region view that does the job, or says to apply torch
  to the raw storage ``x.data``, which carries no tangents);
* **handed back** to Python (``NotImplemented``) when it is a ``torch.Tensor`` method
  whose ``self`` is a raw tensor: that is how ``t * x`` reaches ``x.__rmul__``.

The internal code of ``neml2.tensors`` applies torch to raw tensors (``x.data``) only,
so none of its own paths goes through here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from neml2.tensors import _functions as fn
from neml2.tensors._base import TensorWrapper
from neml2.tensors._broadcast import describe
from neml2.tensors._factories import cat, stack
from neml2.tensors._spellings import article

Handler = Callable[[Callable, tuple, dict], Any]

#: types whose components are independent numbers (elementwise math is defined)
_ELEMENTWISE_TYPES = "Scalar and Tensor"


# ------------------------------------------------------------------ names and messages
def torch_name(func: Callable) -> str:
    """The public spelling of a torch function (``torch.exp``, ``torch.linalg.det``)."""
    name = getattr(func, "__name__", None) or repr(func)
    spaces = (
        ("torch", torch),
        ("torch.linalg", torch.linalg),
        ("torch.special", torch.special),
        ("torch.nn.functional", F),
        ("torch.fft", torch.fft),
    )
    for prefix, space in spaces:
        if getattr(space, name, None) is func:
            return f"{prefix}.{name}"
        # torch.linalg.det is the builtin ``linalg_det``, torch.special.erf ``special_erf``
        short = prefix.rsplit(".", 1)[-1] + "_"
        if name.startswith(short) and getattr(space, name[len(short) :], None) is func:
            return f"{prefix}.{name[len(short) :]}"
    if _is_tensor_method(func):
        return f"torch.Tensor.{name}"
    module = getattr(func, "__module__", None) or "torch"
    return f"{module}.{getattr(func, '__qualname__', name)}"


def _is_tensor_method(func: Callable) -> bool:
    qualname = getattr(func, "__qualname__", "") or ""
    return qualname.startswith(("TensorBase.", "Tensor."))


def _arg_label(a: Any) -> str:
    if a is None or isinstance(a, bool | int | float | str):
        return repr(a)
    if isinstance(a, TensorWrapper):
        return type(a).__name__
    if isinstance(a, torch.Tensor):
        return f"torch.Tensor{tuple(a.shape)}"
    if isinstance(a, list | tuple):
        inner = ", ".join(_arg_label(v) for v in a[:3]) + (", ..." if len(a) > 3 else "")
        return f"[{inner}]"
    return type(a).__name__


def _call(func: Callable, args: tuple) -> str:
    return f"{torch_name(func)}({', '.join(_arg_label(a) for a in args)})"


def _typed_args(args: tuple, kwargs: dict) -> list[TensorWrapper]:
    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorWrapper):
            out.append(a)
        elif isinstance(a, list | tuple):
            out.extend(v for v in a if isinstance(v, TensorWrapper))
    return out


def _raw_tail(func: Callable, typed: TensorWrapper | None, lead: str) -> str:
    """The closing advice of an elementwise refusal: the raw storage, explicitly."""
    t = type(typed).__name__ if typed is not None else "Scalar"
    f = torch_name(func)
    if t == "Tensor":
        again = f"Tensor({f}(x.data), x.base_ndim, x.sub_batch_ndim)"
    else:
        again = f"{t}({f}(x.data), x.sub_batch_ndim)"
    return (
        f" {lead} torch to the raw storage `x.data` (a torch.Tensor of shape (*batch, *base); "
        f"it carries no tangents) and wrap the result again: {again}."
    )


def supported() -> list[str]:
    """The torch functions that work on typed values (sorted public spellings)."""
    return sorted({torch_name(f) for f in _table()})


def _refuse(func: Callable, args: tuple, kwargs: dict, hint: str | None = None) -> TypeError:
    typed = _typed_args(args, kwargs)
    first = typed[0] if typed else None
    what = f" ({describe(first)})" if first is not None else ""
    msg = f"{_call(func, args)}: {torch_name(func)} is not defined for typed tensors{what}."
    if hint:
        msg += f" Use {hint}."
    msg += (
        " The torch functions that work on typed values are listed in "
        "neml2.tensors.TORCH_FUNCTIONS (elementwise math such as torch.exp on Scalar/Tensor, "
        "arithmetic, torch.where, torch.clamp, torch.matmul, torch.stack/cat)."
    )
    msg += (
        " Otherwise apply torch to the raw storage `x.data` (a torch.Tensor of shape "
        "(*batch, *base); it carries no tangents) and build a typed value from the result."
    )
    return TypeError(msg)


#: what an elementwise function is *not* when applied to a tensor's components
_NOT_THE_TENSOR = {
    "exp": "the tensor exponential",
    "log": "the tensor logarithm",
    "sqrt": "the tensor square root",
    "abs": "the magnitude of the tensor (that is neml2.tensors.norm)",
}


def _elementwise_refusal(func: Callable, x: TensorWrapper, use: str, what: str) -> TypeError:
    """``torch.exp(SR2)`` and the like: elementwise math on a non-elementwise type."""
    t = type(x).__name__
    n = int(torch.Size(x.base_shape).numel())
    name = torch_name(func)
    meaning = _NOT_THE_TENSOR.get(what, "a function of the tensor")
    msg = (
        f"{_call(func, (x,))}: {name} is elementwise, and neml2.tensors defines elementwise "
        f"math ({use}) for {_ELEMENTWISE_TYPES} values only. On {article(t)} {t} "
        f"({describe(x)}) it would act on the {n} stored components one by one, which is "
        f"not {meaning}."
    )
    if t == "WR2" and what == "exp":
        msg += " The exponential map of a WR2 is neml2.tensors.exp_map(w) (-> MRP)."
    else:
        msg += (
            " Apply it to Scalar invariants instead (neml2.tensors.tr, norm, det and inner "
            "give Scalars)."
        )
    return TypeError(msg + _raw_tail(func, x, "If the component-wise map is meant, apply"))


# ------------------------------------------------------------------ argument helpers
def _get(func, args, kwargs, i: int, name: str, default: Any = ...):
    """Argument ``i`` / keyword ``name``; ``...`` default means required."""
    if i < len(args):
        if name in kwargs:
            raise TypeError(f"{torch_name(func)}: argument '{name}' given twice")
        return args[i]
    if name in kwargs:
        return kwargs[name]
    if default is ...:
        raise TypeError(f"{_call(func, args)}: missing argument '{name}'")
    return default


def _check_only(func, args, kwargs, nargs: int, names: tuple[str, ...], defaults: dict) -> None:
    """At most ``nargs`` positionals; keywords among ``names`` or left at ``defaults``."""
    if len(args) > nargs:
        raise _refuse(func, args, kwargs, f"{torch_name(func)} with at most {nargs} arguments")
    for k, v in kwargs.items():
        if k in names:
            continue
        if k in defaults and (v is defaults[k] or v == defaults[k]):
            continue
        why = " (typed values are never written in place)" if k in ("out", "inplace") else ""
        raise TypeError(
            f"{_call(func, args)}: {k}={_arg_label(v)} is not supported with typed values{why}"
        )


_COMMON_DEFAULTS = {"out": None}


def _no_raw_batch(func, args, values) -> None:
    """Refuse raw tensors with axes next to typed values (their layout is unknown)."""
    for v in values:
        if isinstance(v, torch.Tensor) and v.dim() > 0:
            raise TypeError(
                f"{_call(func, args)}: a raw torch.Tensor of shape {tuple(v.shape)} has no "
                "dynamic/sub-batch/base layout to combine with a typed value; wrap it first "
                "(e.g. Scalar(t) for a tensor of batch shape, Scalar(t, sub_batch_ndim=1), "
                "SR2(t) for (*batch, 6)). Numbers and 0-dim tensors combine directly."
            )


# ------------------------------------------------------------------ handlers
def _unary(what: str, f: Callable, use: str | None = None, extra: dict | None = None) -> Handler:
    """Elementwise math on Scalar / Tensor: ``f`` is the ``neml2.tensors`` function.

    ``what`` names the operation in messages, ``use`` the typed spelling to suggest
    (``neml2.tensors.<what>`` unless given).
    """
    defaults = {**_COMMON_DEFAULTS, **(extra or {})}
    use = use or f"neml2.tensors.{what}"

    def h(func, args, kwargs):
        _check_only(func, args, kwargs, 1, ("input",), defaults)
        x = _get(func, args, kwargs, 0, "input")
        if not isinstance(x, TensorWrapper):
            raise _refuse(func, args, kwargs)
        if not x._elementwise:
            raise _elementwise_refusal(func, x, use, what)
        return f(x)

    return h


def _linear(f: Callable, extra: dict | None = None) -> Handler:
    """A map meaningful on every type (``neg``, ``clone``, ``detach``)."""
    defaults = {**_COMMON_DEFAULTS, **(extra or {})}

    def h(func, args, kwargs):
        _check_only(func, args, kwargs, 1, ("input",), defaults)
        x = _get(func, args, kwargs, 0, "input")
        if not isinstance(x, TensorWrapper):
            raise _refuse(func, args, kwargs)
        return f(x)

    return h


def _binary(op: Callable, second: str = "other", scaled: bool = False) -> Handler:
    """``torch.add(a, b, alpha=1)`` -> ``a + alpha * b`` and friends, by the operators."""

    def h(func, args, kwargs):
        names = ("input", second, "alpha") if scaled else ("input", second)
        extra = {"rounding_mode": None} if func in (torch.div, torch.divide) else {}
        _check_only(func, args, kwargs, 2, names, {**_COMMON_DEFAULTS, **extra})
        a = _get(func, args, kwargs, 0, "input")
        b = _get(func, args, kwargs, 1, second)
        _no_raw_batch(func, args, (a, b))
        alpha = kwargs.get("alpha", 1)
        if scaled and not (isinstance(alpha, int | float) and alpha == 1):
            b = b * alpha
        return op(a, b)

    return h


def _elementwise_pair(what: str, f: Callable) -> Handler:
    """``torch.minimum(a, b)`` and the like: elementwise on Scalar / Tensor only."""

    def h(func, args, kwargs):
        _check_only(func, args, kwargs, 2, ("input", "other"), _COMMON_DEFAULTS)
        a = _get(func, args, kwargs, 0, "input")
        b = _get(func, args, kwargs, 1, "other")
        _no_raw_batch(func, args, (a, b))
        for x in (a, b):
            if isinstance(x, TensorWrapper) and not x._elementwise:
                raise _elementwise_refusal(func, x, f"neml2.tensors.{what}", what)
        return f(a, b)

    return h


def _clamp(bounds: tuple[str, ...]) -> Handler:
    """``torch.clamp(x, min, max)`` (``bounds`` = the bound keywords, in order)."""
    names = ("input", *bounds)

    def h(func, args, kwargs):
        _check_only(func, args, kwargs, len(names), names, _COMMON_DEFAULTS)
        x = _get(func, args, kwargs, 0, "input")
        given = {b: _get(func, args, kwargs, i + 1, b, None) for i, b in enumerate(bounds)}
        _no_raw_batch(func, args, tuple(given.values()))
        if not isinstance(x, TensorWrapper):
            raise _refuse(func, args, kwargs, "neml2.tensors.clamp(x, lo, hi) on a typed x")
        if not x._elementwise:
            raise _elementwise_refusal(func, x, "neml2.tensors.clamp", "clamp")
        return fn.clamp(x, given.get("min"), given.get("max"))

    return h


def _where(func, args, kwargs):
    if len(args) + len(kwargs) == 1:
        raise _refuse(func, args, kwargs, "torch.nonzero(cond.data) for the indices")
    _check_only(func, args, kwargs, 3, ("condition", "input", "other"), _COMMON_DEFAULTS)
    cond = _get(func, args, kwargs, 0, "condition")
    a = _get(func, args, kwargs, 1, "input")
    b = _get(func, args, kwargs, 2, "other")
    _no_raw_batch(func, args, (a, b))
    if not isinstance(a, TensorWrapper) and not isinstance(b, TensorWrapper):
        raise _refuse(
            func,
            args,
            kwargs,
            "a typed branch (e.g. torch.where(c, Scalar(1.0), 0.0)), or neml2.tensors.heaviside "
            "for a 0/1 indicator",
        )
    return fn.where(cond, a, b)


def _matmul(func, args, kwargs):
    _check_only(func, args, kwargs, 2, ("input", "other"), _COMMON_DEFAULTS)
    a = _get(func, args, kwargs, 0, "input")
    b = _get(func, args, kwargs, 1, "other")
    if not (isinstance(a, TensorWrapper) and isinstance(b, TensorWrapper)):
        raise _refuse(func, args, kwargs, "neml2.tensors.matmul(a, b) with two typed values")
    return fn.matmul(a, b)


def _sequence(nt_fn: Callable, nt_name: str) -> Handler:
    """``torch.stack`` / ``torch.cat``: along a dynamic batch axis ``dim >= 0``.

    Storage is ``(*dynamic, *sub_batch, *base)``, so storage axis ``d`` is dynamic
    batch axis ``d`` for ``0 <= d <= dynamic_ndim``: torch's ``dim`` means the same.
    """

    def h(func, args, kwargs):
        _check_only(func, args, kwargs, 2, ("tensors", "dim"), _COMMON_DEFAULTS)
        values = list(_get(func, args, kwargs, 0, "tensors"))
        dim = _get(func, args, kwargs, 1, "dim", 0)
        if not values or not all(isinstance(v, TensorWrapper) for v in values):
            raise _refuse(func, args, kwargs, f"neml2.tensors.{nt_name} on typed values only")
        if not isinstance(dim, int) or dim < 0:
            raise _refuse(
                func,
                args,
                kwargs,
                f"neml2.tensors.{nt_name}(values, dim) with dim >= 0: dim counts the dynamic "
                "batch axes from the front (a negative dim would land in the sub-batch or base "
                "axes, which the region views x.sub_batch / x.base reshape)",
            )
        return nt_fn(values, dim)

    return h


def _neg(x):
    return -x


def _clone(x):
    return x.clone()


def _detach(x):
    return x.detach()


def _reciprocal(x):
    return 1.0 / x


def _rsqrt(x):
    return x**-0.5


def _square(x):
    return x * x


_TABLE: dict[Callable, Handler] | None = None


def _table() -> dict[Callable, Handler]:
    """``torch function -> handler``, built on first use."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    t: dict[Callable, Handler] = {}
    unary = {
        "exp": ((torch.exp,), fn.exp),
        "log": ((torch.log,), fn.log),
        "sqrt": ((torch.sqrt,), fn.sqrt),
        "sin": ((torch.sin,), fn.sin),
        "cos": ((torch.cos,), fn.cos),
        "tan": ((torch.tan,), fn.tan),
        "tanh": ((torch.tanh,), fn.tanh),
        "sinh": ((torch.sinh,), fn.sinh),
        "cosh": ((torch.cosh,), fn.cosh),
        "arctan": ((torch.atan, torch.arctan), fn.arctan),
        "arccos": ((torch.acos, torch.arccos), fn.arccos),
        "abs": ((torch.abs, torch.absolute), fn.abs),
        "macaulay": ((torch.relu,), fn.macaulay),
    }
    for what, (funcs, f) in unary.items():
        for func in funcs:
            t[func] = _unary(what, f)
    t[F.relu] = _unary("macaulay", fn.macaulay, extra={"inplace": False})
    t[torch.rsqrt] = _unary("rsqrt", _rsqrt, use="x ** -0.5")
    t[torch.square] = _unary("square", _square, use="x * x")
    t[torch.reciprocal] = _unary("reciprocal", _reciprocal, use="1.0 / x")
    for func in (torch.neg, torch.negative):
        t[func] = _linear(_neg)
    t[torch.clone] = _linear(_clone, {"memory_format": torch.preserve_format})
    t[torch.detach] = _linear(_detach)
    t[torch.add] = _binary(operator.add, scaled=True)
    for func in (torch.sub, torch.subtract):
        t[func] = _binary(operator.sub, scaled=True)
    for func in (torch.mul, torch.multiply):
        t[func] = _binary(operator.mul)
    for func in (torch.div, torch.divide, torch.true_divide):
        t[func] = _binary(operator.truediv)
    t[torch.pow] = _binary(operator.pow, second="exponent")
    t[torch.minimum] = _elementwise_pair("minimum", fn.minimum)
    t[torch.maximum] = _elementwise_pair("maximum", fn.maximum)
    for func in (torch.clamp, torch.clip):
        t[func] = _clamp(("min", "max"))
    t[torch.clamp_min] = _clamp(("min",))
    t[torch.clamp_max] = _clamp(("max",))
    t[torch.where] = _where
    t[torch.matmul] = _matmul
    t[torch.stack] = _sequence(stack, "stack")
    for func in (torch.cat, torch.concat, torch.concatenate):
        t[func] = _sequence(cat, "cat")
    _TABLE = t
    return t


#: ``public torch name -> what to use`` for torch functions with no typed meaning
_HINTS: dict[str, str] = {
    "torch.trace": "neml2.tensors.tr(x) (SR2, R2)",
    "torch.det": "neml2.tensors.det(x) (SR2, R2)",
    "torch.linalg.det": "neml2.tensors.det(x) (SR2, R2)",
    "torch.inverse": "neml2.tensors.inv(x) (SR2, R2, SSR4)",
    "torch.linalg.inv": "neml2.tensors.inv(x) (SR2, R2, SSR4)",
    "torch.norm": "neml2.tensors.norm(x) (sqrt(x : x)), or neml2.tensors.abs for a Scalar",
    "torch.linalg.norm": "neml2.tensors.norm(x) (sqrt(x : x))",
    "torch.linalg.vector_norm": "neml2.tensors.norm(x) (sqrt(x : x))",
    "torch.linalg.matrix_norm": "neml2.tensors.norm(x) (sqrt(x : x))",
    "torch.inner": "neml2.tensors.inner(a, b) (full contraction -> Scalar)",
    "torch.dot": "neml2.tensors.inner(a, b) (full contraction -> Scalar)",
    "torch.vdot": "neml2.tensors.inner(a, b) (full contraction -> Scalar)",
    "torch.tensordot": "neml2.tensors.inner(a, b) or neml2.tensors.matmul(a, b)",
    "torch.einsum": "the typed contractions neml2.tensors.matmul / inner / outer",
    "torch.outer": "neml2.tensors.outer(a, b) (SR2 x SR2 -> SSR4, Vec x Vec -> R2)",
    "torch.ger": "neml2.tensors.outer(a, b)",
    "torch.bmm": "neml2.tensors.matmul(a, b)",
    "torch.mm": "neml2.tensors.matmul(a, b)",
    "torch.mv": "neml2.tensors.matmul(a, b)",
    "torch.cross": "a.cross(b) (Vec)",
    "torch.linalg.cross": "a.cross(b) (Vec)",
    "torch.transpose": (
        "neml2.tensors.transpose(x) for the base (R2, SSR4), x.batch.movedim(i, j) for batch axes"
    ),
    "torch.t": "neml2.tensors.transpose(x) (R2, SSR4)",
    "torch.permute": "x.batch.movedim(i, j) (batch axes) or neml2.tensors.transpose (base)",
    "torch.movedim": "x.batch.movedim(i, j) (or x.dynamic_batch / x.sub_batch)",
    "torch.moveaxis": "x.batch.movedim(i, j) (or x.dynamic_batch / x.sub_batch)",
    "torch.swapaxes": "x.batch.movedim(i, j) (or x.dynamic_batch / x.sub_batch)",
    "torch.matrix_exp": "neml2.tensors.exp_map(w) for a WR2 (-> MRP)",
    "torch.linalg.matrix_exp": "neml2.tensors.exp_map(w) for a WR2 (-> MRP)",
    "torch.log10": "neml2.tensors.log(x) / math.log(10.0)",
    "torch.log2": "neml2.tensors.log(x) / math.log(2.0)",
    "torch.log1p": "neml2.tensors.log(1.0 + x)",
    "torch.expm1": "neml2.tensors.exp(x) - 1.0",
    "torch.exp2": "2.0 ** x",
    "torch.float_power": "x ** n (neml2.tensors.pow)",
    "torch.sigmoid": "1.0 / (1.0 + neml2.tensors.exp(-x))",
    "torch.special.expit": "1.0 / (1.0 + neml2.tensors.exp(-x))",
    "torch.sign": "neml2.tensors.heaviside(x) - neml2.tensors.heaviside(-x)",
    "torch.sgn": "neml2.tensors.heaviside(x) - neml2.tensors.heaviside(-x)",
    "torch.heaviside": "neml2.tensors.heaviside(x) (1 where x > 0, else 0)",
    "torch.max": (
        "neml2.tensors.maximum(a, b) (elementwise); for a reduction over batch axes take x.data"
    ),
    "torch.min": (
        "neml2.tensors.minimum(a, b) (elementwise); for a reduction over batch axes take x.data"
    ),
    "torch.amax": "a reduction of x.data (no typed max reduction)",
    "torch.amin": "a reduction of x.data (no typed min reduction)",
    "torch.fmax": "neml2.tensors.maximum(a, b)",
    "torch.fmin": "neml2.tensors.minimum(a, b)",
    "torch.sum": "x.batch.sum(dim) (or x.dynamic_batch.sum / x.sub_batch.sum)",
    "torch.mean": "x.batch.mean(dim) (or x.dynamic_batch.mean / x.sub_batch.mean)",
    "torch.reshape": "x.dynamic_batch.reshape(*shape) (or x.sub_batch.reshape)",
    "torch.flatten": "x.dynamic_batch.reshape(-1) (or x.sub_batch.reshape)",
    "torch.unsqueeze": "x.dynamic_batch.unsqueeze(dim) (or x.sub_batch / x.batch)",
    "torch.squeeze": "x.dynamic_batch.squeeze(dim) (or x.sub_batch / x.batch)",
    "torch.broadcast_to": "x.batch.expand(*shape) (or x.dynamic_batch.expand)",
    "torch.zeros_like": "Type.zeros_like(x) (e.g. SR2.zeros_like(x))",
    "torch.ones_like": "Type.ones_like(x) (e.g. Scalar.ones_like(x))",
    "torch.full_like": "Type.full(value, x.batch_shape, x.sub_batch_ndim, dtype=x.dtype)",
    "torch.empty_like": "Type.zeros_like(x)",
    "torch.linspace": "neml2.tensors.linspace(start, end, steps)",
    "torch.logspace": "neml2.tensors.logspace(start, end, steps)",
    "torch.isnan": "torch.isnan(x.data)",
    "torch.isinf": "torch.isinf(x.data)",
    "torch.isfinite": "torch.isfinite(x.data)",
    "torch.allclose": "torch.allclose(a.data, b.data)",
    "torch.isclose": "torch.isclose(a.data, b.data)",
    "torch.equal": "torch.equal(a.data, b.data)",
}


#: ``torch.Tensor`` method name -> the typed value's reflected operator (``t * x`` arrives
#: as ``torch.Tensor.mul(t, x)`` and is answered with ``x.__rmul__(t)``)
_REFLECTED_NAMES = {
    "add": "__radd__",
    "sub": "__rsub__",
    "mul": "__rmul__",
    "div": "__rtruediv__",
    "true_divide": "__rtruediv__",
    "pow": "__rpow__",
    "__pow__": "__rpow__",
    "lt": "__gt__",
    "le": "__ge__",
    "gt": "__lt__",
    "ge": "__le__",
}
#: the same, keyed by the method objects (a dict lookup Dynamo traces; names it cannot)
_REFLECTED: dict[Callable, str] = {
    getattr(torch.Tensor, name): op for name, op in _REFLECTED_NAMES.items()
}


def dispatch(func: Callable, args: tuple, kwargs: dict) -> Any:
    """Run ``func(*args, **kwargs)`` for typed values (see the module docstring).

    Args:
        func: the torch function called (``torch.exp``, ``torch.Tensor.mul``, ...).
        args: its positional arguments, at least one of which is typed.
        kwargs: its keyword arguments.

    Returns:
        The typed result, or ``NotImplemented`` for a ``torch.Tensor`` method whose
            ``self`` is a raw tensor (Python then tries the reflected operator).

    Raises:
        TypeError: ``func`` has no typed meaning for these arguments; the message names
            the ``neml2.tensors`` function to use, or says to take ``x.data``.
    """
    h = (_TABLE or _table()).get(func)
    if h is not None:
        return h(func, args, kwargs)
    if args and isinstance(args[0], torch.Tensor):
        # ``t * x`` arrives as ``torch.Tensor.mul(t, x)``: answer with ``x.__rmul__(t)``
        # at once (what Python would try next, without the exception round trip)
        reflected = _REFLECTED.get(func)
        if reflected is not None and len(args) == 2 and not kwargs:
            if isinstance(args[1], TensorWrapper):
                return getattr(args[1], reflected)(args[0])
        # any other method of a raw tensor (``t == x``, ``t @ x``) goes back to Python's
        # operator protocol (traced code: always, as Dynamo cannot read the method's name)
        if torch.compiler.is_compiling() or _is_tensor_method(func):
            return NotImplemented
    raise _refuse(func, args, kwargs, _HINTS.get(torch_name(func)))


__all__ = ["dispatch", "supported", "torch_name"]
