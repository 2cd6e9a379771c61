"""Parameter index, ``:=`` overrides, command-line overrides and ``${...}`` evaluation.

Brace expressions (evaluated after parsing, in document order, lazily following
references):

``${name}`` / ``${replace name}``
    the value of parameter *name*, looked up in the enclosing section, then its
    parents up to the root (a path ``${a/b/c}`` is looked up the same way).
``${raw a b c}``
    the arguments concatenated without spaces (``abc``).
``${env NAME}``
    the environment variable *NAME* (an error when unset).
``${fparse EXPR}``
    an arithmetic expression (``+ - * / ^ %``, parentheses, comparisons, the
    functions in :data:`FUNCTIONS`, ``pi`` and ``e``); other names are numeric
    parameters looked up as for ``${name}``.
``${units VALUE FROM -> TO}`` / ``${units VALUE UNIT}``
    a unit conversion between the simple units of :data:`UNITS` (same
    dimension, SI prefixes allowed); anything else is an error.
"""

from __future__ import annotations

import ast
import math
import os
import re
import textwrap
from collections.abc import Iterable, Sequence
from difflib import get_close_matches

from ._errors import (
    HitDuplicateError,
    HitOverrideError,
    HitSubstitutionError,
    HitSyntaxError,
    Location,
)
from ._lexer import Brace, Scanner, Source, Value, valid_name
from ._limits import MAX_VALUE_BYTES, TOTAL_FACTOR, VALUE_BYTES_ENV, nbytes
from ._tree import Node, Param, iter_params

__all__ = ["FUNCTIONS", "UNITS", "apply_overrides", "index_params", "substitute"]

_SIMPLE = re.compile(r"[^\s'\"#\[\]]+")

#: Maximum length of a chain of ``${...}`` references.
MAX_CHAIN = 64

FUNCTIONS = {
    "abs": abs,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sqrt": math.sqrt,
    "cbrt": lambda x: math.copysign(abs(x) ** (1.0 / 3.0), x),
    "floor": math.floor,
    "ceil": math.ceil,
    "min": min,
    "max": max,
    "pow": math.pow,
    "hypot": math.hypot,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}

#: Units known to ``${units ...}``: name → (dimension, factor to SI).
UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "g": ("mass", 1e-3),
    "Pa": ("pressure", 1.0),
    "bar": ("pressure", 1e5),
    "psi": ("pressure", 6894.757293168361),
    "N": ("force", 1.0),
    "J": ("energy", 1.0),
    "eV": ("energy", 1.602176634e-19),
    "K": ("temperature", 1.0),
    "mol": ("amount", 1.0),
}
_PREFIXES = {
    "T": 1e12,
    "G": 1e9,
    "M": 1e6,
    "k": 1e3,
    "c": 1e-2,
    "m": 1e-3,
    "u": 1e-6,
    "n": 1e-9,
    "p": 1e-12,
}


def _key(section: Node | None, name: str) -> str:
    base = section.fullpath if section is not None else ""
    name = name.strip("/")
    return f"{base}/{name}" if base else name


# -- index and duplicates -------------------------------------------------------------------
def index_params(root: Node) -> dict[str, Param]:
    """Map each logical parameter path to its effective definition.

    A parameter defined twice is a :class:`HitDuplicateError` unless exactly one
    definition uses ``:=``; that one wins regardless of order.
    """
    index: dict[str, Param] = {}
    for p in iter_params(root):
        p.overridden = False
        k = _key(p.parent, p.name)
        old = index.get(k)
        if old is None:
            index[k] = p
        elif old.op == "=" and p.op == ":=":
            old.overridden = True
            index[k] = p
        elif old.op == ":=" and p.op == "=":
            p.overridden = True
        else:
            hint = "" if p.op == ":=" else "; use ':=' to override"
            raise HitDuplicateError(
                p.location, f"duplicate parameter '{k}' (first set at {old.location}){hint}"
            )
    return index


# -- command-line overrides -----------------------------------------------------------------
_OVERRIDE = re.compile(r"\s*(\+?)([^=:\s]+)\s*(:?=)")


def _split_override(text: str, at: Location) -> tuple[bool, str, int, str, int]:
    """``(create, path, path column, operator, end of operator)`` of one override."""
    m = _OVERRIDE.match(text)
    if m is None:
        raise HitSyntaxError(
            at, f"malformed override {text!r} (expected path=value or +path=value)"
        )
    path = m.group(2).strip("/")
    if not valid_name(path):
        raise HitSyntaxError(at, f"malformed override {text!r}: invalid path '{m.group(2)}'")
    return m.group(1) == "+", path, m.start(2) + 1, m.group(3), m.end()


