"""HIT input files: parser, lossless writer and precise errors (no torch).

Quick tour::

    from neml2 import hit

    root = hit.parse_file("model.i", overrides=["Models/elasticity/E=2e5"])  # '+path=v' creates
    el = root.find("Models/elasticity")
    E = el.param("E").as_float()          # HitValueError names file:line:column
    el.set_param("nu", 0.3)
    text = hit.render(root)               # lossless for untouched parts

Errors all derive from :class:`HitError` and print as ``file:line:column: reason``.
"""

from ._errors import (
    HitDuplicateError,
    HitError,
    HitIncludeError,
    HitOverrideError,
    HitSubstitutionError,
    HitSyntaxError,
    HitValueError,
    Location,
)
from ._limits import FILE_BYTES_ENV, MAX_FILE_BYTES, MAX_VALUE_BYTES, VALUE_BYTES_ENV, file_kind
from ._parser import MAX_DEPTH, parse, parse_file, parse_tree
from ._render import format_node, render
from ._tree import Comment, Include, Node, Param, structure, value_token

__all__ = [
    "FILE_BYTES_ENV",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUE_BYTES",
    "VALUE_BYTES_ENV",
    "Comment",
    "HitDuplicateError",
    "HitError",
    "HitIncludeError",
    "HitOverrideError",
    "HitSubstitutionError",
    "HitSyntaxError",
    "HitValueError",
    "Include",
    "Location",
    "Node",
    "Param",
    "file_kind",
    "format_node",
    "format_text",
    "parse",
    "parse_file",
    "parse_tree",
    "render",
    "structure",
    "value_token",
]


def format_text(text: str, filename: str = "<string>") -> str:
    """Reformat HIT text in the canonical layout (see :func:`format_node`).

    Only the syntax is checked (includes are read, ``${...}`` is not evaluated),
    so a file that needs, say, an environment variable can still be formatted.

    Args:
        text: the HIT input.
        filename: the name used in error locations and to resolve relative
            ``!include`` paths (``"<string>"``: relative to the working directory).

    Returns:
        The formatted text: one element per line, ending in a newline (``""``
            for an input with no elements).

    Raises:
        HitSyntaxError: *text* is not valid HIT.
        HitIncludeError: an ``!include`` cannot be read.
    """
    return format_node(parse_tree(text, filename))
