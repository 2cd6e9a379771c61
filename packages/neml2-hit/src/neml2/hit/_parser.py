"""The HIT parser: text → lossless :class:`~neml2.hit.Node` tree.

The parser is iterative (an explicit stack of open sections), so neither deep
nesting nor long inputs can exhaust the Python stack; nesting beyond
:data:`MAX_DEPTH` levels is reported as a :class:`HitSyntaxError`.

Parsing happens in three passes:

1. :func:`parse_tree` builds the syntax tree (sections, parameters, comments,
   includes) with every bit of whitespace kept;
2. :func:`neml2.hit._substitute.index_params` checks for duplicate parameters
   and resolves ``:=`` overrides;
3. command-line overrides are applied and ``${...}`` expressions evaluated
   (:func:`neml2.hit._substitute.substitute`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from ._errors import HitIncludeError, HitSyntaxError, Location
from ._lexer import Scanner, Source, Value, valid_name
from ._substitute import apply_overrides, index_params, substitute
from ._tree import Comment, Include, Item, Node, Param

__all__ = ["MAX_DEPTH", "MAX_INCLUDE_DEPTH", "parse", "parse_file", "parse_tree"]

#: Maximum nesting of sections (path segments count as levels).
MAX_DEPTH = 100
#: Maximum nesting of ``!include`` directives.
MAX_INCLUDE_DEPTH = 32


def _read(path: str, at: Location | None) -> str:
    """Read a file as UTF-8, turning OS errors into :class:`HitIncludeError`."""
    where = at or Location(path, 1, 1)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise HitIncludeError(where, f"file not found: '{path}'") from None
    except UnicodeDecodeError as e:
        raise HitIncludeError(where, f"'{path}' is not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise HitIncludeError(where, f"cannot read '{path}': {e.strerror or e}") from None


class _Frame:
    """An open section on the parser stack."""

    __slots__ = ("depth", "items", "node")

    def __init__(self, node: Node, items: list[Item], depth: int) -> None:
        self.node = node
        self.items = items
        self.depth = depth


def _parse_body(
    source: Source,
    parent: Node,
    owner: Node | Include,
    depth: int,
    includes: tuple[str, ...],
) -> str:
    """Parse *source* as a section body into ``owner.items``; return the trailing whitespace.

    ``parent`` is the logical section the top-level elements belong to and
    ``owner`` the object whose ``items`` list receives them (the parent itself,
    or an :class:`Include`).
    """
    sc = Scanner(source)
    text = source.text
    stack = [_Frame(parent, owner.items, depth)]

    def add(item: Item) -> None:
        frame = stack[-1]
        frame.items.append(item)
        item.parent = frame.node
        item._owner = owner if len(stack) == 1 else frame.node

    def trailing_comment(item: Param | Node | Include, *, close: bool = False) -> None:
        """Attach a comment that follows *item* on the same line."""
        save = sc.pos
        ws = sc.inline_ws()
        if sc.peek() == "#":
            if close:
                assert isinstance(item, Node)
                item._close_comment_ws, item._close_comment_text = ws, sc.comment()
            else:
                item._comment_ws, item._comment_text = ws, sc.comment()
        else:
            sc.pos = save

    while True:
        prefix = sc.ws()
        if sc.eof():
            if len(stack) > 1:
                node = _likely_unclosed(owner.items) or stack[-1].node
                raise HitSyntaxError(
                    node.location,
                    f"section '{node.name}' is never closed (missing '[]' before end of file)",
                )
            return prefix
        start = sc.pos
        ch = text[start]
        if ch == "#":
            add(Comment(sc.comment(), source.location(start), prefix))
        elif ch == "[":
            header, content = sc.header()
            if content in ("", "../"):
                if len(stack) == 1:
                    raise sc.error(start, f"unmatched section close '{header}'")
                node = stack.pop().node
                node._close_prefix, node._close_text = prefix, header
                trailing_comment(node, close=True)
                continue
            name = content[2:] if content.startswith("./") else content
            if not valid_name(name):
                raise sc.error(start + 1, f"invalid section name '{content}'")
            level = stack[-1].depth + name.count("/") + 1
            if level > MAX_DEPTH:
                raise sc.error(start, f"sections nested too deeply (limit {MAX_DEPTH})")
            node = Node(name, location=source.location(start))
            node.prefix, node._header = prefix, header
            add(node)
            stack.append(_Frame(node, node.items, level))
            trailing_comment(node)
        elif text.startswith("!include", start) and (
            start + 8 >= len(text) or text[start + 8].isspace()
        ):
            sc.pos = start + 8
            sc.inline_ws()
            if sc.at_line_end() or sc.peek() == "#":
                raise sc.error(start, "missing file name after '!include'")
            path = sc.value().unevaluated()
            if not path:
                raise sc.error(start, "missing file name after '!include'")
            inc = _include(text[start : sc.pos], path, source, start, prefix, stack[-1], includes)
            add(inc)
            trailing_comment(inc)
        else:
            _param(sc, source, start, prefix, stack[-1].depth, add, trailing_comment)


def _likely_unclosed(items: list[Item]) -> Node | None:
    """Guess which section lacks its ``[]`` from the indentation of the text.

    Walking the elements in document order, the first one that starts a line
    at or left of the header of the section it ended up in betrays that
    section: its ``[]`` was forgotten and a later ``[]`` closed it instead.
    """
    stack: list[tuple[Node | None, Iterator[Item]]] = [(None, iter(items))]
    while stack:
        parent, it = stack[-1]
        item = next(it, None)
        if item is None:
            stack.pop()
            continue
        if (
            parent is not None
            and item.prefix is not None
            and "\n" in item.prefix
            and item.location.file == parent.location.file
            and item.location.column <= parent.location.column
        ):
            return parent
        if isinstance(item, Node):
            stack.append((item, iter(item.items)))
    return None


def _param(
    sc: Scanner,
    source: Source,
    start: int,
    prefix: str,
    depth: int,
    add: Callable[[Item], None],
    trailing: Callable[[Param], None],
) -> None:
    """Parse ``name = value`` starting at *start*; *add* stores it, *trailing* takes a comment."""
    name = sc.name()
    if name is None:
        ch = sc.peek()
        if ch in "'\"":
            raise sc.error(start, "unexpected string (missing parameter name and '=')")
        if ch == "]":
            raise sc.error(start, "unexpected ']'")
        if ch == "=" or sc.text.startswith(":=", start):
            raise sc.error(start, "missing parameter name before '='")
        raise sc.error(start, f"unexpected character {ch!r}")
    if not valid_name(name):
        raise sc.error(start, f"invalid parameter name '{name}'")
    if depth + name.count("/") > MAX_DEPTH:
        raise sc.error(start, f"sections nested too deeply (limit {MAX_DEPTH})")
    key_ws = sc.inline_ws()
    if sc.text.startswith(":=", sc.pos):
        op = ":="
    elif sc.peek() == "=":
        op = "="
    else:
        raise sc.error(sc.pos, f"expected '=' after parameter name '{name}'")
    sc.pos += len(op)
    op_ws = sc.inline_ws()
    vstart = sc.pos
    if sc.at_line_end() or sc.peek() in "#[]":
        raise sc.error(vstart, f"missing value for parameter '{name}'")
    if sc.peek() == "=":
        raise sc.error(vstart, f"unexpected '=' at the start of the value of '{name}'")
    value: Value = sc.value()
    p = Param(
        name,
        value,
        op=op,
        location=source.location(start),
        value_location=source.location(vstart),
        prefix=prefix,
        key_ws=key_ws,
        op_ws=op_ws,
    )
    add(p)
    trailing(p)
    # What may follow a value on the same line: a comment (taken above), the end of
    # the line, a section header/close, an include, or another assignment.
    save = sc.pos
    sc.inline_ws()
    if not (
        sc.at_line_end()
        or sc.peek() == "["
        or sc.text.startswith("!include", sc.pos)
        or sc.looks_like_assignment()
    ):
        raise sc.error(
            sc.pos,
            f"unexpected text after the value of '{name}' "
            "(quote values that contain spaces: name = 'a b')",
        )
    sc.pos = save


def _include(
    text: str,
    path: str,
    source: Source,
    start: int,
    prefix: str,
    frame: _Frame,
    includes: tuple[str, ...],
) -> Include:
    """Read and parse the file named by an ``!include`` directive."""
    at = source.location(start)
    base = source.filename
    if base.startswith("<") or not base:
        resolved = path
    else:
        resolved = os.path.join(os.path.dirname(base), path)
    resolved = os.path.normpath(resolved)
    if len(includes) >= MAX_INCLUDE_DEPTH:
        raise HitIncludeError(at, f"includes nested too deeply (limit {MAX_INCLUDE_DEPTH})")
    key = os.path.realpath(resolved)
    if key in includes:
        chain = " -> ".join([*(os.path.basename(i) for i in includes), os.path.basename(key)])
        raise HitIncludeError(at, f"include cycle: {chain}")
    if os.path.isdir(resolved):
        raise HitIncludeError(at, f"cannot include a directory: '{resolved}'")
    inc = Include(text, path, resolved, at, prefix)
    content = _read(resolved, at)
    inc.trailing = _parse_body(
        Source(content, resolved), frame.node, inc, frame.depth, (*includes, key)
    )
    return inc


def parse_tree(text: str, filename: str = "<string>") -> Node:
    """Build the syntax tree of *text* (no duplicate check, no substitution)."""
    if not isinstance(text, str):
        raise TypeError(f"HIT text must be str, not {type(text).__name__}")
    root = Node(location=Location(filename, 1, 1))
    includes: tuple[str, ...] = ()
    if not filename.startswith("<"):
        includes = (os.path.realpath(filename),)
    root._close_prefix = _parse_body(Source(text, filename), root, root, 0, includes)
    return root


def parse(text: str, filename: str = "<string>", overrides: Sequence[str] = ()) -> Node:
    """Parse HIT *text* into a root :class:`Node`.

    Args:
        text: the input.
        filename: the name used in locations and to resolve relative
            ``!include`` paths (``"<string>"``: relative to the working directory).
        overrides: command-line style assignments (``"Models/a/E=2e5"``)
            applied after parsing and before substitution.

    Raises:
        HitError: any syntax, include, duplicate or substitution problem.
    """
    root = parse_tree(text, filename)
    index = index_params(root)
    if overrides:
        apply_overrides(root, index, overrides)
    substitute(root, index)
    return root


def parse_file(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> Node:
    """Parse the HIT file at *path*, then apply command-line *overrides*.

    Overrides look like ``Models/elasticity/E=2e5`` (or ``:=``); the value may be
    quoted as in a file (``Models/a/v='1 2 3'``). A parameter that does not exist
    yet is created, with any missing sections.
    """
    name = os.fspath(path)
    return parse(_read(name, None), name, overrides)