def _override_value(text: str, n: int, column: int, whole: str) -> Value:
    """Scan the value part of override number *n*; it starts at 1-based *column*.

    The value is scanned inside a synthetic source padded so that locations
    (of errors and of brace expressions) read ``<command line>:n:column``.
    """
    if text[0] not in "'\"" and not _SIMPLE.fullmatch(text):
        # Unquoted with spaces: taken verbatim, stored as a quoted token so that
        # the tree still renders to valid HIT.
        text = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
        column -= 1
    pad = "\n" * (n - 1) + " " * max(column - 1, 0)
    sc = Scanner(Source(pad + text, "<command line>"))
    sc.pos = len(pad)
    try:
        value = sc.value()
    except HitSyntaxError as e:
        raise HitSyntaxError(e.location, f"in override {whole!r}: {e.reason}") from None
    if sc.pos != sc.n:
        raise HitSyntaxError(
            sc.source.location(sc.pos), f"in override {whole!r}: unexpected text after the value"
        )
    return value


def _prefixes(path: str) -> Iterable[str]:
    """``a``, ``a/b``, ``a/b/c`` for ``a/b/c``."""
    parts = path.split("/")
    return ("/".join(parts[:k]) for k in range(1, len(parts) + 1))


def _brace_names(brace: Brace) -> set[str]:
    """The parameter names a ``${...}`` expression reads: ``${name}``, ``${replace
    name}``, and the names of an ``${fparse ...}`` other than its functions and
    constants; a name built by a nested brace is not known before substitution."""
    if not all(isinstance(seg, str) for seg in brace.segments):
        return set()
    content = "".join(brace.segments).strip()  # type: ignore[arg-type]
    cmd, _, rest = content.partition(" ")
    rest = rest.strip()
    if not rest:
        return set() if cmd in ("fparse", "raw", "env", "replace", "units") else {cmd}
    if cmd == "replace":
        return {rest}
    if cmd != "fparse":
        return set()
    try:
        tree = ast.parse(rest.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and id(n) not in calls and n.id not in _CONSTANTS
    }


def _read_names(root: Node) -> set[str]:
    """Every name the ``${...}`` expressions of the input read (:func:`_brace_names`)."""
    names: set[str] = set()
    todo = [seg for p in iter_params(root) for seg in p._value.segments]
    while todo:
        seg = todo.pop()
        if isinstance(seg, Brace):
            names |= _brace_names(seg)
            todo.extend(seg.segments)
    return names


