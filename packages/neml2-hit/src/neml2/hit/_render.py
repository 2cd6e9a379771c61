"""Writing a tree back to text.

:func:`render` is lossless: every element parsed from text keeps its original
whitespace, quoting and comments, so ``render(parse(text)) == text``. Elements
created or modified through the API use the canonical layout.

:func:`format_node` is the canonical formatter behind ``neml2-hit fmt``: two
spaces of indentation per level, ``name = value``, one element per line, at
most one blank line in a row, comments kept (with the spaces before a
trailing comment, so aligned comments stay aligned), legacy ``[./x]``/``[../]`` headers
modernised. Values are written exactly as in the source (their quoting and the
layout of multi-line strings are part of the value).
"""

from __future__ import annotations

from ._tree import Comment, Include, Item, Node, Param

__all__ = ["format_node", "render"]

INDENT = "  "


def _comment(item: Param | Node | Include) -> str:
    if item._comment_text is None:
        return ""
    ws = item._comment_ws if item._comment_ws is not None else " "
    return ws + item._comment_text


def render(node: Node) -> str:
    """Write a tree, or one section with its subtree, back as HIT text.

    Elements parsed from text keep their original whitespace, quoting and
    comments, so ``render(parse_tree(text)) == text``; elements created or
    modified through the API are written in the canonical layout.

    Args:
        node: a root (its body is written, with the input's trailing
            whitespace), or any section (written from its ``[name]`` header to
            its closing ``[]``, indented for its depth in the tree).

    Returns:
        The HIT text. The content of an ``!include`` is not written, only the
            directive.
    """
    out: list[str] = []
    if node.parent is None and node.is_root:
        _body(node.items, 0, out)
        trailing = node._close_prefix
        if trailing is None:
            trailing = "\n" if out else ""
        out.append(trailing)
    else:
        _section(node, _depth(node), out, with_prefix=False)
    return "".join(out)


def _depth(node: Node) -> int:
    """Indentation level of a section's header (0 for a top-level section)."""
    d = 0
    p = node.parent
    while p is not None and p.name:
        d += 1
        p = p.parent
    return d


def _prefix(item: Item, depth: int, out: list[str]) -> None:
    if item.prefix is not None:
        out.append(item.prefix)
    elif out:
        out.append("\n" + INDENT * depth)
    else:
        out.append(INDENT * depth)


def _body(items: list[Item], depth: int, out: list[str]) -> None:
    for item in items:
        if isinstance(item, Node):
            _section(item, depth, out, with_prefix=True)
            continue
        _prefix(item, depth, out)
        if isinstance(item, Comment):
            out.append(item.text)
        elif isinstance(item, Param):
            key_ws = " " if item._key_ws is None else item._key_ws
            op_ws = " " if item._op_ws is None else item._op_ws
            out.append(f"{item.name}{key_ws}{item.op}{op_ws}{item.text}{_comment(item)}")
        elif isinstance(item, Include):
            out.append(item.text + _comment(item))


def _section(node: Node, depth: int, out: list[str], *, with_prefix: bool) -> None:
    if with_prefix:
        _prefix(node, depth, out)
    out.append(node._header if node._header is not None else f"[{node.name}]")
    out.append(_comment(node))
    _body(node.items, depth + 1, out)
    if node._close_prefix is not None:
        out.append(node._close_prefix)
    else:
        out.append("\n" + INDENT * depth)
    out.append(node._close_text if node._close_text is not None else "[]")
    if node._close_comment_text is not None:
        ws = node._close_comment_ws if node._close_comment_ws is not None else " "
        out.append(ws + node._close_comment_text)


# -- canonical formatting ------------------------------------------------------------------------
def _canon_comment(text: str | None, ws: str | None) -> str:
    """A trailing comment, keeping the author's gap (comment alignment) when there was one."""
    if text is None:
        return ""
    gap = ws if ws and ws.strip(" \t") == "" else " "
    return gap + text.rstrip()


def format_node(node: Node) -> str:
    """Write a tree, or one section with its subtree, in the canonical layout.

    The layout behind ``neml2-hit fmt``: two spaces of indentation per level,
    ``name = value``, one element per line, at most one blank line in a row,
    comments kept (with the spaces before a trailing comment, so aligned
    comments stay aligned), legacy ``[./x]``/``[../]`` headers modernised.
    Values are written exactly as in the source.

    Args:
        node: a root (its body is written), or any section (written from its
            ``[name]`` header to its closing ``[]``, indented for its depth).

    Returns:
        The formatted text, ending in a newline (``""`` for an empty root).
            ``!include`` directives are kept as directives.
    """
    lines: list[str] = []
    if node.parent is None and node.is_root:
        _canon_body(node.items, 0, lines)
    else:
        _canon_section(node, _depth(node), lines)
    return "\n".join(lines) + "\n" if lines else ""


def _blank_before(item: Item) -> bool:
    return item.prefix is not None and item.prefix.count("\n") >= 2


def _canon_body(items: list[Item], depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for i, item in enumerate(items):
        if i > 0 and _blank_before(item) and lines and lines[-1] != "":
            lines.append("")
        if isinstance(item, Node):
            _canon_section(item, depth, lines)
        elif isinstance(item, Comment):
            lines.append(pad + item.text.rstrip())
        elif isinstance(item, Param):
            tail = _canon_comment(item._comment_text, item._comment_ws)
            lines.append(f"{pad}{item.name} {item.op} {item.text}{tail}")
        elif isinstance(item, Include):
            tail = _canon_comment(item._comment_text, item._comment_ws)
            lines.append(f"{pad}!include {item.text[8:].strip()}{tail}")


def _canon_section(node: Node, depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    lines.append(f"{pad}[{node.name}]{_canon_comment(node._comment_text, node._comment_ws)}")
    _canon_body(node.items, depth + 1, lines)
    lines.append(f"{pad}[]{_canon_comment(node._close_comment_text, node._close_comment_ws)}")
