"""Size and time limits of ``[Tensors] type = Python`` expressions.

The allow-list interpreter (:mod:`neml2.models._expressions`) asks this module two
questions: *before* an operation whose result size follows from its arguments
(``torch.zeros(n)``, ``range(n)``, ``[0] * n``, ``a * b`` broadcasting, ``2 ** n``),
how large the result would be, so that it is refused before anything is allocated;
and *after* every operation, whether the value stays within the limits. A
:class:`Budget` counts evaluation steps, so
that a loop or a long computation stops with a clear message instead of running
for minutes, and a :class:`Tally` counts the tensor elements all the expressions of
an input file make, so that they cannot fill the memory together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from neml2.tensors import RegionView, TensorWrapper


@dataclass(frozen=True)
class Limits:
    """What one ``[Tensors]`` expression may build and spend.

    Attributes:
        max_steps: Evaluation steps of one expression (an AST node, a call, a loop
            iteration; a lambda call is 4; a builtin walking a sequence in C, one per
            16 items). The inputs of the conformance suite need at most a few hundred.
        max_elements: Elements of one tensor or array.
        max_total_elements: Elements of all the tensors and arrays the expressions of
            one input file make, together (each result counts, even if discarded).
        max_items: Items of one list, tuple, dict, range or string.
        max_total_items: Items of all the lists, tuples, dicts and strings the
            expressions of one input file make, together.
        max_int_bits: Bits of one Python integer (``2 ** 4096`` is refused).
        max_call_depth: Nested calls of the expression's own lambdas.
    """

    max_steps: int = 200_000
    max_elements: int = 10_000_000
    max_total_elements: int = 50_000_000
    max_items: int = 1_000_000
    max_total_items: int = 10_000_000
    max_int_bits: int = 4096
    max_call_depth: int = 64


#: items a builtin walks in C (``sum``, ``sorted``, ``list``) that cost one step
ITEMS_PER_STEP = 16


class Refused(Exception):
    """An expression used something outside the allow-list, or exceeded a limit.

    Attributes:
        what: Why (one line, no location).
        lineno: The line within the expression (1-based), when known.
    """

    def __init__(self, what: str, lineno: int | None = None):
        super().__init__(what)
        self.what = what
        self.lineno = lineno


# ------------------------------------------------------------------ sizes
def is_array(value: Any) -> bool:
    """Whether *value* holds elements (a tensor, a typed tensor, a region, an array)."""
    return isinstance(value, torch.Tensor | TensorWrapper | RegionView | np.ndarray | np.generic)


def numel(value: Any) -> int:
    """Elements of a tensor-like *value*; 1 for anything else."""
    if isinstance(value, TensorWrapper):
        return value.data.numel()
    if isinstance(value, RegionView):
        return value.value.data.numel()
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, np.ndarray | np.generic):
        return int(value.size)
    return 1


def _regions(value: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(batch, sub_batch, base elements)`` of *value* for a broadcasting estimate."""
    if isinstance(value, RegionView):
        value = value.value
    if isinstance(value, TensorWrapper):
        return (
            tuple(value.dynamic_shape),
            tuple(value.sub_batch_shape),
            math.prod(value.base_shape),
        )
    if isinstance(value, torch.Tensor | np.ndarray | np.generic):
        return tuple(value.shape), (), 1
    return (), (), 1


def broadcast_bound(values: Iterable[Any]) -> int:
    """An upper bound on the elements of an elementwise operation of *values*.

    Typed tensors broadcast batch with batch and sub-batch with sub-batch; the base
    of the largest operand is kept. Operands whose shapes do not broadcast are
    bounded by the product of their sizes (the operation will likely fail anyway).
    """
    arrays = [v for v in values if is_array(v)]
    if not arrays:
        return 1
    parts = [_regions(v) for v in arrays]
    try:
        batch = torch.broadcast_shapes(*(p[0] for p in parts))
        sub = torch.broadcast_shapes(*(p[1] for p in parts))
    except RuntimeError:
        return math.prod(numel(v) for v in arrays)
    return math.prod(batch) * math.prod(sub) * max(p[2] for p in parts)


def matmul_bound(a: Any, b: Any) -> int:
    """An upper bound on the elements of ``a @ b``."""
    if isinstance(a, torch.Tensor | np.ndarray) and isinstance(b, torch.Tensor | np.ndarray):
        if a.ndim >= 2 and b.ndim >= 2:
            try:
                batch = torch.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
            except RuntimeError:
                return numel(a) * numel(b)
            return math.prod(batch) * a.shape[-2] * b.shape[-1]
        return max(numel(a), numel(b))
    return broadcast_bound([a, b])


def ints_product(value: Any) -> int:
    """The product of the (positive) sizes in *value*: an int or a sequence of them."""
    if isinstance(value, bool):
        return 1
    if isinstance(value, int | np.integer):
        return max(int(value), 1)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point():
        return max(int(value.item()), 1)
    if isinstance(value, list | tuple | torch.Size):
        return math.prod(ints_product(v) for v in value)
    return 1


