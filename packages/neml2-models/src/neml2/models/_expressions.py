"""Evaluate ``[Tensors] type = Python`` expressions with an allow-list interpreter.

The expression is parsed with :func:`ast.parse` and evaluated here, node by node:
no text of the input file is given to ``eval``, ``exec`` or ``compile``. What an
expression may use is listed in :mod:`neml2.models._expression_vocabulary`;
everything else is refused, first by :func:`~neml2.models._expression_check.check`
before anything runs (the node kinds, names, attributes and qualified names), then
while evaluating (which value has which attribute, which values may be called, and
the size and step limits of :mod:`neml2.models._expression_limits`).

Callables are never handed to code outside the interpreter: a listed function is a
:class:`Function` and a lambda a :class:`Lambda`, neither with ``__call__``, and the
builtins that call functions (``map``, ``filter``, ``sorted``, ``min``, ``max``) are
implemented here, so every call goes through :meth:`Interpreter.call` and its checks.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from neml2 import tensors
from neml2.models._expression_check import (
    COMPARISONS,
    OPERATORS,
    SYMBOLS,
    UNARY,
    check,
    module_path,
    suggest,
)
from neml2.models._expression_limits import (
    Budget,
    Guard,
    Limits,
    Refused,
    Tally,
    broadcast_bound,
    check_power,
    is_array,
    iterates,
    matmul_bound,
    nested_bound,
    numel,
    sum_guard,
)
from neml2.models._expression_vocabulary import (
    BROADCAST,
    BUILTIN_NAMES,
    BUILTIN_TYPES,
    CONSTRUCTORS,
    MODULE_NAMES,
    MODULE_PATHS,
    QUALIFIED_CONSTANTS,
    QUALIFIED_FUNCTIONS,
    TENSOR_FUNCTIONS,
    TYPES,
    attributes_of,
)

#: the steps a call of the expression's own lambda costs (binding its arguments)
LAMBDA_CALL_STEPS = 4


class NoResult(Exception):
    """A block of statements assigned no ``result``."""


class Function:
    """A listed callable and the guard that checks each call of it.

    It has no ``__call__``: only :meth:`Interpreter.call` calls it.

    Attributes:
        name: How messages name it (``torch.linspace``, ``SR2.fill``, ``Tensor.reshape``).
        fn: The callable.
        guard: The check before each call.
        owner: For a method, the value it belongs to (its guard sees it as the first
            argument); else None.
    """

    __slots__ = ("fn", "guard", "name", "owner")

    def __init__(self, name: str, fn: Callable[..., Any], guard: Guard, owner: Any = None):
        self.name, self.fn, self.guard, self.owner = name, fn, guard, owner

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class Lambda:
    """A ``lambda`` of the expression: its node, default values and enclosing scopes."""

    __slots__ = ("defaults", "node", "scopes")

    def __init__(self, node: ast.Lambda, defaults: list[Any], scopes: list[dict[str, Any]]):
        self.node, self.defaults, self.scopes = node, defaults, scopes

    def __repr__(self) -> str:
        return "<lambda>"


# ------------------------------------------------------------------ evaluation
def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"shape {tuple(shape)}" if shape is not None else type(value).__name__


def _is_mask(index: Any) -> bool:
    """Whether an index is boolean (a mask selects at most every element)."""
    if isinstance(index, torch.Tensor):
        return index.dtype == torch.bool
    return isinstance(index, np.ndarray) and index.dtype == np.bool_


def _label(value: Any) -> str:
    """How messages name a value's kind: ``SR2``, ``torch.Tensor``, ``dtype``."""
    if isinstance(value, type):
        return value.__name__
    return "torch.Tensor" if isinstance(value, torch.Tensor) else type(value).__name__


