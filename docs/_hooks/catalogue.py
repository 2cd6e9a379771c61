"""MkDocs hook: the model catalogue page, generated at build time from ``neml2-syntax --json``.

``catalogue.md`` is not a file under ``docs/``: :func:`on_files` adds it to the
build, so the page always lists exactly the types registered in the installed
neml2 (plugins included), with each type's docstring (its equation), inputs,
outputs, parameters and options with their defaults. ``render(entries)`` is
plain Python so the docs test can check the page without MkDocs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PAGE = "catalogue.md"

#: Section order on the page (any other section follows, alphabetically).
SECTIONS = ["Models", "EquationSystems", "Solvers", "Tensors", "Data", "Drivers"]


def syntax_entries() -> list[dict]:
    """The catalogue of the installed neml2 as ``neml2-syntax --json`` prints it."""
    exe = Path(sys.executable).with_name("neml2-syntax")
    cmd = [str(exe)] if exe.exists() else ["neml2-syntax"]
    out = subprocess.run([*cmd, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["types"]


def _md(text: str) -> str:
    """A docstring as Markdown: RST ``code`` to `code`, dedented paragraphs."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    return re.sub(r"``(.+?)``", r"`\1`", "\n".join(lines))


def _cell(value: object) -> str:
    s = value if isinstance(value, str) else json.dumps(value)
    return s.replace("|", "\\|").replace("\n", " ")


def has_equation(entry: dict) -> bool:
    """Does the docstring state an equation (a ``code`` span holding ``=``)?"""
    return bool(re.search(r"``[^`]*=[^`]*``", entry.get("doc") or ""))


def render(entries: list[dict]) -> str:
    """The catalogue page (Markdown) for *entries* (``neml2-syntax --json`` types)."""
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
        "references to other `model`s or `data`), type and default. `uv run neml2-syntax "
        "TYPE` prints the same on a terminal.",
        "",
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
                continue
            out += ["| option | kind | type | default | description |", "|---|---|---|---|---|"]
            for f in fields:
                default = "*required*" if f.get("required") else f"`{_cell(f.get('default'))}`"
                typ = f.get("type", "")
                if f.get("many"):
                    typ = f"list of {typ}"
                out.append(
                    f"| `{f['name']}` | {f['kind']} | {_cell(typ)} | {default} | "
                    f"{_cell(_md(f.get('doc') or ''))} |"
                )
            out.append("")
    return "\n".join(out)


def on_files(files, config):
    """MkDocs event: add the generated catalogue page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render(syntax_entries())))
    return files
