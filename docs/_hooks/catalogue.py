"""MkDocs hook: the model catalogue page, generated at build time from ``neml2-syntax --json``.

``catalogue.md`` is not a file under ``docs/``: :func:`on_files` adds it to the
build, so the page always lists exactly the types registered in the installed
neml2 (plugins included), with each type's full docstring (its equation),
every option (kind, type, list or not, default, choices, older NEML2 spellings)
and the variable names the type derives from its options' variables
(``<variable>~1``, ``<variable>_rate``, ...), after a section on the naming
conventions. ``render(entries, conventions)`` is plain Python so the docs test
can check the page without MkDocs.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

PAGE = "catalogue.md"

#: Section order on the page (any other section follows, alphabetically).
SECTIONS = ["Models", "EquationSystems", "Solvers", "Tensors", "Data", "Drivers"]


def syntax_catalogue() -> dict:
    """``neml2-syntax --json`` of the installed neml2: ``{"types": [...],
    "conventions": [...]}``."""
    exe = Path(sys.executable).with_name("neml2-syntax")
    cmd = [str(exe)] if exe.exists() else ["neml2-syntax"]
    out = subprocess.run([*cmd, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def syntax_entries() -> list[dict]:
    """The catalogue's types as ``neml2-syntax --json`` prints them."""
    return syntax_catalogue()["types"]


#: A Google-style section header of a docstring (``Attributes:``, ``Args:``).
_SECTION = re.compile(r"^(Args|Arguments|Attributes|Returns|Raises|Note|Notes|Example|Examples):$")


def _md(text: str) -> str:
    """A docstring as Markdown: dedented paragraphs, RST ``code`` as `code`, and the
    entries of an ``Attributes:`` / ``Args:`` section as a bulleted list."""
    out: list[str] = []
    section = False
    for line in inspect.cleandoc(text).splitlines():
        stripped = line.strip()
        if _SECTION.match(line):
            out += [f"*{stripped[:-1]}:*", ""]
            section = True
            continue
        if section and not stripped:
            section = False
        m = re.match(r"^ {4}([\w*]+)(?: \(.*?\))?: (.*)$", line) if section else None
        out.append(f"- `{m[1]}`: {m[2]}" if m else stripped)
    text = re.sub(r":[a-z]+:`(.+?)`", r"`\1`", "\n".join(out))  # Sphinx roles
    return _angles(re.sub(r"``(.+?)``", r"`\1`", text, flags=re.DOTALL))


def _angles(text: str) -> str:
    """``<`` outside code spans as ``&lt;``: ``<variable>_rate`` is no HTML tag."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;") for p in parts)


def _cell(value: object) -> str:
    s = value if isinstance(value, str) else json.dumps(value)
    if s == "":
        s = "''"
    return _angles(s).replace("|", "\\|").replace("\n", " ")


def has_equation(entry: dict) -> bool:
    """Does the docstring state an equation (a ``code`` span holding ``=``)?"""
    return bool(re.search(r"``[^`]*=[^`]*``", entry.get("doc") or ""))


def _description(f: dict) -> str:
    """An option's table cell: its doc, its choices, its valid range and its older
    spellings."""
    parts = [_md(f.get("doc") or "")]
    if f.get("choices"):
        parts.append("One of " + ", ".join(f"`{c}`" for c in f["choices"]) + ".")
    if f.get("range"):
        parts.append(f"Range `{f['range']}`.")
    if f.get("formerly"):
        parts.append("Older NEML2 spelling: " + ", ".join(f"`{c}`" for c in f["formerly"]) + ".")
    return _cell(" ".join(p for p in parts if p))


def _derived_rows(derived: list[dict]) -> list[str]:
    """The table of the variable names a type derives (empty when none)."""
    if not derived:
        return []
    rows = [
        "Derived variables (named after the variable of an option):",
        "",
        "| variable | kind | type | description |",
        "|---|---|---|---|",
    ]
    for d in derived:
        kind = f"replaces `<{d['from']}>`" if d["kind"] == "replaces" else d["kind"]
        notes = [d.get("doc") or ""]
        if d.get("each"):
            notes.append(f"one for each name in `{d['from']}`")
        if d.get("when"):
            notes.append(f"only when `{d['when']}`")
        if d.get("renamed_by"):
            notes.append(f"option `{d['renamed_by']}` names it instead")
        rows.append(
            f"| `{d['name']}` | {kind} | {d.get('type') or ''} | "
            f"{_cell('; '.join(n for n in notes if n))} |"
        )
    return [*rows, ""]


def _conventions(rules: list[dict]) -> list[str]:
    """The page's section on naming conventions, from ``neml2-syntax --json``."""
    if not rules:
        return []
    out = [
        "## Naming conventions",
        "",
        "A variable is named by the option that declares it (`variable = 'stress'`). A "
        "few names are derived instead: a type appends a suffix to the name of another "
        "variable `x`. Each entry below lists, under *Derived variables*, which names its "
        "type derives and from which option; `uv run neml2-syntax --conventions` explains "
        "the rules on a terminal.",
        "",
        "| suffix | example | meaning |",
        "|---|---|---|",
    ]
    out += [f"| `{r['suffix']}` | `{r['example']}` | {_cell(r['meaning'])} |" for r in rules]
    out += [
        "",
        "Names have no sub-axes: older NEML2 inputs wrote `state/x`, `forces/t` and "
        "`old_state/x`; here a `/` is an ordinary character and the previous value of "
        "`x` is `x~1`.",
        "",
    ]
    return out