class _Targets:
    """What a command-line override may name without ``+``: the input's blocks and parameters.

    ``blocks`` holds every block path (those written as ``[a/b]`` or implied by a
    parameter path ``a/b/x`` included); ``holders`` the blocks that hold at least
    one parameter (``""``: the top level); ``read`` the names the input's ``${...}``
    expressions read, which a top-level override may define without ``+``.
    """

    def __init__(self, root: Node, index: dict[str, Param]) -> None:
        self.index = index
        self.blocks: set[str] = set()
        self.holders: set[str] = set()
        self.read = _read_names(root)
        for node in root.walk():
            if node.name:
                self.blocks.update(_prefixes(node.fullpath))
        for key in index:
            self.add_param(key)

    def add_param(self, key: str) -> None:
        section = key.rpartition("/")[0]
        self.holders.add(section)
        if section:
            self.blocks.update(_prefixes(section))

    def _children(self, block: str) -> list[str]:
        """The block paths right below *block* (``""``: the top level)."""
        depth = block.count("/") + 1 if block else 0
        return sorted(
            b
            for b in self.blocks
            if b.count("/") == depth and (not block or b.startswith(f"{block}/"))
        )

    def _repair(self, section: str) -> str | None:
        """*section* with each missing segment replaced by the closest existing one, or None."""
        repaired = ""
        for seg in section.split("/"):
            nxt = f"{repaired}/{seg}" if repaired else seg
            if nxt not in self.blocks:
                names = [b.rpartition("/")[2] for b in self._children(repaired)]
                close = get_close_matches(seg, names, n=1, cutoff=0.6)
                if not close:
                    return None
                nxt = f"{repaired}/{close[0]}" if repaired else close[0]
            repaired = nxt
        return repaired

    def suggest(self, path: str) -> str:
        """`` (did you mean 'x'?)`` naming the existing path(s) closest to *path*, or ``""``.

        The block part is repaired segment by segment (``Model`` -> ``Models``); in a
        block of blocks the parameter is looked for in its children; failing that,
        parameters of the same name anywhere, then the closest parameter path.
        """
        section, _, name = path.rpartition("/")
        found: list[str] = []
        repaired = self._repair(section) if section else None
        if repaired is not None:
            if repaired in self.holders:
                names = [
                    k.rpartition("/")[2] for k in self.index if k.rpartition("/")[0] == repaired
                ]
                close = get_close_matches(name, names, n=1, cutoff=0.6)
                found = [f"{repaired}/{close[0] if close else name}"]
            else:
                found = [f"{c}/{name}" for c in self._children(repaired) if c in self.holders]
        params = sorted(self.index)
        if not found:
            found = [k for k in params if k.rpartition("/")[2] == name]
        if not found:
            found = get_close_matches(path, params, n=1, cutoff=0.6)
        return f" (did you mean {', '.join(repr(f) for f in found[:3])}?)" if found else ""

    def check(self, path: str, at: Location) -> None:
        """Raise :class:`HitOverrideError` unless *path* may be set without ``+``.

        *path* is not a parameter of the input; it may still join an existing
        block that already holds parameters (an object block, whose schema
        checks option names), or be a top-level parameter that a ``${name}`` of
        the input reads (``nbatch=10`` for a file that writes ``${nbatch}`` and
        leaves its value to the command line); but it may not name a block, a
        missing block, another top-level name or a block that holds only blocks
        (a container such as ``[Models]``: a parameter there is read by nothing).
        """
        section, _, name = path.rpartition("/")
        hint = f"; write '+{path}=...' to create it"
        if path in self.blocks:
            raise HitOverrideError(at, f"override '{path}': '{path}' is a block, not a parameter")
        if not section:
            if name in self.read:
                return
            close = get_close_matches(name, sorted(self.read), n=1, cutoff=0.6)
            guess = f" (did you mean '{close[0]}'?)" if close else self.suggest(path)
            raise HitOverrideError(
                at,
                f"override '{path}': no parameter '{name}' at the top level{guess}, and no "
                f"${{{name}}} of the input reads one{hint}",
            )
        if section not in self.blocks:
            missing = next(p for p in _prefixes(section) if p not in self.blocks)
            raise HitOverrideError(
                at, f"override '{path}': no block '{missing}'{self.suggest(path)}{hint}"
            )
        if section not in self.holders:
            raise HitOverrideError(
                at,
                f"override '{path}': [{section}] holds no parameters{self.suggest(path)}{hint}",
            )


def apply_overrides(root: Node, index: dict[str, Param], overrides: Sequence[str]) -> None:
    """Apply command-line assignments ``path=value`` / ``path:=value`` to the tree.

    The value is read as in a file (it may be quoted); an unquoted value is
    taken verbatim, spaces included. Overrides always win over the file; ``=``
    and ``:=`` behave alike.

    An override may not silently miss: its path must name a parameter of the
    input, a new parameter of a block that already holds parameters, or a new
    top-level parameter that a ``${...}`` of the input reads; anything else (a
    missing block, another top-level name, a block of blocks, a block itself) is a
    :class:`HitOverrideError` that suggests the closest existing parameter. A
    leading ``+`` (``+Models/new/type=Foo``) creates whatever is missing, sections
    included; the ``+`` is not part of the path.

    Locations of overridden parameters become ``<command line>:N:COL`` (N: the
    1-based position of the override, COL: the column of its path).
    """
    targets: _Targets | None = None
    for n, text in enumerate(overrides, start=1):
        at = Location("<command line>", n, 1)
        create, path, pcol, op, vstart = _split_override(text, at)
        rest = text[vstart:]
        lead = len(rest) - len(rest.lstrip())
        if not rest.strip():
            raise HitSyntaxError(
                Location("<command line>", n, vstart + 1),
                f"malformed override {text!r}: missing value",
            )
        column = vstart + lead + 1
        value = _override_value(rest.strip(), n, column, text)
        name_at = Location("<command line>", n, pcol)
        p = index.get(path)
        if p is None:
            if targets is None:
                targets = _Targets(root, index)
            if not create:
                targets.check(path, name_at)
            elif path in targets.blocks:
                raise HitOverrideError(
                    name_at, f"override '+{path}': '{path}' is a block, not a parameter"
                )
            section_path, _, name = path.rpartition("/")
            section = root
            if section_path:
                found = root.find(section_path)
                if found is None:
                    for seg in section_path.split("/"):
                        nxt = section.find(seg)
                        section = nxt if nxt is not None else section.add_child(seg)
                else:
                    section = found
            p = Param(name, value, op=op)
            section._attach(p, None)
            index[path] = p
            targets.add_param(path)
        else:
            p._value = value
            p.raw = value.unevaluated()
        p.location = name_at
        p.value_location = Location("<command line>", n, column)


