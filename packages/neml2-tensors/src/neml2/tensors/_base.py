"""``TensorWrapper``: the base of every typed tensor.

Storage is one torch tensor ``data`` of shape ``(*dynamic_batch, *sub_batch, *base)``;
``sub_batch_ndim`` says how many trailing batch axes are sub-batch (per-slip-system,
per-grain, ...). ``base`` is fixed by the type (``SR2``: ``(6,)``) except for the
dynamic-base :class:`~neml2.tensors.Tensor`.

A value may carry forward-mode tangents (see :mod:`neml2.tensors._tangents`):

* ``tangents``: ``None`` or ``dict[leaf, Tensor]`` of shape ``(K, *data.shape)``
  (sizes may be 1 where ``data``'s are not),
* ``tangents2``: ``None`` (second order off) or ``dict[(leaf_a, leaf_b), Tensor]`` of shape
  ``(K_a, K_b, *data.shape)``.

Every typed op propagates them; absent keys are structural zeros.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from neml2.tensors import _tangents as T
from neml2.tensors._broadcast import (
    _as_dual,
    _lined_up,
    _tracing,
    align,
    describe,
    insert_singletons,
)
from neml2.tensors._errors import ShapeError
from neml2.tensors._spellings import missing_attribute
from neml2.tensors._tangents import Dual

Number = numbers.Number

#: ``(type(a), type(b)) -> (result type, bilinear raw fn)`` for ``a @ b``.
MATMUL_RULES: dict[tuple[type, type], tuple[type, Callable]] = {}


def register_matmul(a: type, b: type, out: type, fn: Callable) -> None:
    """Declare ``a @ b -> out`` computed by the bilinear raw function ``fn(pa, pb)``.

    Args:
        a: The left operand's type.
        b: The right operand's type.
        out: The result's type.
        fn: ``fn(pa, pb)`` on the raw ``(..., *a_base)`` and ``(..., *b_base)`` tensors,
            returning ``(..., *out_base)``; it must be bilinear, since tangents are
            propagated through it.
    """
    MATMUL_RULES[(a, b)] = (out, fn)


def _is_const(x: Any) -> bool:
    # the common operands first: the abstract Number check costs about a microsecond
    t = type(x)
    if t is float or t is int:
        return True
    if isinstance(x, TensorWrapper):
        return False
    return isinstance(x, Number | np.number) or (isinstance(x, torch.Tensor) and x.dim() == 0)


def as_tensor(data: Any, dtype=None, device=None) -> torch.Tensor:
    """Convert lists / numbers / numpy arrays / tensors to a torch tensor.

    Python floats use torch's default dtype unless ``dtype`` is given.
    """
    if isinstance(data, torch.Tensor):
        t = data
    elif isinstance(data, np.ndarray):
        t = torch.from_numpy(data)
    else:
        t = torch.as_tensor(data, dtype=dtype)
        if dtype is None and not t.is_floating_point() and not isinstance(data, bool):
            if isinstance(data, float) or (
                isinstance(data, list | tuple) and any(isinstance(v, float) for v in _flat(data))
            ):
                t = t.to(torch.get_default_dtype())
    if dtype is not None or device is not None:
        t = t.to(dtype=dtype, device=device)
    return t


def _flat(x):
    if isinstance(x, list | tuple):
        for v in x:
            yield from _flat(v)
    else:
        yield x


class TypedMeta(type):
    """Metaclass of the typed tensors: a class attribute that does not exist raises an
    ``AttributeError`` saying what to use (``Scalar.linspace`` -> ``did you mean
    neml2.tensors.linspace(...)?``). Reached only after the ordinary lookup failed."""

    def __getattr__(cls, name: str):
        raise AttributeError(missing_attribute(cls, name, on_class=True))


class TensorWrapper(metaclass=TypedMeta):
    """Typed tensor: ``data (*dynamic_batch, *sub_batch, *base)`` + ``sub_batch_ndim``.

    Construct with ``Type(data, sub_batch_ndim=0)``; ``data`` may be a tensor, a nested
    list, a number (``Scalar``) or another wrapper with the same base shape (typed cast,
    keeps its tangents).
    """

    BASE_SHAPE: ClassVar[tuple[int, ...]] = ()
    _base_ndim: int = 0
    _is_scalar: ClassVar[bool] = False
    _elementwise: ClassVar[bool] = False  # elementwise * / math functions allowed

    data: torch.Tensor
    sub_batch_ndim: int
    tangents: dict[str, torch.Tensor] | None
    tangents2: dict[tuple[str, str], torch.Tensor] | None
    #: the integer dtype of the data given to the constructor when it was converted to a
    #: floating dtype (``SR2(torch.zeros(6, dtype=torch.int64))`` holds ``float32`` data,
    #: ``converted_from`` ``torch.int64``), so that a model refusing the dtype can say what
    #: was given; ``None`` otherwise (and on every value computed from this one)
    converted_from: torch.dtype | None = None

    def __init__(
        self,
        data: Any,
        sub_batch_ndim: int | None = None,
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ):
        """Wrap *data* as this type.

        Args:
            data: A tensor, a nested list, a number (``Scalar``) or a numpy array of shape
                ``(*dynamic_batch, *sub_batch, *base)``; or another wrapper with the same base
                shape (a typed cast, which keeps its tangents).
            sub_batch_ndim: How many batch axes just before the base are sub-batch; default
                0 (or the wrapper's).
            dtype: Convert to this dtype; default: keep the data's (Python floats: torch's
                default dtype).
            device: Move to this device; default: keep the data's.

        Raises:
            ShapeError: If the trailing axes are not the type's base shape, or
                *sub_batch_ndim* exceeds the batch rank.
        """
        if isinstance(data, TensorWrapper):
            self._init_from_wrapper(data, sub_batch_ndim, dtype, device)
            return
        raw = as_tensor(data, dtype, device)
        t = self._coerce(raw)
        if t.dtype != raw.dtype and not (raw.is_floating_point() or raw.is_complex()):
            self.converted_from = raw.dtype
        self._check_base(t)
        self._set(t, 0 if sub_batch_ndim is None else sub_batch_ndim)

    def _init_from_wrapper(self, w, sub, dtype, device):
        t = w.data if dtype is None and device is None else w.data.to(dtype=dtype, device=device)
        t = self._coerce(t)
        self._check_base(t)
        self._set(t, w.sub_batch_ndim if sub is None else sub)
        self.tangents, self.tangents2 = w.tangents, w.tangents2

    def _set(self, t: torch.Tensor, sub: int) -> None:
        batch_ndim = t.dim() - self._base_ndim
        if not 0 <= sub <= batch_ndim:
            raise ShapeError(
                f"{type(self).__name__}: sub_batch_ndim={sub} is out of range for data of "
                f"shape {tuple(t.shape)} with base {tuple(t.shape[t.dim() - self._base_ndim :])} "
                f"(batch ndim {batch_ndim})"
            )
        self.data = t
        self.sub_batch_ndim = sub
        self.tangents = None
        self.tangents2 = None

    @classmethod
    def _coerce(cls, t: torch.Tensor) -> torch.Tensor:
        """Integer input becomes torch's default floating dtype (bool is kept)."""
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            return t
        return t.to(torch.get_default_dtype())

    def _check_base(self, t: torch.Tensor) -> None:
        base = self.BASE_SHAPE
        nb = len(base)
        if t.dim() < nb or tuple(t.shape[t.dim() - nb :]) != base:
            raise ShapeError(
                f"{type(self).__name__} needs data of shape (*batch, {', '.join(map(str, base))})"
                f" (base {base}), got {tuple(t.shape)}"
            )

    # ----------------------------------------------------------- construction
    @classmethod
    def _make(cls, data, sub, t1=None, t2=None, base_ndim=None):
        """Build without checks (internal hot path)."""
        obj = cls.__new__(cls)
        obj.data = data
        obj.sub_batch_ndim = sub
        obj.tangents = t1
        obj.tangents2 = t2
        return obj

    def _new(self, data, sub, t1=None, t2=None):
        """Same type (and base ndim) as ``self``."""
        return type(self)._make(data, sub, t1, t2, self._base_ndim)

    @classmethod
    def _from_dual(cls, d: Dual, sub: int, base_ndim: int | None = None):
        return cls._make(d.p, sub, d.t1, d.t2, base_ndim)

    def _dual(self) -> Dual:
        return Dual(self.data, self.tangents, self.tangents2)

    def _unary_dual(self, fn: Callable[[Dual], Dual], out: type | None = None, base_ndim=None):
        d = fn(self._dual())
        cls = out or type(self)
        return cls._make(d.p, self.sub_batch_ndim, d.t1, d.t2, base_ndim or self._base_ndim)

    def _lin(self, fn, out: type | None = None, base_ndim=None):
        """Apply a raw linear map on trailing dims to the value and its tangents."""
        return self._unary_dual(lambda d: d.lin(fn), out, base_ndim)

    def __getattr__(self, name: str):
        # reached only when the ordinary lookup failed: say what to use instead
        raise AttributeError(missing_attribute(type(self), name, on_class=False))

    # ------------------------------------------------------------ torch functions
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """``torch.<function>`` called with a typed value (``torch.exp(x)``, ...).

        Functions with a typed meaning run the ``neml2.tensors`` function that
        propagates the tangents too (``torch.exp`` -> :func:`neml2.tensors.exp`, on
        ``Scalar`` / ``Tensor``); see ``neml2.tensors.TORCH_FUNCTIONS``. Any other
        raises a ``TypeError`` naming what to use (or saying to take ``x.data``).
        """
        from neml2.tensors._torch_function import dispatch

        return dispatch(func, args, {} if kwargs is None else kwargs)

    # ------------------------------------------------------------ shapes
    @property
    def shape(self) -> torch.Size:
        """The full storage shape ``(*dynamic, *sub, *base)`` (torch.Size)."""
        return self.data.shape

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the data (torch.dtype)."""
        return self.data.dtype

    @property
    def device(self) -> torch.device:
        """The device of the data (torch.device)."""
        return self.data.device

    @property
    def base_ndim(self) -> int:
        """The number of base axes (int)."""
        return self._base_ndim

    @property
    def base_shape(self) -> torch.Size:
        """The base shape ``(*base)`` (torch.Size)."""
        return self.data.shape[self.data.dim() - self._base_ndim :]

    @property
    def batch_ndim(self) -> int:
        """The number of batch axes, dynamic and sub-batch (int)."""
        return self.data.dim() - self._base_ndim

    @property
    def batch_shape(self) -> torch.Size:
        """The batch shape ``(*dynamic, *sub)`` (torch.Size)."""
        return self.data.shape[: self.batch_ndim]

    @property
    def dynamic_ndim(self) -> int:
        """The number of dynamic (leading, non-sub-batch) batch axes (int)."""
        return self.data.dim() - self._base_ndim - self.sub_batch_ndim

    @property
    def dynamic_shape(self) -> torch.Size:
        """The dynamic batch shape ``(*dynamic)`` (torch.Size)."""
        return self.data.shape[: self.dynamic_ndim]

    @property
    def sub_batch_shape(self) -> torch.Size:
        """The sub-batch shape ``(*sub)`` (torch.Size)."""
        d = self.dynamic_ndim
        return self.data.shape[d : d + self.sub_batch_ndim]

    # ------------------------------------------------------------ region views
    @property
    def batch(self):
        """All batch axes (dynamic + sub-batch) as a :class:`RegionView`."""
        from neml2.tensors._regions import RegionView

        return RegionView(self, "batch")

    @property
    def dynamic_batch(self):
        """The leading (non-sub-batch) batch axes as a :class:`RegionView`."""
        from neml2.tensors._regions import RegionView

        return RegionView(self, "dynamic")

    @property
    def sub_batch(self):
        """The trailing ``sub_batch_ndim`` batch axes as a :class:`RegionView`."""
        from neml2.tensors._regions import RegionView

        return RegionView(self, "sub")

    @property
    def base(self):
        """The base axes as a :class:`RegionView`."""
        from neml2.tensors._regions import RegionView

        return RegionView(self, "base")

    # ------------------------------------------------------------ conversions
    def to(self, *args, **kwargs):
        """``torch.Tensor.to`` on the value and its tangents.

        Args:
            *args (Any): Positional arguments of ``torch.Tensor.to`` (a dtype, a device, ...).
            **kwargs (Any): Keyword arguments of ``torch.Tensor.to`` (``dtype=``, ``device=``, ...).

        Returns:
            (TensorWrapper): The same type and shape, converted; tangents converted too.
        """
        return self._lin(lambda x: x.to(*args, **kwargs))

    def clone(self):
        """A copy of the value and its tangents.

        Returns:
            (TensorWrapper): The same type and shape.
        """
        return self._lin(torch.clone)

    def contiguous(self):
        """The value and its tangents in contiguous memory.

        Returns:
            (TensorWrapper): The same type and shape.
        """
        return self._lin(lambda x: x.contiguous())

    def detach(self):
        """Detach from autograd (tangents are kept, detached too).

        Returns:
            (TensorWrapper): The same type and shape.
        """
        return self._lin(torch.Tensor.detach)

    def primal(self):
        """The value without tangents.

        Returns:
            (TensorWrapper): The same type and shape, sharing the data; no tangents.
        """
        return self._new(self.data, self.sub_batch_ndim)

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (detached, on the CPU; tangents dropped).

        Returns:
            An array of shape ``(*dynamic, *sub, *base)``.
        """
        return self.data.detach().cpu().numpy()

    def __repr__(self) -> str:
        tg = ""
        if self.tangents is not None:
            tg = f", tangents={sorted(self.tangents)}"
        if self.tangents2 is not None:
            tg += f", tangents2={sorted(self.tangents2)}"
        return f"{describe(self)[:-1]}{tg}, dtype={self.dtype})\n{self.data}"

    # ------------------------------------------------------------ tangents API
    @property
    def has_tangents(self) -> bool:
        """Whether the value carries first-order tangents (bool)."""
        return self.tangents is not None

    def tangent(self, leaf: str):
        """First-order tangent with respect to one leaf, as a typed value.

        Args:
            leaf: The leaf (seed) name.

        Returns:
            (TensorWrapper | None): The tangent, of this type, at ``(K, *B, *sub, *base)``
                with ``K`` the leaf's seed count; ``None`` when it is a structural zero.
        """
        from neml2.tensors._seed import tangent_wrapper

        if self.tangents is None or leaf not in self.tangents:
            return None
        return tangent_wrapper(self, self.tangents[leaf], 1)

    def tangent2(self, leaf_a: str, leaf_b: str):
        """Second-order tangent with respect to two leaves, as a typed value.

        Args:
            leaf_a: The first leaf name.
            leaf_b: The second leaf name.

        Returns:
            (TensorWrapper | None): The tangent, of this type, at
                ``(K_a, K_b, *B, *sub, *base)``; ``None`` when it is a structural zero.
        """
        from neml2.tensors._seed import tangent_wrapper

        if self.tangents2 is None or (leaf_a, leaf_b) not in self.tangents2:
            return None
        return tangent_wrapper(self, self.tangents2[(leaf_a, leaf_b)], 2)

    # ------------------------------------------------------------ arithmetic
    def _binary(self, other, op: str):
        """Align ``self`` and ``other`` (wrappers); return duals and sub ndim."""
        return align((self, other), op)

    def _check_same_kind(self, other, op: str) -> None:
        if type(self) is not type(other) or (
            self._is_dynamic_base and tuple(self.base_shape) != tuple(other.base_shape)
        ):
            raise TypeError(
                f"unsupported operand types for {op}: {describe(self)} and {describe(other)}"
            )

    _is_dynamic_base: ClassVar[bool] = False

    def _type_error(self, other, op: str, hint: str = ""):
        o = describe(other) if isinstance(other, TensorWrapper) else type(other).__name__
        return TypeError(
            f"unsupported operand types for {op}: {type(self).__name__} and "
            f"{type(other).__name__} ({describe(self)} {op} {o}){hint}"
        )

    def _same_kind_lined_up(self, other) -> bool:
        """Is ``other`` of this type and fixed base, lined up with ``self`` (eager, same
        batch shape, sub-batch rank and dtype: see :func:`_lined_up`)? Then ``+`` and
        ``-`` go straight to the arithmetic (about 8 instead of 16 us per operation)."""
        return type(other) is type(self) and not self._is_dynamic_base and _lined_up(self, other)

    def __add__(self, other):
        if self._same_kind_lined_up(other):
            if self.tangents is None and other.tangents is None:
                return self._make(self.data + other.data, self.sub_batch_ndim)
            return self._from_dual(_as_dual(self) + _as_dual(other), self.sub_batch_ndim)
        if _is_const(other):
            return self._unary_dual(lambda d: d + other)
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        self._check_same_kind(other, "+")
        (a, b), S = self._binary(other, "+")
        return self._from_dual(a + b, S, self._base_ndim)

    def __radd__(self, other):
        if _is_const(other):
            return self._unary_dual(lambda d: d + other)
        return NotImplemented

    def __sub__(self, other):
        if self._same_kind_lined_up(other):
            if self.tangents is None and other.tangents is None:
                return self._make(self.data - other.data, self.sub_batch_ndim)
            return self._from_dual(_as_dual(self) - _as_dual(other), self.sub_batch_ndim)
        if _is_const(other):
            return self._unary_dual(lambda d: d - other)
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        self._check_same_kind(other, "-")
        (a, b), S = self._binary(other, "-")
        return self._from_dual(a - b, S, self._base_ndim)

    def __rsub__(self, other):
        if _is_const(other):
            return self._unary_dual(lambda d: other - d)
        return NotImplemented

    def __neg__(self):
        return self._lin(torch.neg)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if _is_const(other):
            return self._lin(lambda x: x * other)
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        if self._is_scalar and other._is_scalar:
            (a, b), S = self._binary(other, "*")
            return type(self)._from_dual(a * b, S)
        if other._is_scalar:
            return _scale(self, other)
        if self._is_scalar:
            return _scale(other, self)
        if self._elementwise:
            self._check_same_kind(other, "*")
            (a, b), S = self._binary(other, "*")
            return self._from_dual(a * b, S, self._base_ndim)
        raise self._type_error(
            other, "*", "; * scales by a Scalar or a number, use @ for contractions"
        )

    def __rmul__(self, other):
        if _is_const(other):
            return self._lin(lambda x: other * x)
        return NotImplemented

    def __truediv__(self, other):
        if _is_const(other):
            return self._lin(lambda x: x / other)
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        if other._is_scalar:
            if other.tangents is None and self._is_scalar:
                (a, b), S = self._binary(other, "/")
                return type(self)._from_dual(a.lin(lambda x: x / b.p), S)
            return _scale(self, other, reciprocal=True)
        if self._elementwise:
            self._check_same_kind(other, "/")
            (a, b), S = self._binary(other, "/")
            return self._from_dual(a / b, S, self._base_ndim)
        raise self._type_error(other, "/", "; only division by a Scalar or a number is defined")

    def __rtruediv__(self, other):
        if _is_const(other) and self._elementwise:
            return self._unary_dual(lambda d: T.reciprocal(d) * other)
        if _is_const(other):
            raise TypeError(
                f"unsupported operand types for /: {type(other).__name__} and "
                f"{type(self).__name__} (only Scalar/Tensor can be inverted elementwise)"
            )
        return NotImplemented

    def __pow__(self, other):
        if not self._elementwise:
            raise self._type_error(other, "**", "; ** is elementwise, defined for Scalar/Tensor")
        if _is_const(other):
            n = float(other)
            if n == 2.0:
                return self._unary_dual(lambda d: d * d)
            return self._unary_dual(lambda d: T.pow_const(d, n))
        if isinstance(other, TensorWrapper) and other._is_scalar:
            if self._is_scalar and other.tangents is None:
                # a constant exponent (e.g. a parameter): torch.pow, exact where exp(n log x)
                # is not (0 ** 0 = 1, negative bases with integral exponents)
                (a, b), S = self._binary(other, "**")
                return type(self)._from_dual(T.pow_const(a, b.p), S)
            from neml2.tensors._functions import exp, log

            return exp(other * log(self))
        return NotImplemented

    def __rpow__(self, other):
        if _is_const(other) and self._is_scalar:
            c = float(np.log(float(other)))
            return self._unary_dual(lambda d: T.exp(d * c))
        return NotImplemented

    def __matmul__(self, other):
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        return self.matmul(other)

    def matmul(self, other):
        """Typed contraction ``self @ other`` (see ``MATMUL_RULES``).

        Same as ``@``; spell it as a method inside ``torch.compile(fullgraph=True)``: Dynamo
        (torch 2.13) cannot trace the ``@`` operator on user-defined objects.

        Args:
            other (TensorWrapper): The right operand, broadcast against this one
                (``SSR4 @ SR2``, ``R2 @ R2``, ``R2 @ Vec``, ...).

        Returns:
            (TensorWrapper): The registered result type (``SR2``, ``R2``, ``Vec``, ...) at the
                broadcast ``(*B, *sub, *out_base)``; tangents of both operands follow.

        Raises:
            TypeError: If no rule is registered for the two types.
        """
        rule = MATMUL_RULES.get((type(self), type(other)))
        if rule is None:
            raise self._type_error(other, "@")
        out, fn = rule
        (a, b), S = self._binary(other, "@")
        return out._from_dual(a.bilin(b, fn), S)

    # comparisons (no tangents; bool Scalar/Tensor values)
    def _compare(self, other, fn, op):
        if not self._elementwise:
            raise self._type_error(other, op)
        if _is_const(other):
            return self._new(fn(self.data, other), self.sub_batch_ndim)
        if not isinstance(other, TensorWrapper):
            return NotImplemented
        self._check_same_kind(other, op)
        (a, b), S = align((self.primal(), other.primal()), op)
        return self._new(fn(a.p, b.p), S)

    def __lt__(self, other):
        return self._compare(other, torch.lt, "<")

    def __le__(self, other):
        return self._compare(other, torch.le, "<=")

    def __gt__(self, other):
        return self._compare(other, torch.gt, ">")

    def __ge__(self, other):
        return self._compare(other, torch.ge, ">=")

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        """Truth value of a one-element value (``if f > 0`` on a batch raises, like torch)."""
        return bool(self.data)


