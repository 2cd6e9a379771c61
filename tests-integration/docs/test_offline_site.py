r"""The built documentation site reads offline: opened from ``file://`` in headless
Chromium with the network cut, every equation is typeset and every code block highlighted.

The site (``NEML2_DOCS_SITE``, built by ``nox -s docs``) loads nothing from the
network: its equations are MathML converted when it was built (docs/_hooks/mathml.py)
and its code blocks were highlighted by Pygments then (docs/_hooks/pygments_css.py).
The checks:

* every page, read from disk: no script, stylesheet, font or image from an
  ``http(s)://`` (or ``//``) address and no ``url()`` or ``@import`` of one in a
  stylesheet; every local file a page loads is in the site; every equation holds
  MathML, every code block is highlighted and no TeX is left in the text;
* the tutorials, the catalogue and pages with code, opened in Chromium
  (``--headless --dump-dom``, every host name unresolvable and a dead proxy): in the DOM
  after the page's scripts ran, no raw ``\[``, ``\(``, ``$$`` or ``\begin{`` outside
  code, the equations are ``<math>`` elements, every code block is a Pygments block
  and its tokens are spans;
* the checks themselves: the flags keep a CDN's script from loading, and the site as it
  was (MathJax and highlight.js from a CDN) fails them; the MathML hook converts an
  inline and a display equation and fails the build, naming the page, on an equation
  it cannot convert.

A missing Chromium fails (``nox -s docs`` installs Debian's ``chromium`` package), and
so does one older than MathML Core (Chromium 109).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The built site (conftest.py collects this file only when NEML2_DOCS_SITE is set).
SITE = Path(os.environ.get("NEML2_DOCS_SITE", ROOT / "build" / "site")).resolve()
#: The build's hooks.
HOOKS = ROOT / "docs" / "_hooks"
#: The browser's names on Debian and elsewhere, first found wins.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: The first Chromium with MathML Core.
MATHML_CHROMIUM = 109
#: No host name resolves and every request goes to a closed port: nothing is fetched.
OFFLINE_FLAGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
#: TeX that a typeset page never shows: the delimiters arithmatex writes, and the
#: environments that would sit inside them.
RAW_TEX = ("\\[", "\\(", "$$", "\\begin{")
#: Elements whose text is code or not shown: raw TeX there is not a failure.
_CODE = {"pre", "code", "script", "style", "textarea"}
#: A remote address: http(s) or protocol-relative.
_REMOTE = re.compile(r"^\s*(?:https?:)?//", re.I)
#: A stylesheet's url() or @import of a remote address.
_CSS_REMOTE = re.compile(r"(?:url\(\s*['\"]?|@import\s+(?:url\(\s*)?['\"]?)\s*(?:https?:)?//", re.I)
#: Attributes that make the browser fetch something, by element.
_FETCHED = {
    "script": "src",
    "link": "href",
    "img": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "iframe": "src",
    "embed": "src",
    "object": "data",
}
#: <link> relations that name a page rather than load it.
_LINK_NOT_LOADED = {"canonical", "alternate", "next", "prev", "author", "license"}


class PageFacts(HTMLParser):
    """What the checks read from one page's HTML (as built, or the DOM Chromium dumps).

    Attributes:
        text: the page's text outside ``pre``/``code``/``script``/``style``.
        resources: ``(tag, url)`` of everything the page makes the browser fetch.
        equations: arithmatex wrappers (``span``/``div`` of class ``arithmatex``).
        typeset: those holding a ``<math>`` element.
        math: ``<math>`` elements; display_math: those with ``display="block"``.
        code_blocks: ``pre`` elements; highlighted_blocks: those inside an element of
            class ``highlight``; tokens: classed spans inside those.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.resources: list[tuple[str, str]] = []
        self.equations = self.typeset = self.math = self.display_math = 0
        self.code_blocks = self.highlighted_blocks = self.tokens = 0
        self._open: list[tuple[str, set[str]]] = []  # (tag, its roles) of open elements

    def _inside(self, role: str) -> bool:
        return any(role in roles for _, roles in self._open)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        roles: set[str] = set()
        if tag in _FETCHED and a.get(_FETCHED[tag]):
            rel = set(a.get("rel", "").lower().split())
            if not (tag == "link" and rel and rel <= _LINK_NOT_LOADED):
                self.resources.append((tag, a[_FETCHED[tag]]))
        if _CSS_REMOTE.search(a.get("style", "")):
            self.resources.append((f"{tag} style", a["style"]))
        if tag in _CODE:
            roles.add("code")
        if "highlight" in classes:
            roles.add("highlight")
        if tag in ("span", "div") and "arithmatex" in classes:
            self.equations += 1
            roles.add("equation")
        if tag == "math":
            self.math += 1
            self.display_math += a.get("display") == "block"
            if self._inside("equation") and not self._inside("math"):
                self.typeset += 1
            roles.add("math")
        if tag == "pre":
            self.code_blocks += 1
            self.highlighted_blocks += self._inside("highlight")
        if tag == "span" and classes and self._inside("highlight") and self._inside("code"):
            self.tokens += 1
        self._open.append((tag, roles))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        # close up to the innermost open element of this name (HTML's void elements,
        # <link> or <img>, have no end tag and are closed with their parent)
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                return

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1][0] == "style" and _CSS_REMOTE.search(data):
            self.resources.append(("style", data.strip()[:80]))
        if not self._inside("code"):
            self.text.append(data)