def nested_bound(data: Any, depth: int = 0) -> int:
    """The elements of a tensor built from nested sequences *data*.

    Like ``torch.tensor``, the shape is read along the first elements; a ragged
    sequence is an error of the constructor, never a larger allocation.
    """
    if is_array(data):
        return numel(data)
    if isinstance(data, str | bytes):  # numpy stores strings at a fixed width
        return max(len(data), 1)
    if isinstance(data, list | tuple) and depth < 64:
        if not data:
            return 0
        return len(data) * nested_bound(data[0], depth + 1)
    return 1


def shape_arguments(args: Sequence[Any], kwargs: Mapping[str, Any], names: Sequence[str]) -> int:
    """The product of every size given positionally or as one of the keywords *names*."""
    sizes = [*args, *(kwargs[n] for n in names if n in kwargs)]
    return math.prod(ints_product(s) for s in sizes) if sizes else 1


def steps_argument(args: Sequence[Any], kwargs: Mapping[str, Any], position: int = 2) -> int:
    """``steps`` (numpy: ``num``) of a linspace/logspace call, times the broadcast size
    of its ends."""
    steps = args[position] if len(args) > position else kwargs.get("steps", kwargs.get("num", 1))
    ends = [*args[:position], *(kwargs[k] for k in ("start", "end", "stop") if k in kwargs)]
    return ints_product(steps) * broadcast_bound(ends)