def _scale(x: TensorWrapper, s: TensorWrapper, reciprocal: bool = False):
    """``s * x`` (or ``x / s``) for a Scalar ``s`` and any typed ``x``."""
    nb = x._base_ndim
    (dx, ds), S = align((x, s), "/" if reciprocal else "*")
    if reciprocal:
        if ds.t1 is None:
            q = unsqueeze_base(ds.p, nb)
            if dx.t1 and not _tracing():  # the divisor laid out once for every tangent
                q = T.laid_out_as(q, torch.broadcast_shapes(q.shape, dx.p.shape))
            return x._from_dual(dx.lin(lambda a: a / q), S, nb)
        ds = T.reciprocal(ds)
    if nb:  # the scalar against x's base: its value and tangents unsqueezed once each
        ds = ds.lin(lambda b: unsqueeze_base(b, nb))
    return x._from_dual(dx.bilin(ds, torch.mul), S, nb)


def unsqueeze_base(t: torch.Tensor, n: int) -> torch.Tensor:
    """Append ``n`` trailing singleton axes (to broadcast a Scalar against a base)."""
    for _ in range(n):
        t = t.unsqueeze(-1)
    return t


__all__ = ["MATMUL_RULES", "TensorWrapper", "as_tensor", "insert_singletons", "register_matmul"]
