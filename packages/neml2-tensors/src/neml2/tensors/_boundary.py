"""Checks of what a caller hands a model, written once for every route.

Every route (py-eager, py-jit, py-aoti, cpp-eager) reaches these through
``neml2.tensors``, the lowest package the deployment pair has:

* :func:`broadcast_batch_shapes`: the batch shapes of several named values (a model's
  inputs, a driver's options) broadcast, or the error names the two that do not;
* :func:`checked_parameter`: a new value of a parameter (``set_parameter``): its base
  shape, its kind of dtype (floating point for a floating parameter), its device and
  every value finite, or a one-line :class:`FatalError` naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._errors import FatalError


def _shape(s: Sequence[int]) -> str:
    return str(tuple(int(n) for n in s))


def _broadcastable(a: Sequence[int], b: Sequence[int]) -> bool:
    for x, y in zip(reversed(tuple(a)), reversed(tuple(b)), strict=False):
        if x != y and x != 1 and y != 1:
            return False
    return True


def broadcast_batch_shapes(shapes: Mapping[str, Sequence[int]], label: str = "") -> tuple[int, ...]:
    """The broadcast (right-aligned, as torch's) of batch shapes, each named by its key.

    Args:
        shapes: What each shape belongs to (``"input 'strain'"``) -> its batch shape.
        label: Put before the message, followed by ``": "`` (nothing when empty).

    Returns:
        The broadcast batch shape (``()`` for no shapes).

    Raises:
        FatalError: Two shapes do not broadcast; the message names the first such pair
            in the mapping's order: ``"input 'strain' has batch shape (2,) and input
            'time' (3,): they do not broadcast"``.
    """
    out: list[int] = []
    for shape in shapes.values():
        # the sizes as given: int() of a traced size (a SymInt under torch.export) would
        # specialize the dynamic batch to the example's
        shape = tuple(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, n in enumerate(shape, start=len(out) - len(shape)):
            if out[i] == 1:
                out[i] = n
            elif n not in (1, out[i]):
                _raise_pair(shapes, label)
    return tuple(out)


def _raise_pair(shapes: Mapping[str, Sequence[int]], label: str) -> None:
    items = list(shapes.items())
    # sizes that differ (neither 1) in one axis belong to two of the shapes: one pair
    # always disagrees by itself
    for j, (b, sb) in enumerate(items):
        for a, sa in items[:j]:
            if not _broadcastable(sa, sb):
                head = f"{label}: " if label else ""
                raise FatalError(
                    f"{head}{a} has batch shape {_shape(sa)} and {b} {_shape(sb)}: they do "
                    "not broadcast"
                )
    raise AssertionError("unreachable: shapes that do not broadcast have a pair that does not")


def _kind(dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "bool"
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating_point:
        return "floating-point"
    return "integer"


def checked_parameter(
    name: str,
    value: Any,
    *,
    dtype: torch.dtype,
    device: torch.device | str,
    typ: type | None = None,
    sub_batch_shape: Sequence[int] = (),
    shape: Sequence[int] | None = None,
    label: str = "",
) -> torch.Tensor:
    """A new value of parameter *name*, checked and converted (``set_parameter``).

    The rules, the same on every route:

    * a Python number or nested list of numbers has no dtype of its own: an ``int`` or
      ``float`` is taken in *dtype* (a ``bool`` or ``complex`` is refused);
    * a tensor (a typed value's data, a numpy array) must have the parameter's kind of
      dtype: floating point for a floating parameter (``float32`` given to a ``float64``
      parameter is converted), integer for an integer one; an integer, bool or complex
      tensor for a floating parameter is refused, never cast;
    * it is moved to *device* (a tensor that cannot be moved, such as a ``meta`` one, is
      refused);
    * its shape: with *shape* (a compiled parameter) exactly that; else it ends in the
      base shape of *typ*, before which a raw tensor has *sub_batch_shape* (or a shape
      that broadcasts with it); any batch axes before those are a batch of values (a
      ``(3, 3)`` tensor for a ``Scalar`` parameter is a ``(3, 3)`` batch of values); a
      typed value must have the base shape of *typ* and keeps its own sub-batch axes;
    * every value is finite (after the conversion to *dtype*: a ``float64`` value that
      overflows ``float32`` is refused too).

    Args:
        name: The parameter, as ``named_parameters()`` names it (for the message).
        value: The new value: a typed value, tensor, numpy array, number or nested list.
        dtype: The parameter's dtype (the model's).
        device: The parameter's device (the model's).
        typ: The parameter's typed-tensor class (its base shape and name); ``None``:
            no base shape to check (use *shape*).
        sub_batch_shape: The parameter's sub-batch shape (a raw tensor must have it, or
            one that broadcasts with it, before the base shape).
        shape: The exact shape the value must have (a parameter compiled into an
            artifact); ``None``: any batch shape.
        label: The model, put before the message (nothing when empty).

    Returns:
        The value as a tensor of *dtype* on *device* (the given tensor itself when it
            already is one; not detached).

    Raises:
        FatalError: One line naming the parameter: a value that is not a number or
            tensor, of another kind of dtype (naming the given and expected dtypes), that
            cannot be moved to *device*, of another shape (naming the given and expected
            shapes), or with a value that is not finite (naming how many, the first one
            and its index).
    """
    head = f"{label}: " if label else ""
    what = f"{head}parameter '{name}'"
    want = _kind(dtype)
    typed = isinstance(value, TensorWrapper)
    if typed:
        if typ is not None and tuple(value.base_shape) != tuple(typ.BASE_SHAPE):
            raise FatalError(
                f"{what} is a {typ.__name__} (base shape {_shape(typ.BASE_SHAPE)}) but the "
                f"value is a {type(value).__name__} (base shape {_shape(value.base_shape)})"
            )
        t = value.data
    elif isinstance(value, torch.Tensor):
        t = value
    elif hasattr(value, "dtype") and hasattr(value, "shape"):  # numpy: its own dtype
        try:
            t = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError) as e:
            raise FatalError(f"{what}: a {type(value).__name__} that is not numbers ({e})") from e
    else:
        t = _from_python(what, value, dtype, device)
    given = _kind(t.dtype)
    if given != want:
        raise FatalError(
            f"{what} is {dtype}: the value has dtype {t.dtype}, which is not {want} (it "
            f"is never cast; pass e.g. value.to({dtype}))"
        )
    try:
        c = t.to(dtype=dtype, device=device)
    except Exception as e:  # a meta tensor, a device this build lacks
        raise FatalError(
            f"{what}: the value on {t.device} cannot be moved to {device} "
            f"({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        ) from e
    _check_shape(what, c, typ, sub_batch_shape, shape, typed)
    if c.is_floating_point():
        _check_finite(what, t, c)
    return c


def _from_python(what: str, value: Any, dtype: torch.dtype, device) -> torch.Tensor:
    """A Python number or nested list of them as a tensor of *dtype* (an int is taken in
    a floating *dtype*); bool, complex and a float for an integer *dtype* keep their own
    dtype (refused by the caller); anything else is refused here."""
    if isinstance(value, str | bytes) or value is None:
        raise FatalError(f"{what}: a {type(value).__name__} is not a number or tensor")
    try:
        probe = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as e:
        raise FatalError(
            f"{what}: a {type(value).__name__} that is not a number, nested list of "
            f"numbers or tensor ({e})"
        ) from e
    if _kind(probe.dtype) not in ("integer", _kind(dtype)):
        return probe  # bool, complex, or a float for an integer parameter
    # from the value itself: a Python float taken in float64 keeps all its digits
    return torch.as_tensor(value, dtype=dtype, device=device)


def _check_shape(what, c, typ, sub_batch_shape, shape, typed) -> None:
    got = tuple(c.shape)
    if shape is not None:
        if got != tuple(shape):
            raise FatalError(
                f"{what} has shape {_shape(got)} but was compiled with shape {_shape(shape)}"
            )
        return
    if typ is None:
        return
    base = tuple(typ.BASE_SHAPE)
    sub = () if typed else tuple(sub_batch_shape)
    rest = len(sub) + len(base)
    tail = got[len(got) - rest :] if rest else ()
    fits = (
        len(got) >= rest
        and tail[len(sub) :] == base
        and all(a == b or a == 1 or b == 1 for a, b in zip(tail[: len(sub)], sub, strict=True))
    )
    if not fits:
        dims = ", ".join(str(n) for n in (*sub, *base))
        within = f" (sub-batch {_shape(sub)}, base {_shape(base)})" if sub else ""
        raise FatalError(
            f"{what} is a {typ.__name__}: the value has shape {_shape(got)} but must be "
            f"(*batch{', ' + dims if dims else ''}){within}"
        )


def _check_finite(what: str, given: torch.Tensor, c: torch.Tensor) -> None:
    d = c.detach()
    bad = ~torch.isfinite(d)
    if not bool(bad.any()):
        return
    count = int(bad.sum())
    first = tuple(int(i) for i in bad.nonzero()[0].tolist())
    x = float(d[first])
    where = f" at index {first}" if d.dim() else ""
    many = f" ({count} of {d.numel()} values are not finite)" if count > 1 else ""
    note = ""
    if given.dtype != c.dtype and given.dim() == d.dim():
        was = float(given.detach()[first])
        if math.isfinite(was):
            note = f" (the given {was!r} overflows {c.dtype})"
    raise FatalError(
        f"{what} has the non-finite value {x}{where}{note}{many}: a parameter must be finite"
    )
