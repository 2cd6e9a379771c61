"""MkDocs hook: the section "What default CI runs", written from tools/neml2_ci_scope.py.

A page holds the marker ``<!-- ci-scope -->`` on a line of its own; :func:`on_page_markdown`
replaces it with :func:`neml2_ci_scope.markdown` over ``neml2.routes.ROUTES``: the default
sessions and the route matrix's cells in default CI, from the module noxfile.py reads
them from, so no page keeps a copy of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

MARKER = "<!-- ci-scope -->"
TOOLS = Path(__file__).resolve().parents[2] / "tools"


def section() -> str:
    """The generated markdown."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    import neml2_ci_scope

    import neml2.routes

    return neml2_ci_scope.markdown([(r.name, r.artifact) for r in neml2.routes.ROUTES])


def on_page_markdown(markdown, page, config, files):
    """MkDocs event: fill the marker."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, section())
