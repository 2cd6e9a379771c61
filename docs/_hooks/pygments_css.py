"""MkDocs hook: the stylesheet of the code blocks' highlighting, written at build time.

pymdownx.highlight (``use_pygments: true`` in mkdocs.yml) highlights every code block
with Pygments when the site is built: the tokens become ``<span class="k">`` and the
like inside ``<div class="highlight">``. :func:`on_files` adds the colours of those
classes, Pygments' :data:`STYLE`, to the site as :data:`PATH`, which ``extra_css``
loads; nothing is highlighted in the browser and nothing is fetched from the network.
"""

from __future__ import annotations

#: The Pygments style of the code blocks.
STYLE = "default"
#: Where the stylesheet lands in the site (``extra_css`` in mkdocs.yml names it).
PATH = "css/pygments.css"


def stylesheet() -> str:
    """The CSS of :data:`STYLE` for the classes Pygments writes under ``.highlight``."""
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style=STYLE).get_style_defs(".highlight") + "\n"


def on_files(files, config):
    """MkDocs event: add the generated stylesheet to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PATH, content=stylesheet()))
    return files
