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
import stat
from collections.abc import Callable, Iterator, Sequence

from ._errors import HitIncludeError, HitSyntaxError, Location
from ._lexer import Scanner, Source, Value, valid_name
from ._limits import FILE_BYTES_ENV, file_kind, file_limit, value_limit
from ._substitute import apply_overrides, index_params, substitute
from ._tree import Comment, Include, Item, Node, Param

__all__ = ["MAX_DEPTH", "MAX_INCLUDE_DEPTH", "parse", "parse_file", "parse_tree"]

MAX_DEPTH = 100
"""Maximum nesting of sections (path segments count as levels); deeper is a HitSyntaxError."""
#: Maximum nesting of ``!include`` directives.
MAX_INCLUDE_DEPTH = 32
#: The UTF-8 byte-order mark, accepted (and dropped) at the start of an input.
BOM = "\ufeff"


def _read(path: str, at: Location | None, limit: int) -> str:
    """Read the regular file *path* (at most *limit* bytes) as UTF-8.

    Anything else is a :class:`HitIncludeError` at *at* (or ``path:1:1``): a
    missing or unreadable file, one that is not a regular file (a directory, a
    FIFO, a device: checked before opening, so nothing blocks or reads without
    end), one larger than *limit*, or one that is not UTF-8. A UTF-8
    byte-order mark at the start is dropped.
    """
    where = at or Location(path, 1, 1)

    def not_regular(mode: int) -> HitIncludeError:
        return HitIncludeError(where, f"'{path}' is not a regular file ({file_kind(mode)})")

    def too_large(size: int) -> HitIncludeError:
        return HitIncludeError(
            where,
            f"'{path}' has {size} bytes, more than the limit of {limit} "
            f"({FILE_BYTES_ENV} or max_file_bytes=)",
        )

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(st.st_mode)
        if not st.st_size <= limit:
            raise too_large(st.st_size)
        # O_NONBLOCK: should the path turn into a FIFO between stat and open,
        # opening still returns at once (and fstat below rejects it)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise HitIncludeError(where, f"file not found: '{path}'") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        reason = getattr(e, "strerror", None) or e
        raise HitIncludeError(where, f"cannot read '{path}': {reason}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(st.st_mode)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if not size <= limit:
                raise too_large(size)
    except OSError as e:
        raise HitIncludeError(where, f"cannot read '{path}': {e.strerror or e}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise HitIncludeError(
            where, f"'{path}' is not UTF-8 text ({e.reason} at line {line}, byte {e.start})"
        ) from None
    return text[1:] if text.startswith(BOM) else text


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
    limit: int,
) -> str:
    """Parse *source* as a section body into ``owner.items``; return the trailing whitespace.

    ``parent`` is the logical section the top-level elements belong to and
    ``owner`` the object whose ``items`` list receives them (the parent itself,
    or an :class:`Include`). Included files may have at most *limit* bytes.
    """
    sc = Scanner(source)
    text = source.text
    stack = [_Frame(parent, owner.items, depth)]
    #: the column of the ``[]`` that closed each section (by id), for error reports
    closes: dict[int, int] = {}

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
                node = _likely_unclosed(owner.items, closes) or stack[-1].node
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
                closes[id(node)] = source.location(start).column
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
            inc = _include(
                text[start : sc.pos], path, source, start, prefix, stack[-1], includes, limit
            )
            add(inc)
            trailing_comment(inc)
        else:
            _param(sc, source, start, prefix, stack[-1].depth, add, trailing_comment)


def _likely_unclosed(items: list[Item], closes: dict[int, int]) -> Node | None:
    """Guess which section lacks its ``[]`` from the indentation of the text.

    Walking the elements in document order, the first one that starts a line
    at or left of the header of the section it ended up in betrays that
    section: its ``[]`` was forgotten and a later ``[]`` closed it instead. So
    does a ``[]`` left of the header of the section it closed (*closes* maps a
    section's id to the column of its ``[]``): it belonged to an outer section.
    """
    stack: list[tuple[Node | None, Iterator[Item]]] = [(None, iter(items))]
    while stack:
        parent, it = stack[-1]
        item = next(it, None)
        if item is None:
            stack.pop()
            column = closes.get(id(parent))
            if parent is not None and column is not None and column < parent.location.column:
                return parent
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
    limit: int,
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
    if "\0" in resolved:
        raise HitIncludeError(at, f"invalid file name {path!r} (it contains a NUL character)")
    key = os.path.realpath(resolved)
    if key in includes:
        chain = " -> ".join([*(os.path.basename(i) for i in includes), os.path.basename(key)])
        raise HitIncludeError(at, f"include cycle: {chain}")
    inc = Include(text, path, resolved, at, prefix)
    content = _read(resolved, at, limit)
    inc.trailing = _parse_body(
        Source(content, resolved), frame.node, inc, frame.depth, (*includes, key), limit
    )
    return inc