def render(entries: list[dict], conventions: list[dict] | None = None) -> str:
    """The catalogue page (Markdown) for *entries* (``neml2-syntax --json`` types) and
    the naming *conventions* (its ``conventions`` list)."""
    by_section: dict[str, list[dict]] = {}
    for e in entries:
        by_section.setdefault(e.get("section", "Other"), []).append(e)
    order = [s for s in SECTIONS if s in by_section]
    order += sorted(s for s in by_section if s not in SECTIONS)
    out = [
        "# Model catalogue",
        "",
        "Generated when the site is built, from `neml2-syntax --json` (every registered "
        f"type: {len(entries)} in this build). Each entry gives the HIT `type`, its "
        "docstring (the equation it implements, shapes in `(*B, ...)`) and every option: "
        "its kind (`input`/`output` variable names, `parameter` values, plain `option`s, "
        'references to other `model`s or `data`), type ("list of" for a list), default, '
        "choices, the valid range of a number (interval notation: `(0, inf)` positive and "
        "finite, `[1, inf)` at least 1; a parameter given by a variable is not checked "
        "at load) and older NEML2 spellings, then the variable names the type derives. "
        "`uv run neml2-syntax TYPE` prints the same on a terminal.",
        "",
        *_conventions(conventions or []),
    ]
    for section in order:
        out += [f"## [{section}]", ""]
        out += [
            ", ".join(f"[{e['type']}](#{e['type'].lower()})" for e in by_section[section]),
            "",
        ]
        for e in sorted(by_section[section], key=lambda e: e["type"]):
            out += [f"### {e['type']}", ""]
            doc = _md(e.get("doc") or "")
            out += [doc or "*(no docstring)*", ""]
            if section == "Models" and not has_equation(e):
                out += ["*(structural type: no equation of its own)*", ""]
            fields = e.get("fields", [])
            if not fields:
                out += ["No options.", ""]
            else:
                out += [
                    "| option | kind | type | default | description |",
                    "|---|---|---|---|---|",
                ]
                for f in fields:
                    default = "*required*" if f.get("required") else f"`{_cell(f.get('default'))}`"
                    typ = f.get("type", "")
                    if f.get("many"):
                        typ = f"list of {typ}"
                    out.append(
                        f"| `{f['name']}` | {f['kind']} | {_cell(typ)} | {default} | "
                        f"{_description(f)} |"
                    )
                out.append("")
            out += _derived_rows(e.get("derived", []))
    return "\n".join(out)


def on_files(files, config):
    """MkDocs event: add the generated catalogue page to the site's files."""
    from mkdocs.structure.files import File

    cat = syntax_catalogue()
    files.append(File.generated(config, PAGE, content=render(cat["types"], cat.get("conventions"))))
    return files
