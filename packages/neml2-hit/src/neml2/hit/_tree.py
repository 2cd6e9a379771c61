"""The node tree of a HIT input: sections, parameters, comments, includes.

The tree is *lossless*: besides names and values, every element keeps the
whitespace that precedes it and the exact source text of its value, header and
comments, so :func:`neml2.hit.render` reproduces the parsed text byte for byte.
Elements created or modified through the API (``set_param``, ``add_child``,
...) carry ``None`` formatting and are rendered in the canonical style.

Queries are *logical*: ``children()``, ``params()``, ``find()`` and ``param()``
look through ``!include`` directives, understand path names (``[a/b]``,
``a/b = 1``) and skip parameters superseded by a ``:=`` override.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

from ._errors import HitValueError, Location
from ._lexer import Value, valid_name

__all__ = ["Comment", "Include", "Item", "Node", "Param", "structure", "value_token"]

_API = Location("<api>", 0, 0)
_SAFE_UNQUOTED = re.compile(r"[A-Za-z0-9_.+\-*/<>~@%^&|,:?!][A-Za-z0-9_.+\-*/<>~@%^&|,:?!=]*")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)
_TRUE = frozenset({"true", "on", "yes"})
_FALSE = frozenset({"false", "off", "no"})

Scalar: TypeAlias = str | int | float | bool


def _scalar_token(v: Scalar) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return v
    raise TypeError(f"unsupported HIT value element {v!r} ({type(v).__name__})")


def value_token(value: Any) -> tuple[str, str]:
    """Write a Python value as a HIT value token.

    Lists become space-separated arrays, lists of lists ``;``-separated rows.
    Bools are written ``true``/``false``, numbers with ``repr``, strings as they
    are.

    Args:
        value: a ``str``, ``int``, ``float`` or ``bool``, a list (or tuple) of
            them, or a list of such lists (the rows of a matrix).

    Returns:
        ``(token, raw)``: the source text to write (single-quoted, with ``\\``,
            ``'`` and ``$`` escaped, where needed) and the raw string a parser will
            read back from it.

    Raises:
        TypeError: an element is not a ``str``, ``int``, ``float`` or ``bool``.
    """
    if isinstance(value, list | tuple):
        if value and all(isinstance(r, list | tuple) for r in value):
            raw = "; ".join(" ".join(_scalar_token(v) for v in row) for row in value)
        else:
            raw = " ".join(_scalar_token(v) for v in value)
    else:
        raw = _scalar_token(value)
    if _SAFE_UNQUOTED.fullmatch(raw):
        return raw, raw
    esc = raw.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\$")
    return f"'{esc}'", raw


def _to_int(token: str) -> int | None:
    return int(token) if _INT.fullmatch(token) else None


def _to_float(token: str) -> float | None:
    return float(token) if _FLOAT.fullmatch(token) else None


def _to_bool(token: str) -> bool | None:
    low = token.lower()
    return True if low in _TRUE else False if low in _FALSE else None


_CONVERTERS: dict[type, Callable[[str], Any]] = {
    str: str,
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
}


class _Item:
    """Common part of every element of a section body."""

    __slots__ = ("_owner", "location", "parent", "prefix")

    def __init__(self, location: Location, prefix: str | None) -> None:
        #: Where the element starts in its file.
        self.location = location
        #: Whitespace (blank lines included) that precedes the element, or
        #: ``None`` for canonical formatting.
        self.prefix = prefix
        #: The logical parent section (``None`` for a detached element or the root).
        self.parent: Node | None = None
        self._owner: Node | Include | None = None

    def remove(self) -> None:
        """Detach this element from the tree."""
        if self._owner is not None:
            self._owner.items.remove(self)
        self._owner = None
        self.parent = None


class Comment(_Item):
    """A comment on a line of its own: ``# text``.

    Attributes:
        text: the comment as written, ``#`` included.
        location: where the comment starts in its file.
        prefix: the whitespace (blank lines included) before the comment, or
            ``None`` for canonical formatting.
        parent: the section the comment belongs to (``None`` when detached).
    """

    __slots__ = ("text",)

    def __init__(self, text: str, location: Location = _API, prefix: str | None = None) -> None:
        """Make a detached comment; :meth:`Node.add_comment` makes and inserts one.

        Args:
            text: the comment as written, ``#`` included (``"# note"``).
            location: where the comment starts (default: a placeholder
                ``<api>:0:0`` for comments made through the API).
            prefix: the whitespace before the comment, or ``None`` (default)
                for canonical formatting.
        """
        super().__init__(location, prefix)
        #: The comment as written, ``#`` included.
        self.text = text

    @property
    def content(self) -> str:
        """The comment text after ``#`` (one leading space removed)."""
        body = self.text[1:].rstrip()
        return body[1:] if body.startswith(" ") else body

    def __repr__(self) -> str:
        return f"Comment({self.text!r})"


class _Commented(_Item):
    """An element that can carry a trailing comment on its line."""

    __slots__ = ("_comment_text", "_comment_ws")

    def __init__(self, location: Location, prefix: str | None) -> None:
        super().__init__(location, prefix)
        self._comment_ws: str | None = None
        self._comment_text: str | None = None

    @property
    def comment(self) -> str | None:
        """The trailing ``# ...`` comment of the element's line (text after ``#``)."""
        if self._comment_text is None:
            return None
        body = self._comment_text[1:].rstrip()
        return body[1:] if body.startswith(" ") else body

    @comment.setter
    def comment(self, text: str | None) -> None:
        if text is None:
            self._comment_ws = self._comment_text = None
            return
        if "\n" in text:
            raise ValueError("a trailing comment cannot contain a newline")
        self._comment_ws = " "
        self._comment_text = f"# {text}" if text else "#"


class Param(_Commented):
    """A parameter ``name = value`` (or ``name := value``).

    Attributes:
        name: the parameter name as written (may be a path, ``a/b``).
        op: ``"="``, or ``":="`` (an override that may redefine the parameter).
        raw: the value after substitution, quotes removed and escapes resolved
            (until substitution has run, brace expressions are kept as written).
        overridden: ``True`` when another definition with ``:=`` supersedes this one.
        location: where the parameter starts in its file.
        value_location: where the first character of the value is.
        prefix: the whitespace (blank lines included) before the parameter, or
            ``None`` for canonical formatting.
        parent: the logical section the parameter belongs to (``None`` when detached).
    """

    __slots__ = (
        "_key_ws",
        "_op_ws",
        "_value",
        "name",
        "op",
        "overridden",
        "raw",
        "value_location",
    )

    def __init__(
        self,
        name: str,
        value: Value,
        *,
        op: str = "=",
        location: Location = _API,
        value_location: Location | None = None,
        prefix: str | None = None,
        key_ws: str | None = None,
        op_ws: str | None = None,
    ) -> None:
        """Make a detached parameter; :meth:`Node.set_param` makes and inserts one.

        Args:
            name: the parameter name (may be a path, ``a/b``). It is not checked.
            value: the scanned value (``neml2.hit._lexer.Value``: the source
                token and its literal segments); :attr:`raw` starts as its
                unevaluated text.
            op: ``"="`` (default) or ``":="``.
            location: where the parameter starts (default: a placeholder
                ``<api>:0:0`` for parameters made through the API).
            value_location: where the value starts (default: *location*).
            prefix: the whitespace before the parameter, or ``None`` (default)
                for canonical formatting.
            key_ws: the whitespace between the name and the operator, or
                ``None`` (default) for one space.
            op_ws: the whitespace between the operator and the value, or
                ``None`` (default) for one space.
        """
        super().__init__(location, prefix)
        #: The parameter name as written (may be a path, ``a/b``).
        self.name = name
        #: ``"="`` or ``":="`` (an override that may redefine the parameter).
        self.op = op
        self._value = value
        self._key_ws = key_ws
        self._op_ws = op_ws
        #: Location of the first character of the value.
        self.value_location = value_location or location
        #: The value after substitution, quotes removed and escapes resolved
        #: (until substitution has run, brace expressions are kept as written).
        self.raw: str = value.unevaluated()
        #: ``True`` when another definition with ``:=`` supersedes this one.
        self.overridden = False

    # -- identity ----------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The value exactly as written in the source (quotes included)."""
        return self._value.text

    @property
    def fullpath(self) -> str:
        """The logical path of the parameter, e.g. ``"Models/elasticity/E"``."""
        base = self.parent.fullpath if self.parent is not None else ""
        return f"{base}/{self.name}" if base else self.name

    def __repr__(self) -> str:
        return f"Param({self.fullpath!r}, {self.raw!r})"

    def set_value(self, value: Any) -> None:
        """Replace the value, taken literally (no ``${...}`` substitution).

        The source text becomes the canonical token of *value* (see
        :func:`value_token`); :attr:`raw` becomes the string a parser would
        read back from it.

        Args:
            value: a ``str``, ``int``, ``float`` or ``bool``, a list of them,
                or a list of rows (lists) of them.

        Raises:
            TypeError: an element of *value* is not a ``str``, ``int``,
                ``float`` or ``bool``.
        """
        token, raw = value_token(value)
        self._value = Value(token, [raw], "'" if token.startswith("'") else "")
        self.raw = raw

    # -- conversions ------------------------------------------------------------------
    def _fail(self, what: str) -> HitValueError:
        return HitValueError(self.location, f"parameter '{self.fullpath}': {what}")

    def _convert(self, token: str, kind: type, where: str = "") -> Any:
        conv = _CONVERTERS.get(kind)
        if conv is None:
            raise TypeError(f"unsupported conversion kind {kind!r} (use str, int, float, bool)")
        result = conv(token)
        if result is None:
            raise self._fail(f"cannot convert {token!r}{where} to {kind.__name__}")
        return result

    def as_str(self) -> str:
        """Return the value as a string.

        Returns:
            :attr:`raw`: the value after substitution, quotes removed and
                escapes resolved.
        """
        return self.raw

    def as_int(self) -> int:
        """Return the value as an integer.

        Returns:
            The value (surrounding whitespace ignored) read as a decimal
                integer with an optional sign.

        Raises:
            HitValueError: the value is not an integer; the message names the
                parameter and its location.
        """
        return self._convert(self.raw.strip(), int)

    def as_float(self) -> float:
        """Return the value as a float.

        Returns:
            The value (surrounding whitespace ignored) read as a decimal
                number; ``inf``, ``infinity`` and ``nan`` are accepted in any case.

        Raises:
            HitValueError: the value is not a number; the message names the
                parameter and its location.
        """
        return self._convert(self.raw.strip(), float)

    def as_bool(self) -> bool:
        """Return the value as a bool.

        Returns:
            ``True`` for ``true``, ``on``, ``yes``; ``False`` for ``false``,
                ``off``, ``no`` (case-insensitive, surrounding whitespace ignored).

        Raises:
            HitValueError: the value is none of these words.
        """
        return self._convert(self.raw.strip(), bool)

    def as_list(self, kind: type = str) -> list[Any]:
        """Return the whitespace-separated elements of the value, each converted.

        Args:
            kind: the element type: ``str`` (default), ``int``, ``float`` or
                ``bool``, converted as :meth:`as_int`, :meth:`as_float` and
                :meth:`as_bool` do.

        Returns:
            One element per whitespace-separated token (``[]`` for an empty
                value).

        Raises:
            HitValueError: an element cannot be converted (the message gives
                its index).
            TypeError: *kind* is not one of the four types.
        """
        return [
            self._convert(tok, kind, f" (element {i})") for i, tok in enumerate(self.raw.split())
        ]

    def as_matrix(self, kind: type = str) -> list[list[Any]]:
        """Return the ``;``-separated rows of the value, each a list of converted elements.

        Args:
            kind: the element type: ``str`` (default), ``int``, ``float`` or
                ``bool``, converted as in :meth:`as_list`.

        Returns:
            One list per ``;``-separated row, each with its whitespace-separated
                elements; rows may have different lengths (``[]`` for an empty value).

        Raises:
            HitValueError: an element cannot be converted (the message gives
                its row and index).
            TypeError: *kind* is not one of the four types.
        """
        if not self.raw.strip():
            return []
        return [
            [self._convert(tok, kind, f" (row {r}, element {i})") for i, tok in enumerate(row)]
            for r, row in enumerate(part.split() for part in self.raw.split(";"))
        ]


class Include(_Commented):
    """An ``!include FILE`` directive; its parsed content is in :attr:`items`.

    Its elements belong logically to the section that holds the directive:
    :meth:`Node.children`, :meth:`Node.params` and :meth:`Node.find` look
    through it. The parser makes these; :func:`~neml2.hit.render` writes the
    directive but never rewrites the included file.

    Attributes:
        text: the directive as written, e.g. ``"!include common.i"``.
        path: the file name as written.
        file: the resolved file name the content was read from.
        items: the elements of the included file.
        trailing: whitespace at the end of the included file.
        location: where the directive starts.
        parent: the section that holds the directive.
    """

    __slots__ = ("file", "items", "path", "text", "trailing")

    def __init__(
        self, text: str, path: str, file: str, location: Location, prefix: str | None
    ) -> None:
        """Make an empty directive (the parser fills :attr:`items`).

        Args:
            text: the directive as written, e.g. ``"!include common.i"``.
            path: the file name as written.
            file: the resolved file name the content is read from.
            location: where the directive starts.
            prefix: the whitespace before the directive, or ``None`` for
                canonical formatting.
        """
        super().__init__(location, prefix)
        #: The directive as written, e.g. ``"!include common.i"``.
        self.text = text
        #: The file name as written.
        self.path = path
        #: The resolved file name the content was read from.
        self.file = file
        #: The elements of the included file.
        self.items: list[Item] = []
        #: Whitespace at the end of the included file.
        self.trailing = ""

    def __repr__(self) -> str:
        return f"Include({self.path!r})"


class Node(_Commented):
    """A section ``[name] ... []``; the root node has the empty name.

    :func:`~neml2.hit.parse` and :func:`~neml2.hit.parse_file` return a root.
    Queries (:meth:`children`, :meth:`params`, :meth:`find`, :meth:`param`)
    look through ``!include`` directives, understand path names and skip
    parameters superseded by ``:=``.

    Attributes:
        items: the body elements, in order (sections, parameters, comments,
            includes), as written: includes are not expanded here.
        location: where the section header starts (for a root: ``file:1:1``).
        parent: the enclosing section (``None`` for a root or a detached section).
    """

    __slots__ = (
        "_close_comment_text",
        "_close_comment_ws",
        "_close_prefix",
        "_close_text",
        "_header",
        "_name",
        "items",
    )

    def __init__(self, name: str = "", *, location: Location = _API) -> None:
        """Make a detached, empty section (or root).

        Args:
            name: the section name (``""``, the default, for a root). A path
                such as ``"a/b"`` is kept as one node, as written.
            location: where the section starts (default: a placeholder
                ``<api>:0:0`` for sections made through the API).

        Raises:
            ValueError: *name* is not a valid section name.
        """
        if name and not valid_name(name):
            raise ValueError(f"invalid section name {name!r}")
        super().__init__(location, None)
        self._name = name
        #: The body elements, in order (sections, parameters, comments, includes).
        self.items: list[Item] = []
        self._header: str | None = None
        self._close_prefix: str | None = None
        self._close_text: str | None = None
        self._close_comment_ws: str | None = None
        self._close_comment_text: str | None = None

    def __repr__(self) -> str:
        return f"Node({self.fullpath!r})" if self.name else "Node(<root>)"

    # -- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The section name as written (``""`` for the root); assigning renames the section."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if not valid_name(value):
            raise ValueError(f"invalid section name {value!r}")
        if not self._name:
            raise ValueError("a root node cannot be renamed")
        self._name = value
        self._header = None  # re-rendered as [value]

    @property
    def is_root(self) -> bool:
        """Whether this node is a root (no name)."""
        return not self.name

    @property
    def legacy(self) -> bool:
        """Whether the header was written in MOOSE's legacy ``[./name]`` form."""
        return self._header is not None and self._header.startswith("[./")

    @property
    def fullpath(self) -> str:
        """The path from the root, e.g. ``"Models/elasticity"`` (``""`` for the root)."""
        parts: list[str] = []
        node: Node | None = self
        while node is not None and node.name:
            parts.append(node.name)
            node = node.parent
        return "/".join(reversed(parts))

    @property
    def root(self) -> Node:
        """The root of the tree this node belongs to."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    # -- traversal --------------------------------------------------------------------------
    def _logical_items(self) -> Iterator[Item]:
        """Body elements, looking through ``!include`` directives."""
        stack: list[Iterator[Item]] = [iter(self.items)]
        while stack:
            for item in stack[-1]:
                if isinstance(item, Include):
                    stack.append(iter(item.items))
                    break
                yield item
            else:
                stack.pop()

    def children(self) -> list[Node]:
        """Return the child sections, looking through includes.

        Returns:
            The sections directly below this one, in document order. A section
                written with a path name (``[a/b]``) is one child named ``"a/b"``.
        """
        return [i for i in self._logical_items() if isinstance(i, Node)]

    def params(self) -> list[Param]:
        """Return the effective parameters of this section, looking through includes.

        Returns:
            The parameters in document order, definitions superseded by a
                ``:=`` override skipped.
        """
        return [i for i in self._logical_items() if isinstance(i, Param) and not i.overridden]

    def comments(self) -> list[Comment]:
        """Return the stand-alone comments of the body, looking through includes.

        Returns:
            The comments on lines of their own, in document order (trailing
                comments are the ``comment`` property of their element).
        """
        return [i for i in self._logical_items() if isinstance(i, Comment)]

    def walk(self) -> Iterator[Node]:
        """Iterate over this node and all sections below it.

        Returns:
            An iterator over this node first, then every section below it,
                depth first, in document order (through includes).
        """
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def _lookup(self, path: str, want: type) -> Any:
        segs = [s for s in path.strip("/").split("/") if s]
        if not segs:
            return self if want is Node else None
        # depth-first search in document order over (node, remaining segments)
        stack: list[tuple[Node, list[str]]] = [(self, segs)]
        while stack:
            node, rest = stack.pop()
            pending: list[tuple[Node, list[str]]] = []
            for item in node._logical_items():
                if isinstance(item, Comment | Include):
                    continue
                if isinstance(item, Param) and (want is Node or item.overridden):
                    continue
                parts = item.name.split("/")
                if rest[: len(parts)] != parts:
                    continue
                if len(parts) == len(rest):
                    if isinstance(item, want):
                        return item
                elif isinstance(item, Node):
                    pending.append((item, rest[len(parts) :]))
            stack.extend(reversed(pending))
        return None

    def find(self, path: str) -> Node | None:
        """Look up a section by its path relative to this node.

        Args:
            path: ``/``-separated section names, e.g. ``"Models/elasticity"``;
                matches sections written nested (``[Models] [elasticity]``) or
                with a path name (``[Models/elasticity]``). Leading and trailing
                ``/`` are ignored; ``""`` names this node.

        Returns:
            The first matching section in document order (depth first, through
                includes), or ``None`` if there is none.
        """
        return self._lookup(path, Node)

    def param(self, name: str) -> Param | None:
        """Look up an effective parameter by name or path relative to this node.

        Args:
            name: the parameter name, or a path such as ``"a/b/E"`` (sections,
                then the parameter; written nested or as path names).

        Returns:
            The first matching parameter not superseded by a ``:=`` override,
                or ``None`` if there is none.
        """
        return self._lookup(name, Param)

    def merged(self) -> Node:
        """Return a logical copy: includes inlined, paths split, same-name sections merged.

        ``[a/b]`` and ``a/b = 1`` become nested sections; sections that appear
        several times under one parent (two ``[Models]`` blocks, say) become
        one, in order of first appearance; definitions superseded by ``:=``
        are dropped. Values, comments and locations are kept; the layout is
        canonical. The original tree is not modified.

        Returns:
            A new detached node with the last component of this node's name
                (a root for a root), holding the merged content.
        """
        out = Node(self.name.rpartition("/")[2], location=self.location)
        _merge_into(out, self, {})
        return out

    # -- mutation --------------------------------------------------------------------------
    def _attach(self, item: Item, index: int | None) -> None:
        if item._owner is not None:
            item.remove()
        if index is None:
            self.items.append(item)
        else:
            self.items.insert(index, item)
        item._owner = self
        item.parent = self
        # A body written on one line (``[a][]``) gets a canonical close once it grows.
        if self._close_prefix is not None and "\n" not in self._close_prefix:
            self._close_prefix = None if self.name else self._close_prefix or None

    def add_child(self, child: str | Node, index: int | None = None) -> Node:
        """Append, or insert, a child section.

        Args:
            child: a section name (a new empty section is made), or a
                :class:`Node`, which is detached from where it was first.
            index: the position in :attr:`items` to insert at (as
                ``list.insert``), or ``None`` (default) to append.

        Returns:
            The inserted section.

        Raises:
            ValueError: *child* is an invalid name, or is this section or one
                of its ancestors.
        """
        node = Node(child) if isinstance(child, str) else child
        if node is self or node in self._ancestors():
            raise ValueError("cannot make a section a child of itself")
        self._attach(node, index)
        return node

    def _ancestors(self) -> list[Node]:
        out: list[Node] = []
        node = self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    def set_param(self, name: str, value: Any, *, op: str | None = None) -> Param:
        """Set a parameter of this section, creating it if needed.

        The value is taken literally (no ``${...}`` substitution). An existing
        parameter written in this section's own body is changed in place; one
        that comes from an included file (which :func:`~neml2.hit.render` does
        not rewrite) is marked overridden and a new ``:=`` definition is
        appended here. Otherwise a new parameter is appended.

        Args:
            name: the parameter name (a path such as ``"a/E"`` is allowed).
            value: a string, a number, a bool, a list, or a list of rows.
            op: ``"="`` or ``":="`` to set the operator, or ``None`` (default)
                to keep an existing parameter's operator (``"="`` for a new one).

        Returns:
            The parameter that now holds the value.

        Raises:
            ValueError: *name* is not a valid name, or *op* is not ``None``,
                ``"="`` or ``":="``.
            TypeError: an element of *value* is not a ``str``, ``int``,
                ``float`` or ``bool``.
        """
        if not valid_name(name):
            raise ValueError(f"invalid parameter name {name!r}")
        if op not in (None, "=", ":="):
            raise ValueError(f"invalid assignment operator {op!r}")
        existing = self.param(name)
        if existing is not None and existing.parent is self and existing._owner is self:
            existing.set_value(value)
            if op is not None:
                existing.op = op
            return existing
        if existing is not None and existing.parent is self:
            # defined in an included file, which render() does not rewrite: override it here
            existing.overridden = True
            op = ":="
        token, raw = value_token(value)
        p = Param(name, Value(token, [raw], "'" if token.startswith("'") else ""), op=op or "=")
        self._attach(p, None)
        return p

    def remove_param(self, name: str) -> bool:
        """Remove every definition of a parameter in this section.

        Definitions in an ``!include`` of this section are removed from the
        in-memory tree too (:func:`~neml2.hit.render` does not rewrite the
        included file). Parameters of subsections are not touched.

        Args:
            name: the parameter name as written (leading and trailing ``/``
                ignored).

        Returns:
            Whether any definition was removed.
        """
        found = [
            i
            for i in self._logical_items()
            if isinstance(i, Param) and i.name == name.strip("/") and i.parent is self
        ]
        for p in found:
            p.remove()
        return bool(found)

    def add_comment(self, text: str, index: int | None = None) -> Comment:
        """Append, or insert, a stand-alone ``# text`` comment line.

        Args:
            text: the comment text, without ``#`` (``""`` gives a bare ``#``).
            index: the position in :attr:`items` to insert at (as
                ``list.insert``), or ``None`` (default) to append.

        Returns:
            The inserted comment.

        Raises:
            ValueError: *text* contains a newline.
        """
        if "\n" in text:
            raise ValueError("a comment cannot contain a newline")
        c = Comment(f"# {text}" if text else "#")
        self._attach(c, index)
        return c


Item: TypeAlias = Node | Param | Comment | Include


def _merge_into(target: Node, source: Node, index: dict[int, dict[str, Node]]) -> None:
    """Copy the logical content of *source* into *target* (see :meth:`Node.merged`)."""

    def section(parent: Node, name: str, location: Location) -> Node:
        children = index.setdefault(id(parent), {})
        node = children.get(name)
        if node is None:
            node = Node(name, location=location)
            parent._attach(node, None)
            children[name] = node
        return node

    for item in source._logical_items():
        if isinstance(item, Comment):
            target._attach(Comment(item.text, item.location), None)
        elif isinstance(item, Param):
            if item.overridden:
                continue
            *path, name = item.name.split("/")
            t = target
            for seg in path:
                t = section(t, seg, item.location)
            copy = Param(name, item._value, op=item.op, location=item.location)
            copy.value_location, copy.raw = item.value_location, item.raw
            copy._comment_text = item._comment_text
            for old in [p for p in t.items if isinstance(p, Param) and p.name == name]:
                old.remove()
            t._attach(copy, None)
        elif isinstance(item, Node):
            t = target
            for seg in item.name.split("/"):
                t = section(t, seg, item.location)
            if item._comment_text is not None and t._comment_text is None:
                t._comment_text = item._comment_text
            _merge_into(t, item, index)


def iter_params(node: Node) -> Iterator[Param]:
    """Every parameter below *node* (overridden ones included), in document order."""
    for section in node.walk():
        for item in section._logical_items():
            if isinstance(item, Param):
                yield item


def structure(node: Node) -> tuple[Any, ...]:
    """Summarise a tree's content, independent of layout and quoting.

    Two trees have equal structures when they have the same sections, parameters
    (name, operator, raw value, trailing comment), stand-alone comments and
    includes, in the same order (trailing whitespace of comments is ignored).
    ``structure(parse(render(t))) == structure(t)`` is the round-trip guarantee
    of the writer.

    Args:
        node: a root or a section; its whole subtree is summarised, the content
            of includes included.

    Returns:
        A hashable nested tuple: ``("section", name, comment, items,
            close_comment)`` for a section, ``("param", name, op, raw, comment)``,
            ``("include", path, comment, items)`` and ``("comment", text)``.
    """

    def c(text: str | None) -> str | None:
        return None if text is None else text.rstrip()

    def item(i: Item) -> tuple[Any, ...]:
        if isinstance(i, Node):
            return (
                "section",
                i.name,
                c(i._comment_text),
                tuple(item(x) for x in i.items),
                c(i._close_comment_text),
            )
        if isinstance(i, Param):
            return ("param", i.name, i.op, i.raw, c(i._comment_text))
        if isinstance(i, Include):
            return ("include", i.path, c(i._comment_text), tuple(item(x) for x in i.items))
        return ("comment", c(i.text))

    return item(node)