# -- substitution ---------------------------------------------------------------------------
class _Evaluator:
    """Evaluates the brace expressions of every parameter, following references lazily."""

    def __init__(self, index: dict[str, Param], limit: int = MAX_VALUE_BYTES) -> None:
        self.index = index
        self.done: set[int] = set()
        self.active: list[Param] = []
        #: bound on one substituted value, and the bytes all of them took so far
        self.limit = limit
        self.total = 0

    def lookup(self, name: str, param: Param, at: Location, shown: str) -> Param:
        """Find parameter *name* from the scope of *param* (skipping *param* itself)."""
        if not valid_name(name.strip("/")):
            raise HitSubstitutionError(at, f"invalid name in substitution '{shown}'")
        section = param.parent
        while True:
            hit = self.index.get(_key(section, name))
            if hit is not None and hit is not param:
                return hit
            if section is None:
                break
            section = section.parent
        raise HitSubstitutionError(at, f"unknown substitution '{shown}': no parameter '{name}'")

    def value_of(self, target: Param, at: Location, shown: str) -> str:
        if id(target) not in self.done:
            if target in self.active:
                raise HitSubstitutionError(at, f"circular substitution '{shown}'")
            if len(self.active) >= MAX_CHAIN:
                raise HitSubstitutionError(at, f"substitution chain too long at '{shown}'")
            self.evaluate(target)
        return target.raw

    def evaluate(self, param: Param) -> None:
        segs = param._value.segments
        if id(param) in self.done:
            return
        if all(isinstance(s, str) for s in segs):
            raw = "".join(segs)  # type: ignore[arg-type]
        else:
            at = param.value_location or param.location
            self.active.append(param)
            try:
                raw = self.join(segs, param, at)
            finally:
                self.active.pop()
            self.total += nbytes(raw)
            if not self.total <= self.limit * TOTAL_FACTOR:
                raise HitSubstitutionError(
                    at,
                    f"substituted values expand beyond {self.limit * TOTAL_FACTOR} bytes in all "
                    f"at '{param.fullpath}' ({TOTAL_FACTOR} times the per-value limit: "
                    f"{VALUE_BYTES_ENV} or max_value_bytes=)",
                )
        if param._value.dedent:
            raw = textwrap.dedent(raw).strip()
        param.raw = raw
        self.done.add(id(param))

    def join(self, segs: list[str | Brace], param: Param, at: Location) -> str:
        """Concatenate *segs*, evaluating braces, stopping as soon as the bound is passed."""
        out: list[str] = []
        size = 0
        for s in segs:
            piece = s if isinstance(s, str) else self.brace(s, param)
            size += nbytes(piece)
            if not size <= self.limit:
                raise HitSubstitutionError(
                    at,
                    f"the value of '{param.fullpath}' expands beyond {self.limit} bytes "
                    f"(the limit: {VALUE_BYTES_ENV} or max_value_bytes=)",
                )
            out.append(piece)
        return "".join(out)

    def brace(self, brace: Brace, param: Param) -> str:
        content = self.join(brace.segments, param, brace.location).strip()
        at = brace.location
        shown = "${" + content + "}"
        cmd, _, rest = content.partition(" ")
        rest = rest.strip()
        if not content:
            raise HitSubstitutionError(at, "empty substitution '${}'")
        if not rest:
            if cmd in ("fparse", "raw", "env", "replace", "units"):
                raise HitSubstitutionError(at, f"'{cmd}' needs an argument in '{shown}'")
            return self.value_of(self.lookup(cmd, param, at, shown), at, shown)
        if cmd == "replace":
            return self.value_of(self.lookup(rest, param, at, shown), at, shown)
        if cmd == "raw":
            return "".join(rest.split())
        if cmd == "env":
            if rest not in os.environ:
                raise HitSubstitutionError(at, f"environment variable '{rest}' is not set")
            return os.environ[rest]
        if cmd == "fparse":
            return _number(self.fparse(rest, param, at, shown), at, shown)
        if cmd == "units":
            return _number(_units(rest, at, shown), at, shown)
        raise HitSubstitutionError(at, f"unknown brace command '{cmd}' in '{shown}'")

    def fparse(self, expr: str, param: Param, at: Location, shown: str) -> float:
        try:
            tree = ast.parse(expr.replace("^", "**"), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise HitSubstitutionError(at, f"cannot parse expression in '{shown}'") from None

        def var(name: str) -> float:
            if name in _CONSTANTS:
                return _CONSTANTS[name]
            target = self.lookup(name, param, at, shown)
            text = self.value_of(target, at, shown).strip()
            try:
                return float(text)
            except ValueError:
                raise HitSubstitutionError(
                    at, f"'{name}' = {text!r} is not a number in '{shown}'"
                ) from None

        try:
            return float(_eval(tree.body, var, 0))
        except HitSubstitutionError:
            raise
        except _Unsupported as e:
            raise HitSubstitutionError(at, f"unsupported {e} in '{shown}'") from None
        except (ArithmeticError, ValueError, TypeError) as e:
            raise HitSubstitutionError(at, f"cannot evaluate '{shown}': {e}") from None


class _Unsupported(Exception):
    pass


_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: math.pow(a, b),
    ast.Mod: lambda a, b: math.fmod(a, b),
}
_CMPOPS = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _eval(node: ast.AST, var, depth: int) -> float:
    """Evaluate a whitelisted arithmetic AST."""
    if depth > 200:
        raise _Unsupported("expression nesting")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Name):
        return var(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand, var, depth + 1)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](
            _eval(node.left, var, depth + 1), _eval(node.right, var, depth + 1)
        )
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        a = _eval(node.left, var, depth + 1)
        b = _eval(node.comparators[0], var, depth + 1)
        return 1.0 if _CMPOPS[type(node.ops[0])](a, b) else 0.0
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FUNCTIONS
        and not node.keywords
    ):
        args = [_eval(a, var, depth + 1) for a in node.args]
        return float(FUNCTIONS[node.func.id](*args))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        raise _Unsupported(f"function '{node.func.id}'")
    raise _Unsupported(f"syntax '{type(node).__name__}'")


