"""Typed tensors for neml2 and the error taxonomy.

Types (base shape): ``Scalar ()``, ``Vec (3)``, ``SR2 (6, Mandel)``, ``R2 (3, 3)``,
``WR2 (3, axial vector)``, ``SSR4 (6, 6, Mandel)``, ``MRP (3)``, ``Quaternion (4)``,
``MillerIndex (3, int64)`` and the dynamic-base ``Tensor``. Storage
``(*dynamic_batch, *sub_batch, *base)``; values may carry forward-mode tangents
(:func:`seed`, :func:`attach`, :func:`tangents_of`).

``torch.exp(x)`` and the other functions of :data:`TORCH_FUNCTIONS` accept typed values
(through ``__torch_function__``); other torch functions raise a ``TypeError`` naming
what to use. A missing attribute (a spelling of the reference library, such as
``Scalar.linspace``) raises an ``AttributeError`` with ``did you mean``.

Errors: :class:`FatalError` (bad input, artifact or option), :class:`ConvergenceError`
(recoverable); :class:`Interrupted` (SIGINT / SIGTERM, see :mod:`neml2.tensors.interrupt`).
Conversions between the Mandel storage and a host code's Voigt vectors and tangents
(plain tensors): the submodule :mod:`neml2.tensors.notation`.
"""

from neml2.tensors import _pytree
from neml2.tensors._base import MATMUL_RULES, TensorWrapper, register_matmul
from neml2.tensors._boundary import broadcast_batch_shapes, checked_parameter
from neml2.tensors._errors import (
    ConvergenceError,
    FatalError,
    NEML2Error,
    ShapeError,
    point_list,
)
from neml2.tensors._factories import base_stack, cat, constant, linspace, logspace, stack
from neml2.tensors._functions import (
    abs,
    arccos,
    arctan,
    clamp,
    compose,
    cos,
    cosh,
    det,
    dev,
    exp,
    exp_map,
    heaviside,
    inner,
    inv,
    log,
    macaulay,
    matmul,
    maximum,
    minimum,
    norm,
    norm_sq,
    outer,
    pow,
    rotate,
    sin,
    sinh,
    skew,
    sqrt,
    sym,
    tan,
    tanh,
    tr,
    transpose,
    vol,
    where,
)
from neml2.tensors._kernels import use_cpu_kernels
from neml2.tensors._miller import MillerIndex
from neml2.tensors._r2 import R2
from neml2.tensors._regions import RegionView
from neml2.tensors._rotations import MRP, Quaternion, rotation_matrix
from neml2.tensors._scalar import Scalar
from neml2.tensors._seed import attach, jacobian_block, seed, tangents2_of, tangents_of
from neml2.tensors._sr2 import SR2
from neml2.tensors._ssr4 import SSR4
from neml2.tensors._tensor import Tensor
from neml2.tensors._torch_function import supported as _supported_torch_functions
from neml2.tensors._vec import Vec
from neml2.tensors._wr2 import WR2
from neml2.tensors.interrupt import Interrupted

#: The concrete typed tensors (all registered as pytree nodes).
TYPES = (Scalar, Vec, SR2, R2, WR2, SSR4, MRP, Quaternion, MillerIndex, Tensor)
for _cls in TYPES:
    _pytree.register(_cls)
del _cls

#: The torch functions that accept typed values (``torch.exp(x)`` runs
#: :func:`neml2.tensors.exp`, tangents included). Any other torch function raises a
#: ``TypeError`` naming the ``neml2.tensors`` function to use, or saying to take ``x.data``.
TORCH_FUNCTIONS: tuple[str, ...] = tuple(_supported_torch_functions())

__all__ = [
    "MATMUL_RULES",
    "MRP",
    "R2",
    "SR2",
    "SSR4",
    "TORCH_FUNCTIONS",
    "TYPES",
    "WR2",
    "ConvergenceError",
    "FatalError",
    "Interrupted",
    "MillerIndex",
    "NEML2Error",
    "Quaternion",
    "RegionView",
    "Scalar",
    "ShapeError",
    "Tensor",
    "TensorWrapper",
    "Vec",
    "abs",
    "arccos",
    "arctan",
    "attach",
    "base_stack",
    "broadcast_batch_shapes",
    "cat",
    "checked_parameter",
    "clamp",
    "compose",
    "constant",
    "cos",
    "cosh",
    "det",
    "dev",
    "exp",
    "exp_map",
    "heaviside",
    "inner",
    "inv",
    "jacobian_block",
    "linspace",
    "log",
    "logspace",
    "macaulay",
    "matmul",
    "maximum",
    "minimum",
    "norm",
    "norm_sq",
    "outer",
    "point_list",
    "pow",
    "register_matmul",
    "rotate",
    "rotation_matrix",
    "seed",
    "sin",
    "sinh",
    "skew",
    "sqrt",
    "stack",
    "sym",
    "tan",
    "tangents2_of",
    "tangents_of",
    "tanh",
    "tr",
    "transpose",
    "use_cpu_kernels",
    "vol",
    "where",
]
