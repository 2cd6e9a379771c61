r"""MkDocs hook: the pages' equations as MathML, converted when the site is built.

pymdownx.arithmatex (``generic: true`` in mkdocs.yml) finds the ``$...$`` and
``$$...$$`` equations of every page, the generated catalogue and the docstrings of the
API reference included, and leaves each as ``<span class="arithmatex">\(...\)</span>``
(inline) or ``<div class="arithmatex">\[...\]</div>`` (display). :func:`on_page_content`
replaces the TeX inside with MathML Core from math-core, which browsers typeset
natively: the site loads no script and no font for its equations, so it reads offline
(from ``file://``, on a cluster without internet). An equation that math-core cannot
convert (an unknown command, unbalanced braces) fails the build, naming the page and
the equation. ``to_mathml(html)`` is plain Python so a test can use it without MkDocs.
"""

from __future__ import annotations

import html as _html
import re

import math_core

#: An equation as arithmatex writes it: the wrapper's tag and the escaped TeX inside.
_EQUATION = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)

#: The delimiters arithmatex puts around inline (``\(...\)``) and display (``\[...\]``) TeX.
_DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}

_CONVERTER = math_core.LatexToMathML(fancy_error=False)


class MathConversionError(ValueError):
    """An equation math-core cannot convert; the message names the equation."""


def _tex(tag: str, escaped: str) -> tuple[str, bool]:
    r"""The TeX of one arithmatex wrapper and whether it is display math. A display
    block written as a bare environment (``\begin{align}...``) has no ``\[``."""
    tex = _html.unescape(escaped).strip()
    opening, closing = _DELIMITERS[tag]
    if tex.startswith(opening) and tex.endswith(closing):
        tex = tex[len(opening) : -len(closing)]
    return tex, tag == "div"


def to_mathml(html: str) -> str:
    """*html* with every arithmatex equation's TeX replaced by its MathML (the wrapper
    ``span``/``div`` and its class stay). Raises :class:`MathConversionError` on the
    first equation that does not convert."""
    matches = list(_EQUATION.finditer(html))
    if not matches:
        return html
    snippets = [_tex(m["tag"], m["tex"]) for m in matches]
    try:
        # one batch per page: equation numbers and \eqref resolve across the page
        mathml = _CONVERTER.convert_all(snippets)
    except math_core.LatexError:
        for tex, display in snippets:  # find the culprit for the message
            try:
                _CONVERTER.convert_with_local_state(tex, displaystyle=display)
            except math_core.LatexError as e:
                raise MathConversionError(f"equation {tex!r}: {e}".strip()) from None
        raise
    out, last = [], 0
    for m, converted in zip(matches, mathml, strict=True):
        out += [html[last : m.start("tex")], converted]
        last = m.end("tex")
    return "".join([*out, html[last:]])


def on_page_content(html, page, config, files):
    """MkDocs event: the page's equations as MathML."""
    from mkdocs.exceptions import PluginError

    try:
        return to_mathml(html)
    except MathConversionError as e:
        raise PluginError(f"docs/{page.file.src_uri}: {e}") from None