class Interpreter:
    """Evaluates one checked expression (see the module docstring).

    Args:
        has_block: Whether another ``[Tensors]`` block has this name.
        block: That block's value (evaluated on first use).
        limits: The size and step limits.
        tally: The elements the input file's expressions made so far.
    """

    def __init__(
        self,
        has_block: Callable[[str], bool],
        block: Callable[[str], Any],
        limits: Limits,
        tally: Tally | None = None,
    ):
        self.has_block, self.block = has_block, block
        self.budget = Budget(limits, tally)
        self.names: dict[str, Any] = {}  # the expression's own assignments
        self.scopes: list[dict[str, Any]] = []  # lambda arguments, comprehension variables
        self.depth = 0
        self.namespace = self._namespace()
        self._visit: dict[type, Callable[[Any], Any]] = {
            ast.Constant: lambda n: n.value,
            ast.Name: self._name,
            ast.Attribute: self._attribute,
            ast.Call: self._call,
            ast.BinOp: lambda n: self.binary(n.op, self.eval(n.left), self.eval(n.right)),
            ast.UnaryOp: self._unary,
            ast.BoolOp: self._boolean,
            ast.Compare: self._compare,
            ast.IfExp: lambda n: self.eval(n.body if self.eval(n.test) else n.orelse),
            ast.Subscript: self._subscript,
            ast.Slice: self._slice,
            ast.Tuple: lambda n: tuple(self._items(n.elts)),
            ast.List: lambda n: self._items(n.elts),
            ast.Dict: self._dict,
            ast.Lambda: self._lambda,
            ast.ListComp: self._comprehension,
            ast.GeneratorExp: self._comprehension,
        }

    def _namespace(self) -> dict[str, Any]:
        ns: dict[str, Any] = {t.__name__: t for t in TYPES}
        for name, guard in TENSOR_FUNCTIONS.items():
            ns[name] = Function(name, getattr(tensors, name), guard)
        ns.update({t.__name__: t for t in BUILTIN_TYPES})
        own = {
            "map": self._map,
            "filter": self._filter,
            "sorted": self._sorted,
            "min": lambda *a, **k: self._extreme(builtins.min, *a, **k),
            "max": lambda *a, **k: self._extreme(builtins.max, *a, **k),
        }
        for name in BUILTIN_NAMES:
            if name in ns:
                continue
            if name in own:
                ns[name] = Function(name, own[name], iterates)
            elif name == "sum":
                ns[name] = Function(name, builtins.sum, sum_guard)
            else:  # all, any, divmod, isinstance, len, round
                ns[name] = Function(name, getattr(builtins, name), iterates)
        return ns

    def known(self, name: str) -> bool:
        """Whether *name* is defined before the expression runs (for :func:`check`)."""
        return name in self.namespace or self.has_block(name)

    # ---------------------------------------------------------------- driving
    def run(self, tree: ast.AST, mode: str) -> Any:
        """The value of *tree*: the expression's, or for statements, ``result``'s.

        Raises:
            Refused: For a construct, call or size outside the allow-list.
            NoResult: If a block of statements assigns no ``result``.
        """
        if mode == "eval":
            value = self.eval(tree.body)
        else:
            for stmt in tree.body:
                self.execute(stmt)
            if "result" not in self.names:
                raise NoResult
            value = self.names["result"]
        if isinstance(value, Function | Lambda | type):
            raise Refused(
                f"the value is a function ({value!r}), not a tensor, a number or a sequence"
            )
        return value

    def eval(self, node: ast.AST) -> Any:
        """Evaluate one expression node (one step of the budget)."""
        self.budget.step()
        try:
            return self._visit[type(node)](node)
        except Refused as e:
            if e.lineno is None:
                e.lineno = getattr(node, "lineno", None)
            raise

    def execute(self, stmt: ast.stmt) -> None:
        """Run one statement: an assignment or an expression."""
        try:
            if isinstance(stmt, ast.Assign):
                value = self.eval(stmt.value)
                for target in stmt.targets:
                    self._bind(target, value, self.names)
            elif isinstance(stmt, ast.AugAssign):
                current = self._name(ast.Name(id=stmt.target.id, ctx=ast.Load()))
                self.names[stmt.target.id] = self.binary(stmt.op, current, self.eval(stmt.value))
            elif isinstance(stmt, ast.AnnAssign):
                if stmt.value is not None:
                    self._bind(stmt.target, self.eval(stmt.value), self.names)
            else:
                self.eval(stmt.value)
        except Refused as e:
            if e.lineno is None:
                e.lineno = stmt.lineno
            raise

    def _bind(self, target: ast.AST, value: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
            return
        items = list(self._iterate(value))
        if len(items) != len(target.elts):
            raise ValueError(f"cannot unpack {len(items)} values into {len(target.elts)} names")
        for t, v in zip(target.elts, items, strict=True):
            self._bind(t, v, scope)

    def _iterate(self, value: Any) -> Iterator[Any]:
        """The items of *value*, a step each (charged at once when the length is known)."""
        try:
            self.budget.step(len(value))
            counted = True
        except TypeError:
            counted = False
        for item in value:
            if not counted:
                self.budget.step()
            yield item

    # ---------------------------------------------------------------- names and attributes
    def _name(self, node: ast.Name) -> Any:
        name = node.id
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.names:
            return self.names[name]
        if name in self.namespace:
            return self.namespace[name]
        if self.has_block(name):
            return self.block(name)
        raise NameError(f"name '{name}' is not defined", name=name)

    def _attribute(self, node: ast.Attribute) -> Any:
        path = module_path(node)
        if path in QUALIFIED_FUNCTIONS:
            fn, guard = QUALIFIED_FUNCTIONS[path]
            return Function(path, fn, guard)
        if path in QUALIFIED_CONSTANTS:
            return QUALIFIED_CONSTANTS[path]
        if path is not None and path.rsplit(".", 1)[0] in MODULE_PATHS | set(MODULE_NAMES):
            raise Refused(f"'{path}' is not a listed name")  # check() said so first
        return self.attribute(self.eval(node.value), node.attr)

    def attribute(self, value: Any, attr: str) -> Any:
        """``value.attr``, if the kind of *value* lists *attr*."""
        what, table = attributes_of(value)
        if attr.startswith("_") or attr not in table:
            allowed = ", ".join(sorted(table)) or "none"
            raise Refused(
                f"attribute '{attr}' of {what} is not allowed{suggest(attr, table)}; "
                f"allowed: {allowed}"
            )
        result = getattr(value, attr)
        if callable(result) and not isinstance(result, type):
            return Function(f"{_label(value)}.{attr}", result, table[attr] or BROADCAST, value)
        return self.budget.checked(result, f"{_label(value)}.{attr}")

    # ---------------------------------------------------------------- calls
    def _call(self, node: ast.Call) -> Any:
        fn = self.eval(node.func)
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self._iterate(self.eval(a.value)))
            else:
                args.append(self.eval(a))
        kwargs: dict[str, Any] = {}
        for k in node.keywords:
            value = self.eval(k.value)
            if k.arg is not None:
                kwargs[k.arg] = value
            elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
                self.budget.step(len(value))
                kwargs.update(value)
            else:
                raise TypeError("'**' takes a dict with string keys")
        return self.call(fn, args, kwargs)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call *fn*: a listed function, a lambda of the expression or a listed type."""
        self.budget.step()
        if isinstance(fn, Function):
            if "out" in kwargs:
                raise Refused("the argument 'out' is not allowed (nothing writes into a tensor)")
            seen = args if fn.owner is None else [fn.owner, *args]
            fn.guard(self.budget, fn.name, seen, kwargs)
            return self.budget.checked(fn.fn(*args, **kwargs), f"the result of {fn.name}(...)")
        if isinstance(fn, Lambda):
            return self._call_lambda(fn, args, kwargs)
        if isinstance(fn, type) and fn in CONSTRUCTORS:
            name = _label(fn)
            CONSTRUCTORS[fn](self.budget, name, args, kwargs)
            return self.budget.checked(fn(*args, **kwargs), f"the result of {name}(...)")
        raise Refused(
            f"a {_label(fn)} cannot be called; only listed functions, typed-tensor types "
            "and the expression's own lambdas can"
        )

    def _call_lambda(self, fn: Lambda, args: list[Any], kwargs: dict[str, Any]) -> Any:
        params = fn.node.args
        names = [a.arg for a in (*params.posonlyargs, *params.args)]
        if len(args) > len(names):
            raise TypeError(f"the lambda takes {len(names)} arguments, {len(args)} given")
        scope = dict(zip(names, args, strict=False))
        positional_only = {a.arg for a in params.posonlyargs}
        for key, value in kwargs.items():
            if key not in names or key in positional_only or key in scope:
                raise TypeError(f"the lambda got an unexpected or repeated argument '{key}'")
            scope[key] = value
        for name, default in zip(names[len(names) - len(fn.defaults) :], fn.defaults, strict=True):
            scope.setdefault(name, default)
        missing = [n for n in names if n not in scope]
        self.budget.step(LAMBDA_CALL_STEPS)
        if missing:
            raise TypeError(f"the lambda is missing the argument(s) {', '.join(missing)}")
        if self.depth >= self.budget.limits.max_call_depth:
            raise Refused(
                f"lambdas call each other more than {self.budget.limits.max_call_depth} deep"
            )
        saved, self.scopes = self.scopes, [*fn.scopes, scope]
        self.depth += 1
        try:
            return self.eval(fn.node.body)
        finally:
            self.scopes = saved
            self.depth -= 1

    def _lambda(self, node: ast.Lambda) -> Lambda:
        return Lambda(node, [self.eval(d) for d in node.args.defaults], list(self.scopes))

    # the builtins that call functions: here, so that only call() ever calls one
    def _map(self, fn: Any, *iterables: Any) -> list[Any]:
        return [self.call(fn, list(items), {}) for items in zip(*iterables, strict=False)]

    def _filter(self, fn: Any, iterable: Any) -> list[Any]:
        return [x for x in iterable if (x if fn is None else self.call(fn, [x], {}))]

    def _keys(self, key: Any, items: list[Any]) -> list[Any]:
        return [self.call(key, [x], {}) for x in items]

    def _sorted(self, iterable: Any, *, key: Any = None, reverse: bool = False) -> list[Any]:
        items = list(iterable)
        if key is None:
            return sorted(items, reverse=reverse)
        keys = self._keys(key, items)
        order = sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
        return [items[i] for i in order]

    _NO_DEFAULT = object()

    def _extreme(self, pick, *args: Any, key: Any = None, default: Any = _NO_DEFAULT) -> Any:
        items = list(args[0]) if len(args) == 1 else list(args)
        if not items and default is not self._NO_DEFAULT:
            return default
        if key is None:
            return pick(items)
        keys = self._keys(key, items)
        return items[pick(range(len(items)), key=keys.__getitem__)]

    # ---------------------------------------------------------------- operators
    def binary(self, op: ast.operator, a: Any, b: Any) -> Any:
        """``a <op> b``, refused beforehand when the result would exceed a limit."""
        symbol = SYMBOLS[type(op)]
        what = f"'{symbol}'"
        if isinstance(op, ast.Mod) and isinstance(a, str | bytes):
            raise Refused("'%' formatting of a string is not allowed")
        if is_array(a) or is_array(b):
            bound = matmul_bound(a, b) if isinstance(op, ast.MatMult) else broadcast_bound([a, b])
            self.budget.check_elements(bound, f"'{symbol}' of {_shape(a)} and {_shape(b)}")
        elif isinstance(op, ast.Mult):
            for seq, n in ((a, b), (b, a)):
                if isinstance(seq, list | tuple | str) and isinstance(n, int):
                    self.budget.check_items(len(seq) * max(n, 0), f"repeating a {_label(seq)}")
            if isinstance(a, int) and isinstance(b, int):
                self.budget.check_int_bits(a.bit_length() + b.bit_length(), what)
        elif isinstance(op, ast.Pow):
            check_power(self.budget, a, b, what)
        elif isinstance(op, ast.LShift) and isinstance(a, int) and isinstance(b, int):
            self.budget.check_int_bits(a.bit_length() + max(b, 0), what)
        return self.budget.checked(OPERATORS[type(op)](a, b), f"the result of {what}")

    def _unary(self, node: ast.UnaryOp) -> Any:
        value = UNARY[type(node.op)](self.eval(node.operand))
        return self.budget.checked(value, "a unary operator")

    def _boolean(self, node: ast.BoolOp) -> Any:
        value = None
        for operand in node.values:
            value = self.eval(operand)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value

    def _compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        last = len(node.ops) - 1
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.eval(right_node)
            if is_array(left) or is_array(right):
                self.budget.check_elements(broadcast_bound([left, right]), "a comparison")
            elif isinstance(op, ast.In | ast.NotIn):
                self.budget.charge_iteration([right])
            result = self.budget.checked(COMPARISONS[type(op)](left, right), "a comparison")
            if i == last or not result:  # a chain stops at the first false link
                return result
            left = right
        raise AssertionError("unreachable")  # pragma: no cover

    # ---------------------------------------------------------------- containers
    def _subscript(self, node: ast.Subscript) -> Any:
        value, index = self.eval(node.value), self.eval(node.slice)
        if is_array(value):
            bound = numel(value)
            for part in index if isinstance(index, tuple) else (index,):
                if isinstance(part, list) or (is_array(part) and not _is_mask(part)):
                    bound *= max(nested_bound(part), 1)  # gathers: up to one row per index
            self.budget.check_elements(bound, f"indexing {_shape(value)}")
        return self.budget.checked(value[index], "an index")

    def _slice(self, node: ast.Slice) -> slice:
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else self.eval(p) for p in parts))

    def _items(self, nodes: list[ast.expr]) -> list[Any]:
        items: list[Any] = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                items.extend(self._iterate(self.eval(n.value)))
            else:
                items.append(self.eval(n))
        return self.budget.checked(items, "a list or tuple")

    def _dict(self, node: ast.Dict) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                merged = self.eval(v)
                self.budget.charge_iteration([merged])
                out.update(merged)
            else:
                out[self.eval(k)] = self.eval(v)
        return self.budget.checked(out, "a dict")

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list[Any]:
        out: list[Any] = []
        self.scopes.append({})
        try:
            self._generate(node.generators, 0, node.elt, out)
        finally:
            self.scopes.pop()
        return out

    def _generate(self, gens: list[ast.comprehension], i: int, elt: ast.expr, out: list) -> None:
        if i == len(gens):
            out.append(self.eval(elt))
            self.budget.check_items(len(out), "a comprehension")
            return
        gen, scope = gens[i], self.scopes[-1]
        for item in self._iterate(self.eval(gen.iter)):
            self._bind(gen.target, item, scope)
            if all(self.eval(cond) for cond in gen.ifs):
                self._generate(gens, i + 1, elt, out)


#: the limits every expression runs under
LIMITS = Limits()


def evaluate(
    tree: ast.AST,
    mode: str,
    has_block: Callable[[str], bool],
    block: Callable[[str], Any],
    limits: Limits = LIMITS,
    tally: Tally | None = None,
) -> Any:
    """Check and evaluate a parsed ``[Tensors] type = Python`` expression.

    Args:
        tree: What :func:`~neml2.models._expression_check.parse` returned.
        mode: ``"eval"`` (one expression) or ``"exec"`` (statements ending in ``result``).
        has_block: Whether another ``[Tensors]`` block has a name.
        block: That block's value (evaluated on first use).
        limits: The size and step limits.
        tally: The elements made so far by the input file's expressions (shared by
            its blocks, for ``limits.max_total_elements``); a new one when None.

    Returns:
        The value.

    Raises:
        Refused: For anything outside the allow-list or the limits (with the line
            within the expression).
        NoResult: If a block of statements assigns no ``result``.
        Exception: What a listed function raises for bad arguments (a ``TypeError``,
            a ``RuntimeError`` of torch), or a ``NameError`` for an unknown name.
    """
    interpreter = Interpreter(has_block, block, limits, tally)
    check(tree, interpreter.known)
    return interpreter.run(tree, mode)