def _number(x: float, at: Location, shown: str) -> str:
    """Format a result: integral values without a decimal point, others in full precision."""
    if math.isnan(x) or math.isinf(x):
        raise HitSubstitutionError(at, f"'{shown}' is not finite")
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _unit(name: str, at: Location, shown: str) -> tuple[str, float]:
    if name in UNITS:
        return UNITS[name]
    if len(name) > 1 and name[0] in _PREFIXES and name[1:] in UNITS:
        dim, f = UNITS[name[1:]]
        return dim, f * _PREFIXES[name[0]]
    raise HitSubstitutionError(at, f"unsupported unit '{name}' in '{shown}'")


def _units(args: str, at: Location, shown: str) -> float:
    parts = args.split()
    try:
        value = float(parts[0])
    except ValueError:
        raise HitSubstitutionError(at, f"'{parts[0]}' is not a number in '{shown}'") from None
    if len(parts) == 2:
        _unit(parts[1], at, shown)
        return value
    if len(parts) == 4 and parts[2] == "->":
        d1, f1 = _unit(parts[1], at, shown)
        d2, f2 = _unit(parts[3], at, shown)
        if d1 != d2:
            raise HitSubstitutionError(at, f"cannot convert {d1} to {d2} in '{shown}'")
        return value * f1 / f2
    raise HitSubstitutionError(at, f"expected 'VALUE UNIT [-> UNIT]' in '{shown}'")


def substitute(
    root: Node, index: dict[str, Param], *, max_value_bytes: int = MAX_VALUE_BYTES
) -> None:
    """Evaluate every ``${...}`` and compute the ``raw`` value of every parameter.

    A value that would expand beyond *max_value_bytes* (UTF-8) is a
    :class:`HitSubstitutionError` at its location, raised before the whole value is
    built; so are values that together pass :data:`~neml2.hit._limits.TOTAL_FACTOR`
    times that.
    """
    ev = _Evaluator(index, max_value_bytes)
    for p in iter_params(root):
        ev.evaluate(p)
