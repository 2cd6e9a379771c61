"""Griffe extension: the docstrings' reStructuredText spans as Markdown.

The packages' docstrings mark code the Sphinx way (````x````, ``:func:`x```,
``:class:`~neml2.models.Model```); mkdocstrings renders Markdown, where those
would show as raw roles. :func:`to_markdown` rewrites both into one code span
(a ``~`` keeps the last dotted component, as Sphinx shows it).
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.S)


def to_markdown(text: str) -> str:
    """*text* with Sphinx roles and double-backtick literals as Markdown code spans."""

    def role(m: re.Match) -> str:
        target = m[2].split(".")[-1] if m[1] else m[2]
        return f"`{target}`"

    return _LITERAL.sub(lambda m: f"`{m[1]}`", _ROLE.sub(role, text))


class RstToMarkdown(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