def parse_tree(text: str, filename: str = "<string>", *, max_file_bytes: int | None = None) -> Node:
    """Build the syntax tree of HIT text, without duplicate checks or substitution.

    Parameters set twice are both kept, ``:=`` overrides are not resolved and
    ``${...}`` expressions stay as written; :func:`parse` does those steps. A
    byte-order mark at the start of *text* is dropped.

    Args:
        text: the HIT input.
        filename: the name used in error locations and to resolve relative
            ``!include`` paths (``"<string>"``: relative to the working directory).
        max_file_bytes: the size bound of each included file, in bytes (default
            ``None``: ``$NEML2_HIT_MAX_FILE_BYTES``, else 64 MiB). *text* itself
            is not bounded.

    Returns:
        The root :class:`Node` (empty name) of the lossless tree.

    Raises:
        TypeError: *text* is not a ``str``.
        ValueError: *max_file_bytes* is given but is not a positive integer.
        HitSyntaxError: *text* or an included file is not valid HIT.
        HitIncludeError: an ``!include`` cannot be read (missing, not a regular
            file, too large, not UTF-8, a cycle, nested too deeply).
        HitError: ``$NEML2_HIT_MAX_FILE_BYTES`` is set but is not a positive integer.
    """
    if not isinstance(text, str):
        raise TypeError(f"HIT text must be str, not {type(text).__name__}")
    at = Location(filename, 1, 1)
    limit = file_limit(max_file_bytes, at)
    if text.startswith(BOM):
        text = text[1:]
    root = Node(location=at)
    includes: tuple[str, ...] = ()
    if not filename.startswith("<"):
        includes = (os.path.realpath(filename),)
    root._close_prefix = _parse_body(Source(text, filename), root, root, 0, includes, limit)
    return root


def parse(
    text: str,
    filename: str = "<string>",
    overrides: Sequence[str] = (),
    *,
    max_file_bytes: int | None = None,
    max_value_bytes: int | None = None,
) -> Node:
    """Parse HIT *text* into a root :class:`Node`.

    Args:
        text: the input.
        filename: the name used in locations and to resolve relative
            ``!include`` paths (``"<string>"``: relative to the working directory).
        overrides: command-line style assignments (``"Models/a/E=2e5"``)
            applied after parsing and before substitution; see :func:`parse_file`.
        max_file_bytes: the size bound of each included file (default:
            ``$NEML2_HIT_MAX_FILE_BYTES``, else 64 MiB).
        max_value_bytes: the bound on a value after ``${...}`` substitution
            (default: ``$NEML2_HIT_MAX_VALUE_BYTES``, else 10 MiB).

    Returns:
        The root :class:`Node` (empty name), with duplicates checked, ``:=``
            overrides resolved, *overrides* applied and ``${...}`` evaluated.

    Raises:
        ValueError: *max_file_bytes* or *max_value_bytes* is given but is not a
            positive integer.
        HitError: any syntax, include, duplicate, override or substitution
            problem (the subclasses :class:`HitSyntaxError`,
            :class:`HitIncludeError`, :class:`HitDuplicateError`,
            :class:`HitOverrideError`, :class:`HitSubstitutionError`), or a size
            bound's environment variable that is not a positive integer.
    """
    value_bound = value_limit(max_value_bytes, Location(filename, 1, 1))
    root = parse_tree(text, filename, max_file_bytes=max_file_bytes)
    index = index_params(root)
    if overrides:
        apply_overrides(root, index, overrides)
    substitute(root, index, max_value_bytes=value_bound)
    return root


def parse_file(
    path: str | os.PathLike[str],
    overrides: Sequence[str] = (),
    *,
    max_file_bytes: int | None = None,
    max_value_bytes: int | None = None,
) -> Node:
    """Parse the HIT file at *path*, then apply command-line *overrides*.

    Overrides look like ``Models/elasticity/E=2e5`` (or ``:=``); the value may be
    quoted as in a file (``Models/a/v='1 2 3'``). The block an override names
    must exist, and a parameter it does not have yet may only join a block that
    already holds parameters (a :class:`HitOverrideError` otherwise, suggesting
    the closest existing path); ``+Models/new/type=Foo`` creates whatever is
    missing.

    Args:
        path: the input file. It must be a regular file of UTF-8 text (a
            leading byte-order mark is dropped); relative ``!include`` paths are
            resolved against its directory.
        overrides: command-line style assignments, applied in order after
            parsing and before ``${...}`` substitution (default: none).
        max_file_bytes: the size bound of the file and of each included file, in
            bytes (default: ``$NEML2_HIT_MAX_FILE_BYTES``, else 64 MiB).
        max_value_bytes: the bound on a value after ``${...}`` substitution
            (default: ``$NEML2_HIT_MAX_VALUE_BYTES``, else 10 MiB).

    Returns:
        The root :class:`Node` (empty name), as :func:`parse` returns it.

    Raises:
        HitIncludeError: *path* cannot be read (missing, not a regular file,
            larger than *max_file_bytes*, not UTF-8).
        HitOverrideError: an override names a block or parameter the input does
            not have.
        HitError: any other problem :func:`parse` reports.
        ValueError: *max_file_bytes* or *max_value_bytes* is given but is not a
            positive integer.
    """
    name = os.fspath(path)
    at = Location(name, 1, 1)
    text = _read(name, None, file_limit(max_file_bytes, at))
    return parse(
        text, name, overrides, max_file_bytes=max_file_bytes, max_value_bytes=max_value_bytes
    )
