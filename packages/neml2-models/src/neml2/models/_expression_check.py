"""Parse a ``[Tensors] type = Python`` expression and check it before it runs.

:func:`parse` reads the text (one expression, or assignments ending in
``result = ...``); :func:`check` walks the syntax tree and refuses, before anything
is evaluated, every construct the allow-list interpreter
(:mod:`neml2.models._expressions`) does not evaluate: a node kind outside
:data:`ALLOWED_NODES` (f-strings, ``:=``, sets, ...), a name starting with ``__``, a
builtin outside the list, a module used as a value or rebound, an attribute starting
with ``_`` or listed for no value, a qualified name (``torch.save``) that is not
listed, an assignment to anything but a name. The operator tables here are what the
interpreter computes for each allowed operator.
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable
from difflib import get_close_matches
from typing import Any

from neml2.models._expression_limits import Refused
from neml2.models._expression_vocabulary import (
    ALL_ATTRIBUTES,
    BUILTIN_NAMES,
    MODULE_NAMES,
    MODULE_PATHS,
    QUALIFIED_CONSTANTS,
    QUALIFIED_FUNCTIONS,
    listed_under,
)

# ------------------------------------------------------------------ parsing
#: The statements a multi-statement ``expr`` may hold (its value: the name ``result``).
STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def parse(text: str, filename: str) -> tuple[ast.AST, str]:
    """Parse a ``[Tensors] type = Python`` value.

    Args:
        text: One expression (mode ``eval``), or assignments ending in ``result = ...``
            (mode ``exec``; the reference library's multi-line form).
        filename: The name in syntax errors.

    Returns:
        ``(tree, mode)``.

    Raises:
        SyntaxError: If the text does not parse, or holds a statement other than an
            assignment or an expression (import, def, with, ...).
    """
    try:
        return ast.parse(text, filename, "eval"), "eval"
    except SyntaxError as as_expression:
        try:
            tree = ast.parse(text, filename, "exec")
        except SyntaxError:
            raise as_expression from None
    for stmt in tree.body:
        if not isinstance(stmt, STATEMENTS):
            e = SyntaxError(
                f"a '{type(stmt).__name__}' statement is not allowed (only assignments, "
                "the value assigned to 'result')"
            )
            e.lineno = stmt.lineno
            raise e
    return tree, "exec"


# ------------------------------------------------------------------ the check before evaluation
#: what each allowed binary operator computes (the interpreter calls these)
OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
#: how messages write each binary operator
SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
    ast.BitOr: "|", ast.BitXor: "^",
}  # fmt: skip
#: what each allowed comparison computes
COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
#: what each allowed unary operator computes
UNARY: dict[type, Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}

#: the AST nodes an expression may hold
ALLOWED_NODES = frozenset(
    {
        ast.Expression, ast.Module, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr,
        ast.Constant, ast.Name, ast.Load, ast.Store, ast.Attribute, ast.Subscript, ast.Slice,
        ast.Tuple, ast.List, ast.Dict, ast.Starred, ast.BinOp, ast.UnaryOp, ast.BoolOp,
        ast.And, ast.Or, ast.Compare, ast.IfExp, ast.Call, ast.keyword, ast.Lambda,
        ast.arguments, ast.arg, ast.ListComp, ast.GeneratorExp, ast.comprehension,
        *OPERATORS, *COMPARISONS, *UNARY,
    }
)  # fmt: skip

_NODE_WORDS = {
    ast.JoinedStr: "an f-string",
    ast.FormattedValue: "an f-string",
    ast.NamedExpr: "the ':=' operator",
    ast.Set: "a set",
    ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension",
    ast.Await: "'await'",
    ast.Yield: "'yield'",
    ast.YieldFrom: "'yield from'",
    ast.Del: "'del'",
}

_CONSTANT_TYPES = (int, float, complex, str, bool, type(None), type(Ellipsis))


def suggest(word: str, choices: Any) -> str:
    """The "did you mean" hint of the input-file errors, the one spelling of it.

    Example:
        ``suggest("strian", ["strain", "stress"])`` is ``" (did you mean 'strain'?)"``.

    Args:
        word: the misspelt name.
        choices: the names it could have meant, any iterable of strings (the matches are
            ranked by score, then by name, so their order does not matter).

    Returns:
        ``" (did you mean 'a', 'b'?)"`` for up to three close matches, or ``""``.
    """
    close = get_close_matches(word, list(choices), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def module_path(node: ast.AST) -> str | None:
    """``"torch.nn.functional.pad"`` for an attribute chain that starts at a module name
    (``torch``, ``math``, ``np``, ``numpy``); None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in MODULE_NAMES and parts:
        return ".".join([node.id, *reversed(parts)])
    return None


def _problem(node: ast.AST, parent: ast.AST | None, bound: set[str], known) -> str | None:
    """Why *node* may not appear in an expression, or None."""
    kind = type(node)
    if kind not in ALLOWED_NODES:
        return f"{_NODE_WORDS.get(kind, repr(kind.__name__))} is not allowed"
    if kind is ast.Constant and not isinstance(node.value, _CONSTANT_TYPES):
        return f"a {type(node.value).__name__} literal is not allowed"
    if kind is ast.Name or kind is ast.arg:
        name = node.id if kind is ast.Name else node.arg
        if name.startswith("__"):
            return f"name '{name}' is not allowed (no name starting with '__')"
        if name in MODULE_NAMES:
            if kind is ast.arg or not isinstance(node.ctx, ast.Load):
                return f"'{name}' names a module and cannot be assigned"
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                return (
                    f"'{name}' is a module, not a value; use its listed functions and "
                    f"constants ({name}.{listed_under(name)[0]}, ...)"
                )
        elif (
            kind is ast.Name
            and name in vars(builtins)
            and name not in BUILTIN_NAMES
            and name not in bound
            and not known(name)
        ):
            return f"'{name}' is not an allowed builtin (allowed: {', '.join(BUILTIN_NAMES)})"
    if kind is ast.Attribute:
        return _attribute_problem(node, parent)
    if kind in (ast.Subscript, ast.Starred) and isinstance(node.ctx, ast.Store):
        what = "a subscript" if kind is ast.Subscript else "a starred name"
        return f"assigning to {what} is not allowed (only to names)"
    if kind is ast.arguments and (node.vararg or node.kwarg or node.kwonlyargs):
        return "a lambda may take only plain arguments (no *args, **kwargs or keyword-only)"
    if kind is ast.comprehension and node.is_async:
        return "an async comprehension is not allowed"
    return None


def _attribute_problem(node: ast.Attribute, parent: ast.AST | None) -> str | None:
    attr = node.attr
    if attr.startswith("_"):
        return f"attribute '{attr}' is not allowed (no attribute starting with '_')"
    if not isinstance(node.ctx, ast.Load):
        return "assigning to an attribute is not allowed (only to names)"
    path = module_path(node)
    if path is not None:
        if path in QUALIFIED_FUNCTIONS or path in QUALIFIED_CONSTANTS:
            return None
        owner = path.rsplit(".", 1)[0]
        if owner not in MODULE_PATHS and owner not in QUALIFIED_CONSTANTS:
            return None  # the attribute inside it (torch.os of torch.os.system) says why
        if path in MODULE_PATHS:
            if isinstance(parent, ast.Attribute) and parent.value is node:
                return None
            return f"'{path}' is a module, not a value; use its listed names"
        if owner in MODULE_PATHS:
            listed = listed_under(owner)
            return (
                f"attribute '{attr}' of {owner} is not allowed{suggest(attr, listed)}; "
                f"allowed {owner} names: {', '.join(listed)}"
            )
    if attr not in ALL_ATTRIBUTES:
        return (
            f"attribute '{attr}' is not allowed{suggest(attr, ALL_ATTRIBUTES)}; values have "
            "only the listed attributes (typed tensors: data, dynamic_batch, sub_batch, "
            "fill, ...; torch tensors: shape, reshape, unsqueeze, expand, ...), no string "
            "methods"
        )
    return None


def check(tree: ast.AST, known: Callable[[str], bool]) -> None:
    """Refuse *tree* before it runs if it uses anything outside the allow-list.

    Args:
        tree: The parsed expression.
        known: Whether a name is defined (the typed-tensor API, another [Tensors]
            block): such a name may shadow a builtin.

    Raises:
        Refused: For the first construct (by position) that is not allowed.
    """
    parents: dict[ast.AST, ast.AST] = {}
    bound: set[str] = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
    found = []
    for node in ast.walk(tree):
        what = _problem(node, parents.get(node), bound, known)
        if what is not None:
            # by position; of nested nodes starting together (x.__a__.__b__) the inner
            # one ends first; a node without a position (an operator) takes its parent's
            at = node if hasattr(node, "lineno") else parents.get(node, node)
            line, col = getattr(at, "lineno", 1), getattr(at, "col_offset", 0)
            end = (getattr(at, "end_lineno", line) or line, getattr(at, "end_col_offset", 0) or 0)
            found.append((line, col, *end, what))
    if found:
        first = min(found, key=lambda f: f[:4])
        raise Refused(first[-1], first[0])