def arange_length(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    """The length of ``arange(end)``, ``arange(start, end[, step])`` (torch and numpy;
    ``start``, ``end``/``stop`` and ``step`` may be keywords)."""
    end_key = kwargs.get("end", kwargs.get("stop"))
    if len(args) == 1:
        start, end, step = kwargs.get("start", 0), args[0], kwargs.get("step", 1)
    elif len(args) >= 2:
        start, end = args[:2]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    else:
        start, end, step = kwargs.get("start", 0), end_key, kwargs.get("step", 1)
    try:
        start, end, step = float(start), float(end), float(step)
    except (TypeError, ValueError, RuntimeError):
        return 1  # arguments arange itself rejects
    if step == 0 or not all(math.isfinite(x) for x in (start, end, step)):
        return 1
    return max(math.ceil((end - start) / step), 0)


def total_size(values: Any) -> int:
    """The total elements of a sequence of tensors (``stack``, ``cat``)."""
    if isinstance(values, list | tuple):
        return sum(numel(v) if is_array(v) else 1 for v in values)
    return numel(values)


def pad_bound(args: Sequence[Any], kwargs: Mapping[str, Any]) -> int:
    """The elements of ``torch.nn.functional.pad(x, pad)``."""
    x = args[0] if args else kwargs.get("input")
    pad = args[1] if len(args) > 1 else kwargs.get("pad", ())
    if not isinstance(x, torch.Tensor) or not isinstance(pad, list | tuple):
        return numel(x)
    shape = list(x.shape)
    for i in range(0, len(pad) - 1, 2):
        dim = len(shape) - 1 - i // 2
        if dim < 0:
            break
        shape[dim] += ints_product(pad[i]) + ints_product(pad[i + 1])
    return math.prod(shape)


def int_power_bits(base: int, exponent: int) -> int:
    """Bits of ``base ** exponent`` for integers (0 for a negative exponent: a float)."""
    if exponent < 0 or abs(base) < 2:
        return 1
    return (abs(base).bit_length() - 1) * exponent + 1


# ------------------------------------------------------------------ the budget
class Tally:
    """What the expressions of one input file made so far: tensor elements, and the
    items of lists, tuples, dicts and strings."""

    def __init__(self) -> None:
        self.elements = 0
        self.items = 0


class Budget:
    """The steps an evaluation has spent, and the checks of every value it makes.

    Args:
        limits: The limits.
        tally: The elements made so far by the input file's expressions (shared by
            its blocks); a new one when None.
    """

    def __init__(self, limits: Limits, tally: Tally | None = None):
        self.limits = limits
        self.tally = tally if tally is not None else Tally()
        self.steps = 0

    def step(self, count: int = 1) -> None:
        """Spend *count* steps; refuse when the budget is exhausted."""
        self.steps += count
        if self.steps > self.limits.max_steps:
            raise Refused(
                f"the expression takes more than {self.limits.max_steps:,} evaluation steps "
                "(a loop or a computation this long is not a [Tensors] value)"
            )

    def check_elements(self, bound: int | None, what: str) -> None:
        """Refuse an operation whose result would exceed the element limit."""
        if bound is not None and bound > self.limits.max_elements:
            raise Refused(
                f"{what} would make {bound:,} elements; the limit is "
                f"{self.limits.max_elements:,} elements per tensor"
            )

    def charge_elements(self, count: int) -> None:
        """Count *count* tensor elements made; refuse past the input file's total."""
        self.tally.elements += count
        if self.tally.elements > self.limits.max_total_elements:
            raise Refused(
                f"the expressions of this input file make more than "
                f"{self.limits.max_total_elements:,} tensor elements in all"
            )

    def charge_items(self, count: int) -> None:
        """Count *count* sequence items made; refuse past the input file's total."""
        self.tally.items += count
        if self.tally.items > self.limits.max_total_items:
            raise Refused(
                f"the expressions of this input file make more than "
                f"{self.limits.max_total_items:,} list, tuple, dict or string items in all"
            )

    def check_items(self, count: int, what: str) -> None:
        """Refuse a sequence longer than the item limit."""
        if count > self.limits.max_items:
            raise Refused(
                f"{what} would have {count:,} items; the limit is {self.limits.max_items:,}"
            )

    def check_int_bits(self, bits: int, what: str) -> None:
        """Refuse an integer larger than the bit limit."""
        if bits > self.limits.max_int_bits:
            raise Refused(
                f"{what} would be an integer of about {bits:,} bits; the limit is "
                f"{self.limits.max_int_bits:,} bits"
            )

    def checked(self, value: Any, what: str) -> Any:
        """*value*, after checking its size against the limits (and counting its elements)."""
        if is_array(value):
            n = numel(value)
            self.check_elements(n, what)
            self.charge_elements(n)
        elif isinstance(value, range):
            self.check_items(len(value), what)
        elif isinstance(value, list | tuple | dict | str | bytes):
            self.check_items(len(value), what)
            self.charge_items(len(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            self.check_int_bits(value.bit_length(), what)
        return value

    def charge_iteration(self, args: Iterable[Any]) -> None:
        """Charge a builtin that walks its arguments (``sum``, ``sorted``, ``zip``, ...)
        one step per :data:`ITEMS_PER_STEP` items of each sized argument, before it runs."""
        for a in args:
            try:
                n = len(a)
            except TypeError:
                continue
            self.step(1 + n // ITEMS_PER_STEP)


# ------------------------------------------------------------------ guards
#: A check run before a listed function is called: ``guard(budget, name, args, kwargs)``
#: raises :class:`Refused` when the call would exceed a limit.
Guard = Callable[[Budget, str, Sequence[Any], Mapping[str, Any]], None]

#: A bound on the elements a call would make, from its arguments.
Bound = Callable[[Sequence[Any], Mapping[str, Any]], int]


def elements(bound: Bound) -> Guard:
    """A guard that refuses a call whose result would exceed the element limit."""

    def guard(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        try:
            n = bound(args, kwargs)
        except (TypeError, ValueError, IndexError, RuntimeError, OverflowError):
            return  # arguments the function itself will reject
        budget.check_elements(n, f"{name}(...)")

    return guard


def all_of(*guards: Guard) -> Guard:
    """A guard that runs each of *guards* in turn."""

    def guard(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        for g in guards:
            g(budget, name, args, kwargs)

    return guard


def iterates(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """A guard for a builtin that walks its arguments: one step per item."""
    budget.charge_iteration(args)


def range_guard(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """``range(...)``: refuse more items than the limit (computed, never iterated)."""
    try:
        n = len(range(*args))
    except (TypeError, ValueError, OverflowError):
        return
    budget.check_items(n, f"{name}(...)")


def power_guard(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """``pow(a, n)``: refuse an integer power larger than the bit limit."""
    if len(args) == 2:
        check_power(budget, args[0], args[1], f"{name}(...)")


def check_power(budget: Budget, base: Any, exponent: Any, what: str) -> None:
    """Refuse ``base ** exponent`` when it is an integer beyond the bit limit, or a
    tensor beyond the element limit."""
    if is_array(base) or is_array(exponent):
        budget.check_elements(broadcast_bound([base, exponent]), what)
    elif isinstance(base, int) and isinstance(exponent, int):
        budget.check_int_bits(int_power_bits(base, exponent), what)


def sum_guard(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """``sum(items, start)``: numbers and tensors only (no quadratic list or string
    concatenation); charges a step per item and the tensor work of the additions."""
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if isinstance(start, list | tuple | str | bytes | dict):
        raise Refused(f"{name}() adds numbers and tensors, not a {type(start).__name__}")
    budget.charge_iteration(args[:1])
    items = args[0] if args else ()
    if isinstance(items, list | tuple):  # each addition makes a tensor
        budget.charge_elements(sum(numel(v) for v in items if is_array(v)))


def no_strings(budget: Budget, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse a string anywhere in the arguments of a numpy function.

    numpy makes an array of fixed-width strings as wide as the longest one (and reads
    a string as a dtype, ``'U1000000000'``), so one long string among many short ones
    would multiply the memory; no listed numpy function needs a string. Each list
    item looked at costs a step per :data:`ITEMS_PER_STEP`; a list met twice is
    looked at once.
    """
    seen: set[int] = set()
    pending: list[Any] = [*args, *kwargs.values()]
    looked = 0
    while pending:
        value = pending.pop()
        if isinstance(value, str | bytes):
            raise Refused(f"{name}(...) takes no strings (numpy would make a string array)")
        if isinstance(value, list | tuple | dict) and id(value) not in seen:
            seen.add(id(value))
            items = list(value.values()) if isinstance(value, dict) else value
            looked += len(items)
            if looked >= ITEMS_PER_STEP:
                budget.step(looked // ITEMS_PER_STEP)
                looked %= ITEMS_PER_STEP
            pending.extend(items)
