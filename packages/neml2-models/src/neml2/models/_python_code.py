"""The opt-in for ``[Tensors] type = Python`` expressions that run arbitrary Python.

By default an expression is evaluated by the allow-list interpreter
(:mod:`neml2.models._expressions`). An input file that needs more (any function
of torch, numpy or math, string formatting, unlimited sizes) runs with Python's
``eval``/``exec`` instead, but only when the user opts in:
``allow_python_code=True`` when loading, ``--allow-python-code`` on the command
line, or the environment variable ``NEML2_ALLOW_PYTHON_CODE=1``. Such an input
file can run code: opt in only for input files you would run as a Python script.

On this path a check (:func:`rejected`) still refuses names that start with
``__``, attributes that start with ``_`` and builtins outside
:data:`SAFE_BUILTINS`: a guard against accidents, not a security boundary.
"""

from __future__ import annotations

import ast
import builtins
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neml2 import tensors
from neml2.models._expressions import NoResult

#: The environment variable that opts in for the whole process (``1``, ``true``, ``yes``, ``on``).
ALLOW_PYTHON_CODE_ENV = "NEML2_ALLOW_PYTHON_CODE"

#: What an allow-list refusal adds: how to opt in, and what that means.
OPT_IN_HINT = (
    "to evaluate it as arbitrary Python, opt in with --allow-python-code, "
    f"{ALLOW_PYTHON_CODE_ENV}=1 or allow_python_code=True (the input file can then run "
    "code: use it only for input files you would run as a Python script)"
)

_TRUE = ("1", "true", "yes", "on")


def python_code_allowed(allow: bool | None = None) -> bool:
    """Whether ``[Tensors] type = Python`` expressions run as arbitrary Python.

    Args:
        allow: The caller's choice (``load_model(..., allow_python_code=...)``);
            ``None``: the environment variable :data:`ALLOW_PYTHON_CODE_ENV` decides.

    Returns:
        True to evaluate with Python's ``eval``; False for the allow-list interpreter.
    """
    if allow is not None:
        return bool(allow)
    return os.environ.get(ALLOW_PYTHON_CODE_ENV, "").strip().lower() in _TRUE


def allow_python_code(allow: bool = True) -> None:
    """Opt in (or out) for this process and its children: sets or clears
    ``NEML2_ALLOW_PYTHON_CODE`` (what ``--allow-python-code`` does).

    Args:
        allow: True to let ``[Tensors] type = Python`` expressions run arbitrary
            Python; False to remove the opt-in.
    """
    if allow:
        os.environ[ALLOW_PYTHON_CODE_ENV] = "1"
    else:
        os.environ.pop(ALLOW_PYTHON_CODE_ENV, None)


#: The builtins an opted-in expression may use (``True``, ``False`` and ``None`` are
#: literals). Nothing that imports, opens files, evaluates text or reaches attributes
#: by name (``__import__``, ``open``, ``eval``, ``exec``, ``getattr``, ``vars``, ...).
SAFE_BUILTINS = (
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "int",
    "isinstance", "len", "list", "map", "max", "min", "pow", "range", "reversed", "round",
    "slice", "sorted", "sum", "tuple", "zip",
)  # fmt: skip
_BUILTIN_NAMES = frozenset(dir(builtins))


def namespace() -> dict[str, Any]:
    """What an opted-in expression sees (plus other [Tensors] names).

    The typed-tensor API (``neml2.tensors``), ``torch``, ``math``, ``np``/``numpy``
    and, as builtins, only :data:`SAFE_BUILTINS` (and ``__import__``, for C code).
    """
    ns: dict[str, Any] = {n: getattr(tensors, n) for n in tensors.__all__}
    ns.update(torch=torch, math=math, np=np, numpy=np)
    safe = {n: getattr(builtins, n) for n in SAFE_BUILTINS}
    # C code that imports lazily (torch does, the first time some ops run) looks
    # ``__import__`` up in the builtins of the running frame: ours. The expression
    # itself cannot name it (``rejected`` refuses every ``__`` name).
    safe["__import__"] = builtins.__import__
    ns["__builtins__"] = safe
    return ns


def rejected(tree: ast.AST, known: Callable[[str], bool]) -> tuple[int, str] | None:
    """The first construct of *tree* an opted-in expression may not use: ``(line, what)``.

    Rejected: an attribute whose name starts with ``_`` (``x.__class__``,
    ``torch._C``), a name that starts with ``__`` (``__import__``,
    ``__builtins__``), and a builtin outside :data:`SAFE_BUILTINS` unless *known*
    (the namespace, another [Tensors] block) or the expression's own lambda
    arguments and loop variables shadow it.
    """
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            local.add(node.id)
    found: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            what = f"attribute '{node.attr}' is not allowed (no attribute starting with '_')"
        elif isinstance(node, ast.Name | ast.arg):
            name = node.id if isinstance(node, ast.Name) else node.arg
            if name.startswith("__"):
                what = f"name '{name}' is not allowed (no name starting with '__')"
            elif (
                isinstance(node, ast.Name)
                and name in _BUILTIN_NAMES
                and name not in SAFE_BUILTINS
                and name not in local
                and not known(name)
            ):
                what = f"'{name}' is not an allowed builtin (allowed: {', '.join(SAFE_BUILTINS)})"
        if what is not None:
            # by position; of nested attributes (x.__a__.__b__) the inner one ends first
            end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
            found.append((node.lineno, node.col_offset, *end, what))
    if not found:
        return None
    first = min(found)
    return first[0], first[-1]


def used_names(tree: ast.AST) -> set[str]:
    """The names *tree* reads that it does not bind itself (lambda arguments, loop
    variables and assigned names are its own: ``lambda r: ...`` is not [Tensors/r])."""
    local = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - local


def run_python_code(tree: ast.AST, mode: str, filename: str, ns: dict[str, Any]) -> Any:
    """Evaluate *tree* with Python in the namespace *ns* (the opt-in path).

    Args:
        tree: What :func:`neml2.models._expression_check.parse` returned.
        mode: ``"eval"`` or ``"exec"``.
        filename: The name in tracebacks.
        ns: :func:`namespace` plus the other [Tensors] blocks the expression reads.

    Returns:
        The value; for statements, the one assigned to ``result``.

    Raises:
        NoResult: If a block of statements assigns no ``result``.
    """
    code = compile(tree, filename, mode)
    if mode == "eval":
        return eval(code, ns)
    exec(code, ns)
    if "result" not in ns:
        raise NoResult
    return ns["result"]
