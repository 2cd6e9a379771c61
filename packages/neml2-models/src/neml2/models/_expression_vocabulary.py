"""What a ``[Tensors] type = Python`` expression may name, call and read: the allow-list.

Everything here is listed by name; nothing is reached by walking a module:

- :data:`TENSOR_NAMES`: the typed-tensor types and functions of :mod:`neml2.tensors`;
- :data:`QUALIFIED`: functions and constants of ``torch``, ``math`` and ``numpy``
  (``np``) by qualified name (``torch.linspace``, ``math.pi``, ``np.linspace``);
  the modules themselves are never values, so ``torch.os``, ``torch.save`` or
  ``torch.load`` are simply not in the table;
- :data:`BUILTIN_NAMES`: a few builtins;
- the attributes each kind of value may have (:func:`attributes_of`): the typed
  tensors' regions and methods, ``.data``, ``.shape``, tensor methods such as
  ``.reshape`` or ``.unsqueeze``; no attribute that starts with ``_``, no string
  method (``str.format``).

Each callable comes with a guard (:mod:`neml2.models._expression_limits`) that
refuses a call whose result would exceed the size limits before it runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any

import numpy as np
import torch

from neml2 import tensors
from neml2.models._expression_limits import (
    Guard,
    all_of,
    arange_length,
    broadcast_bound,
    elements,
    is_array,
    iterates,
    matmul_bound,
    nested_bound,
    no_strings,
    numel,
    pad_bound,
    power_guard,
    range_guard,
    shape_arguments,
    steps_argument,
    total_size,
)
from neml2.tensors import RegionView, TensorWrapper

# ------------------------------------------------------------------ guards
#: the default: an elementwise result, as large as its broadcast arguments
BROADCAST = elements(lambda a, k: broadcast_bound([*a, *k.values()]))
#: the first argument (or ``data=``) is nested data: ``torch.tensor([[...]])``
DATA = elements(lambda a, k: nested_bound(a[0] if a else k.get("data", k.get("object"))))
#: every positional argument (or ``size=``) is a size: ``torch.zeros(3, 4)``
SIZES = elements(lambda a, k: shape_arguments(a, k, ("size", "shape")))
#: the first argument (or ``size=``) is the shape: ``torch.full((3, 3), 1.0)``
FIRST_SIZE = elements(lambda a, k: shape_arguments(a[:1], k, ("size", "shape")))
#: ``linspace(start, end, steps)``
STEPS = elements(steps_argument)
#: ``arange([start,] end[, step])``
ARANGE = elements(arange_length)
#: a sequence of tensors: ``stack``, ``cat``
TOTAL = elements(
    lambda a, k: total_size(a[0] if a else k.get("tensors", k.get("values", k.get("arrays", ()))))
)


def _eye(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    n = args[0] if args else kwargs.get("n", kwargs.get("N", 1))
    m = args[1] if len(args) > 1 else kwargs.get("m", kwargs.get("M", n))
    return shape_arguments((n, m if isinstance(m, int) else n), {}, ())


def _diag(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    x = args[0] if args else kwargs.get("input")
    return numel(x) ** 2


def _matmul(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    a = args[0] if args else kwargs.get("input")
    b = args[1] if len(args) > 1 else kwargs.get("other")
    return matmul_bound(a, b)


def _outer(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    bases = [math.prod(v.base_shape) for v in args if isinstance(v, TensorWrapper)]
    return broadcast_bound(args) * max(bases, default=1)


EYE = elements(_eye)
# ------------------------------------------------------------------ torch, math, numpy

#: ``torch`` names: function -> guard (None: :data:`BROADCAST`)
_TORCH_FUNCTIONS: dict[str, Guard | None] = {
    **dict.fromkeys(("tensor", "as_tensor"), DATA),
    **dict.fromkeys(("zeros", "ones"), SIZES),
    "full": FIRST_SIZE,
    "eye": EYE,
    **dict.fromkeys(("linspace", "logspace"), STEPS),
    "arange": ARANGE,
    **dict.fromkeys(("stack", "cat", "concat", "hstack", "vstack"), TOTAL),
    "diag": elements(_diag),
    "matmul": elements(_matmul),
    "nn.functional.pad": elements(pad_bound),
    **dict.fromkeys(
        (
            # like another tensor
            "zeros_like", "ones_like", "full_like", "broadcast_to", "tril", "triu", "where",
            # elementwise
            "abs", "sqrt", "exp", "log", "log10", "log2", "log1p", "expm1", "sin", "cos",
            "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh",
            "tanh", "asinh", "acosh", "atanh", "sign", "floor", "ceil", "round", "trunc",
            "square", "reciprocal", "rsqrt", "erf", "erfc", "deg2rad", "rad2deg", "neg",
            "sigmoid", "clamp", "clip", "maximum", "minimum", "atan2", "pow", "hypot",
            "fmod", "remainder", "lerp",
            # reductions and shapes
            "sum", "mean", "prod", "amax", "amin", "cumsum", "cumprod", "diff", "norm",
            "reshape", "unsqueeze", "squeeze", "flatten", "flip", "transpose", "permute",
            "movedim", "linalg.norm", "linalg.vector_norm", "linalg.det", "linalg.inv",
        ),
        None,
    ),
}  # fmt: skip

_TORCH_CONSTANTS = (
    "float64", "float32", "float16", "bfloat16", "double", "float", "half", "int64",
    "int32", "int16", "int8", "uint8", "long", "int", "bool", "pi", "e", "inf", "nan",
)  # fmt: skip

_MATH_FUNCTIONS = (
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log10", "log2", "log1p", "sin", "cos",
    "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "pow", "fabs", "floor", "ceil", "trunc", "hypot", "degrees", "radians",
    "copysign", "fmod", "remainder", "isclose", "isfinite", "isinf", "isnan", "erf",
    "erfc", "gamma", "lgamma", "isqrt", "gcd",
)  # fmt: skip

_MATH_CONSTANTS = ("pi", "e", "tau", "inf", "nan")

_NUMPY_FUNCTIONS: dict[str, Guard | None] = {
    **dict.fromkeys(("array", "asarray"), DATA),
    **dict.fromkeys(("zeros", "ones", "full"), FIRST_SIZE),
    "eye": EYE,
    **dict.fromkeys(("linspace", "logspace"), STEPS),
    "arange": ARANGE,
    **dict.fromkeys(("stack", "concatenate"), TOTAL),
    **dict.fromkeys(
        (
            "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
            "arctan2", "sinh", "cosh", "tanh", "abs", "maximum", "minimum", "where",
            "radians", "degrees", "sum", "mean", "cumsum", "reshape", "transpose",
        ),
        None,
    ),
}  # fmt: skip

_NUMPY_CONSTANTS = ("pi", "e", "inf", "nan")

#: numpy scalar types: a dtype (``dtype=np.float64``) and a constructor (``np.float64(1)``)
_NUMPY_TYPES = ("float64", "float32", "int64", "int32")


def _numpy_bound(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    """numpy turns a list argument into an array: the broadcast of the arrays times the
    size of each nested list (a product, as a list may broadcast against them)."""
    values = [*args, *kwargs.values()]
    lists = [max(nested_bound(v), 1) for v in values if isinstance(v, list | tuple)]
    return broadcast_bound(values) * math.prod(lists)


def _numpy(guard: Guard | None) -> Guard:
    """A numpy function's guard: *guard* (default: the arrays' broadcast and the sizes
    of nested lists), then no strings in its arguments."""
    return all_of(guard or elements(_numpy_bound), no_strings)


#: the names an expression uses for the modules (never values themselves)
MODULE_NAMES = {"torch": torch, "math": math, "np": np, "numpy": np}


def _resolve(module: Any, dotted: str) -> Any:
    return reduce(getattr, dotted.split("."), module)


def _table() -> tuple[dict[str, tuple[Any, Guard]], dict[str, Any]]:
    functions: dict[str, tuple[Any, Guard]] = {}
    constants: dict[str, Any] = {}

    def add(prefixes, module, names, guard_of):
        for name in names:
            try:
                value = _resolve(module, name)
            except AttributeError:  # not in this torch / numpy version
                continue
            for prefix in prefixes:
                if guard_of is None:
                    constants[f"{prefix}.{name}"] = value
                else:
                    functions[f"{prefix}.{name}"] = (value, guard_of(name) or BROADCAST)

    add(("torch",), torch, _TORCH_FUNCTIONS, _TORCH_FUNCTIONS.get)
    add(("torch",), torch, _TORCH_CONSTANTS, None)
    add(("math",), math, _MATH_FUNCTIONS, lambda n: BROADCAST)
    add(("math",), math, _MATH_CONSTANTS, None)
    add(("np", "numpy"), np, _NUMPY_FUNCTIONS, lambda n: _numpy(_NUMPY_FUNCTIONS[n]))
    add(("np", "numpy"), np, (*_NUMPY_CONSTANTS, *_NUMPY_TYPES), None)
    return functions, constants


#: qualified name (``torch.linspace``) -> (function, guard)
QUALIFIED_FUNCTIONS, QUALIFIED_CONSTANTS = _table()
#: every qualified name an expression may use
QUALIFIED = {*QUALIFIED_FUNCTIONS, *QUALIFIED_CONSTANTS}
#: the module paths that lead to listed names (``torch``, ``torch.nn.functional``)
MODULE_PATHS = {".".join(q.split(".")[:i]) for q in QUALIFIED for i in range(1, q.count(".") + 1)}


def listed_under(path: str) -> list[str]:
    """The names listed directly under the module path *path* (``torch`` -> ``linspace``...)."""
    prefix = path + "."
    return sorted({q[len(prefix) :].split(".")[0] for q in QUALIFIED if q.startswith(prefix)})


# ------------------------------------------------------------------ neml2.tensors
#: the typed-tensor types (their constructors and listed class attributes)
TYPES = (
    tensors.Scalar,
    tensors.Vec,
    tensors.SR2,
    tensors.R2,
    tensors.WR2,
    tensors.SSR4,
    tensors.MRP,
    tensors.Quaternion,
    tensors.MillerIndex,
    tensors.Tensor,
)

#: the functions of :mod:`neml2.tensors` an expression may call -> guard
TENSOR_FUNCTIONS: dict[str, Guard] = {
    **dict.fromkeys(("linspace", "logspace"), STEPS),
    **dict.fromkeys(("stack", "cat"), TOTAL),
    "base_stack": elements(lambda a, k: total_size(a[1] if len(a) > 1 else k.get("comps", ()))),
    "outer": elements(_outer),
    "pow": power_guard,  # pow(2, 10**9) is an integer
    **dict.fromkeys(
        (
            "abs", "arccos", "arctan", "clamp", "cos", "cosh", "det", "dev", "exp", "exp_map",
            "heaviside", "inner", "inv", "log", "macaulay", "matmul", "maximum", "minimum",
            "norm", "norm_sq", "rotate", "rotation_matrix", "sin", "sinh", "skew",
            "sqrt", "sym", "tan", "tanh", "tr", "transpose", "vol", "where",
        ),
        BROADCAST,
    ),
}  # fmt: skip

#: every name of the typed-tensor API an expression sees
TENSOR_NAMES = (*(t.__name__ for t in TYPES), *TENSOR_FUNCTIONS)


def _base_numel(cls: type) -> int:
    base = getattr(cls, "BASE_SHAPE", ())
    return math.prod(base) if isinstance(base, tuple) else 1


def _class_sizes(cls: type) -> Guard:
    """``SR2.zeros(batch_shape)``, ``Scalar.full(200, fill_value=0.01)``: sizes x base."""
    base = _base_numel(cls)
    names = ("batch_shape", "base_shape", "shape")
    return elements(lambda a, k: shape_arguments(a, k, names) * base)


def _class_identity(cls: type) -> Guard:
    """``SR2.identity()``; ``Tensor.identity(n)`` is ``(n, n)``."""
    base = _base_numel(cls)
    return elements(lambda a, k: shape_arguments(a, k, ("n",)) ** 2 * base)


def _class_broadcast(cls: type) -> Guard:
    """``SR2.fill(a, b, c)``, ``SSR4.isotropic_E_nu(E, nu)``: the broadcast x base."""
    base = _base_numel(cls)
    return elements(lambda a, k: broadcast_bound([*a, *k.values()]) * base)


#: typed-tensor classes: attribute -> guard factory (None: a plain value)
CLASS_ATTRIBUTES = {
    **dict.fromkeys(("identity", "identity_sym", "identity_vol", "identity_dev"), _class_identity),
    **dict.fromkeys(("zeros", "ones", "full"), _class_sizes),
    **dict.fromkeys(
        (
            "fill", "zeros_like", "ones_like", "isotropic_E_nu", "isotropic_K_G",
            "isotropic_lame", "from_axis_angle", "from_matrix",
        ),
        _class_broadcast,
    ),
    "BASE_SHAPE": None,
}  # fmt: skip

_OUTER = elements(_outer)

#: a typed tensor's attributes (methods get the guard; a method's arguments include the tensor)
TYPED_ATTRIBUTES: dict[str, Guard] = {
    **dict.fromkeys(
        (
            # data, shapes and regions
            "data", "dtype", "device", "shape", "batch_shape", "dynamic_shape",
            "sub_batch_shape", "base_shape", "batch_ndim", "dynamic_ndim", "sub_batch_ndim",
            "base_ndim", "batch", "dynamic_batch", "sub_batch", "base",
            # methods
            "clone", "contiguous", "detach", "item", "tr", "vol", "dev", "inner", "norm",
            "norm_sq", "det", "inv", "transpose", "T", "sym", "skew", "rotate", "to_R2",
            "to_vec", "normalized", "to_quaternion", "inverse", "compose", "exp", "to_full",
            "matmul",
        ),
        BROADCAST,
    ),
    "outer": _OUTER,
}  # fmt: skip

#: a region view (``x.batch``, ``x.dynamic_batch``, ``x.sub_batch``, ``x.base``)
REGION_ATTRIBUTES: dict[str, Guard] = dict.fromkeys(
    ("expand", "reshape", "retag", "shape", "size", "squeeze", "unsqueeze", "sum", "mean",
     "movedim", "ndim"),
    BROADCAST,
)  # fmt: skip

#: a torch.Tensor (``x.data``, ``torch.linspace(...)``)
TORCH_TENSOR_ATTRIBUTES: dict[str, Guard] = dict.fromkeys(
    (
        "shape", "dtype", "device", "ndim", "T", "mT", "unsqueeze", "squeeze", "reshape",
        "view", "expand", "expand_as", "contiguous", "clone", "detach", "flip", "transpose",
        "permute", "movedim", "flatten", "sum", "mean", "prod", "amax", "amin", "min", "max",
        "abs", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "square", "pow", "clamp",
        "item", "size", "dim", "numel", "double", "float", "cumsum", "diff", "norm",
    ),
    BROADCAST,
)  # fmt: skip

#: a numpy array
NDARRAY_ATTRIBUTES: dict[str, Guard] = dict.fromkeys(
    ("shape", "ndim", "size", "dtype", "T", "reshape", "sum", "mean", "min", "max", "item",
     "flatten", "copy"),
    BROADCAST,
)  # fmt: skip

#: a dict literal, a list or a tuple
DICT_ATTRIBUTES: dict[str, Guard] = dict.fromkeys(("get", "keys", "values", "items"), iterates)
SEQUENCE_ATTRIBUTES: dict[str, Guard] = dict.fromkeys(("index", "count"), iterates)

#: every attribute name some value may have (for the check before evaluation)
ALL_ATTRIBUTES = {
    *CLASS_ATTRIBUTES,
    *TYPED_ATTRIBUTES,
    *REGION_ATTRIBUTES,
    *TORCH_TENSOR_ATTRIBUTES,
    *NDARRAY_ATTRIBUTES,
    *DICT_ATTRIBUTES,
    *SEQUENCE_ATTRIBUTES,
}


def attributes_of(value: Any) -> tuple[str, Mapping[str, Any]]:
    """What *value* is, in words, and the attributes it may have (name -> guard).

    Args:
        value: A value the expression made.

    Returns:
        ``("a torch.Tensor", {...})``; an empty table for a value with no allowed
            attribute (a string, a number, a dtype, a function).
    """
    if isinstance(value, type) and value in TYPES:
        return f"the type {value.__name__}", {
            n: (f(value) if f is not None else None) for n, f in CLASS_ATTRIBUTES.items()
        }
    if isinstance(value, TensorWrapper):
        return f"a {type(value).__name__}", TYPED_ATTRIBUTES
    if isinstance(value, RegionView):
        return "a region view (x.batch, x.dynamic_batch, x.sub_batch, x.base)", REGION_ATTRIBUTES
    if isinstance(value, torch.Tensor):
        return "a torch.Tensor", TORCH_TENSOR_ATTRIBUTES
    if isinstance(value, np.ndarray):
        return "a numpy array", NDARRAY_ATTRIBUTES
    if isinstance(value, dict):
        return "a dict", DICT_ATTRIBUTES
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__}", SEQUENCE_ATTRIBUTES
    if isinstance(value, str):
        return "a string", {}
    return f"a value of type {type(value).__name__}", {}


# ------------------------------------------------------------------ builtins
#: the builtins an expression may call (``abs`` and ``pow`` are neml2.tensors', which
#: take numbers too); no builtin imports, opens files, evaluates text or reaches
#: attributes by name
BUILTIN_NAMES = (
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "int",
    "isinstance", "len", "list", "map", "max", "min", "pow", "range", "reversed", "round",
    "slice", "sorted", "sum", "tuple", "zip",
)  # fmt: skip

#: builtin types an expression may call (and give to isinstance) -> guard
BUILTIN_TYPES: dict[type, Guard] = {
    bool: BROADCAST,
    int: BROADCAST,
    float: BROADCAST,
    slice: BROADCAST,
    list: iterates,
    tuple: iterates,
    dict: iterates,
    enumerate: iterates,
    reversed: iterates,
    zip: iterates,
    range: range_guard,
}

#: types called as constructors: the typed tensors, numpy scalar types -> guard
CONSTRUCTORS: dict[type, Guard] = {
    **dict.fromkeys(TYPES, DATA),
    **{getattr(np, n): _numpy(DATA) for n in _NUMPY_TYPES},
    **BUILTIN_TYPES,
}


def is_data(value: Any) -> bool:
    """Whether *value* is data (not a function): a result an expression may produce."""
    return is_array(value) or not callable(value)


def describe() -> str:
    """The allow-list in words, for the ``Python`` docstring (``neml2-syntax Python``).

    Returns:
        Markdown-ish lines, indented by four spaces like the rest of a class docstring.
    """
    modules = sorted((p for p in MODULE_PATHS if p != "numpy"), key=lambda p: (p[0] != "t", p))
    lines = ["", "The listed names (the allow-list itself, generated from its tables):", ""]
    for path in modules:
        alias = " (also ``numpy``)" if path == "np" else ""
        names = [n for n in listed_under(path) if f"{path}.{n}" in QUALIFIED]
        if names:
            lines.append(f"- ``{path}``{alias}: {', '.join(names)}")
    lines += [
        f"- the typed-tensor types: {', '.join(t.__name__ for t in TYPES)}; their class "
        f"attributes: {', '.join(sorted(CLASS_ATTRIBUTES))}",
        f"- the ``neml2.tensors`` functions: {', '.join(sorted(TENSOR_FUNCTIONS))}",
        f"- a typed tensor's attributes: {', '.join(sorted(TYPED_ATTRIBUTES))}",
        f"- a region view's (``x.batch``, ``x.dynamic_batch``, ``x.sub_batch``, ``x.base``): "
        f"{', '.join(sorted(REGION_ATTRIBUTES))}",
        f"- a ``torch.Tensor``'s: {', '.join(sorted(TORCH_TENSOR_ATTRIBUTES))}",
        f"- a numpy array's: {', '.join(sorted(NDARRAY_ATTRIBUTES))}",
        f"- a dict's: {', '.join(sorted(DICT_ATTRIBUTES))}; a list's or tuple's: "
        f"{', '.join(sorted(SEQUENCE_ATTRIBUTES))}",
        f"- the builtins: {', '.join(BUILTIN_NAMES)}",
    ]
    return "\n".join(f"    {line}" if line else "" for line in lines) + "\n"