def facts(html: str) -> PageFacts:
    """The :class:`PageFacts` of *html*."""
    parser = PageFacts()
    parser.feed(html)
    parser.close()
    return parser


def problems(html: str) -> list[str]:
    """What keeps *html* from reading offline: raw TeX in its text, an equation without
    MathML, a code block Pygments did not highlight, something fetched from the network."""
    f = facts(html)
    text = "".join(f.text)
    out = [f"raw TeX {m!r} in the text" for m in RAW_TEX if m in text]
    if f.typeset != f.equations:
        out.append(f"{f.equations - f.typeset} of {f.equations} equations hold no <math>")
    if f.highlighted_blocks != f.code_blocks:
        n = f.code_blocks - f.highlighted_blocks
        out.append(f"{n} of {f.code_blocks} code blocks not highlighted")
    out += [f"<{tag}> from the network: {url}" for tag, url in f.resources if _REMOTE.match(url)]
    return out


# ------------------------------------------------------------------------ the browser
@pytest.fixture(scope="module")
def chromium() -> str:
    """Chromium's executable: missing or too old for MathML fails the test."""
    exe = next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)
    if exe is None:
        pytest.fail(
            f"no Chromium on PATH ({', '.join(CHROMIUM_NAMES)}): the offline check of the "
            "site needs it; `nox -s docs` installs it with apt-get install chromium"
        )
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"(\d+)\.\d+", version.stdout)
    if m is None or int(m[1]) < MATHML_CHROMIUM:
        pytest.fail(f"{exe} --version: {version.stdout.strip()!r}, need >= {MATHML_CHROMIUM}")
    return exe


def browse(chromium: str, target: Path, profile: Path, *action: str) -> str:
    """Open *target* from ``file://`` in headless Chromium, offline; *action* is
    ``--dump-dom`` (the DOM after the page's scripts ran is returned) or
    ``--screenshot=PATH``."""
    cmd = [
        chromium,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        f"--user-data-dir={profile}",
        *OFFLINE_FLAGS,
        "--virtual-time-budget=3000",
        *action,
        target.as_uri(),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if run.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stderr[-2000:]}")
    return run.stdout


def _page(path: str) -> Path:
    page = SITE / path / "index.html"
    if not page.is_file():
        pytest.fail(f"{page} does not exist: was the site ({SITE}) built?")
    return page


def _catalogue_pages() -> list[str]:
    """The catalogue's pages (one, or one per part when it is split)."""
    pages = sorted(p.parent.relative_to(SITE) for p in SITE.glob("catalogue/**/index.html"))
    return [str(p) for p in pages] or ["catalogue"]


#: The pages opened in Chromium, with the least each must show: typeset equations,
#: display equations and highlighted code tokens.
BROWSED = {
    **{str(p.parent.relative_to(SITE)): {} for p in sorted(SITE.glob("tutorials/*/index.html"))},
    **{p: {} for p in _catalogue_pages()},
    "tutorials/3-implicit-j2": {"math": 1, "display_math": 1, "tokens": 1},
    "first-model": {"tokens": 1},
    "api/tensors": {"tokens": 1},
}


@pytest.mark.parametrize("path", list(BROWSED))
def test_page_reads_offline_in_chromium(chromium, tmp_path, path):
    dom = browse(chromium, _page(path), tmp_path / "profile", "--dump-dom")
    f = facts(dom)
    assert len("".join(f.text).split()) > 20, f"{path}: the DOM Chromium dumped is empty"
    assert problems(dom) == [], path
    for what, least in BROWSED[path].items():
        assert getattr(f, what) >= least, f"{path}: {getattr(f, what)} {what}, need {least}"


def test_the_browser_is_offline(chromium, tmp_path):
    """The flags hold: a script from a CDN does not load."""
    page = tmp_path / "net.html"
    page.write_text(
        '<!doctype html><html><body data-net="pending">'
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js" '
        "onload=\"document.body.dataset.net='loaded'\" "
        "onerror=\"document.body.dataset.net='blocked'\"></script></body></html>"
    )
    dom = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    assert 'data-net="blocked"' in dom


def test_the_check_fails_a_page_typeset_from_a_cdn(chromium, tmp_path):
    """The site as it was before: MathJax and highlight.js from a CDN. Offline, the TeX
    stays raw and the code plain, and the check says so."""
    page = tmp_path / "old.html"
    page.write_text(
        "<!doctype html><html><head>"
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>'
        '</head><body><p>The stress <span class="arithmatex">\\(\\boldsymbol\\sigma\\)</span> '
        'is</p><div class="arithmatex">\\[\\begin{aligned} a &amp;= b \\end{aligned}\\]</div>'
        "<pre><code>x = 1</code></pre></body></html>"
    )
    found = problems(browse(chromium, page, tmp_path / "profile", "--dump-dom"))
    assert "raw TeX '\\\\[' in the text" in found
    assert "raw TeX '\\\\begin{' in the text" in found
    assert "2 of 2 equations hold no <math>" in found
    assert "1 of 1 code blocks not highlighted" in found
    assert any(p.startswith("<script> from the network") for p in found)


def test_tutorial_screenshot(chromium, tmp_path):
    """A tutorial with equations renders to a picture (left in build/ for a person)."""
    shot = SITE.parent / "site-offline.png"
    shot.unlink(missing_ok=True)
    browse(
        chromium,
        _page("tutorials/3-implicit-j2"),
        tmp_path / "profile",
        "--window-size=1100,2200",
        "--hide-scrollbars",
        f"--screenshot={shot}",
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000, "a near-blank screenshot"


# ------------------------------------------------------------------- every page on disk
def _site_pages() -> list[Path]:
    pages = sorted(SITE.rglob("*.html"))
    if not pages:
        pytest.fail(f"no page under {SITE}: was the site built?")
    return pages


def test_no_page_loads_anything_from_the_network():
    found = []
    for page in _site_pages():
        f = facts(page.read_text())
        for tag, url in f.resources:
            if _REMOTE.match(url):
                found.append(f"{page.relative_to(SITE)}: <{tag}> {url}")
            elif not url.startswith(("data:", "#")):
                # 404.html names its files from the site's root (a server shows it anywhere)
                path = unquote(urlsplit(url).path)
                local = SITE / path[1:] if path.startswith("/") else page.parent / path
                if not local.is_file():
                    found.append(f"{page.relative_to(SITE)}: <{tag}> {url} is not in the site")
    for css in sorted(SITE.rglob("*.css")):
        for m in _CSS_REMOTE.finditer(css.read_text(errors="replace")):
            found.append(f"{css.relative_to(SITE)}: {m[0]}...")
    assert found == []


def test_every_equation_is_mathml_and_every_block_highlighted():
    found, equations = [], 0
    for page in _site_pages():
        html = page.read_text()
        equations += facts(html).equations
        found += [f"{page.relative_to(SITE)}: {p}" for p in problems(html)]
    assert found == []
    assert equations > 0, "no equation in the whole site: is arithmatex still on?"


def test_the_pygments_stylesheet_is_in_the_site():
    css = SITE / "css" / "pygments.css"
    assert ".highlight .k " in css.read_text()
    assert 'href="../css/pygments.css"' in _page("first-model").read_text()


# ------------------------------------------------------------------ the build's hooks
def _mathml_hook():
    spec = importlib.util.spec_from_file_location("neml2_docs_mathml", HOOKS / "mathml.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_converts_inline_and_display_equations():
    hook = _mathml_hook()
    html = hook.to_mathml(
        '<p><span class="arithmatex">\\(a &lt; \\mathbf b\\)</span></p>'
        '<div class="arithmatex">\\[\\begin{aligned} x &amp;= 1 \\end{aligned}\\]</div>'
    )
    assert problems(html) == []
    f = facts(html)
    assert (f.equations, f.typeset, f.math, f.display_math) == (2, 2, 2, 1)
    assert "&lt;" in html and "\U0001d41b" in html  # the less-than sign, a bold b


def test_an_equation_that_does_not_convert_fails_the_build():
    from mkdocs.exceptions import PluginError

    hook = _mathml_hook()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="tutorials/x.md"))
    bad = (
        '<span class="arithmatex">\\(x\\)</span> '
        '<span class="arithmatex">\\(\\nocommand x\\)</span>'
    )
    with pytest.raises(PluginError, match=r"^docs/tutorials/x\.md: equation '\\\\nocommand x'"):
        hook.on_page_content(bad, page, None, None)
