"""``neml2-syntax``: the catalogue of registered HIT types, for people and for programs.

The entries come from :func:`neml2.models._schema.catalogue`: each type's docstring,
its options (kind, type, default, choices, list or not, reference spellings) and the
variable names it derives from its options' variables (``<variable>~1``,
``<variable>_rate``, ...). ``--json`` prints them as they are (``{"types": [...],
"conventions": [...]}``); the text form lays them out for a terminal;
``--conventions`` explains the naming rules once.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

#: Columns the text output is wrapped to when the terminal's width is unknown.
DEFAULT_WIDTH = 88


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, 100))


def conventions_json() -> list[dict[str, str]]:
    """The naming rules as ``neml2-syntax --json`` lists them under ``conventions``."""
    from neml2.models._naming import RULES

    return [
        {"rule": r.key, "suffix": r.suffix, "example": r("x"), "meaning": r.describe(long=True)}
        for r in RULES
    ]


def conventions_text(width: int = DEFAULT_WIDTH) -> str:
    """The text of ``neml2-syntax --conventions``: how variables are named.

    Args:
        width: the column to wrap at.

    Returns:
        Plain text, one paragraph or list per rule, ending with a newline.
    """
    from neml2.models._naming import RULES

    def para(text: str, indent: str = "", hang: str = "") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang) or [""]

    out: list[str] = ["Naming conventions", ""]
    out += para(
        "A variable's name is the value of the option that declares it: 'variable = "
        "stress' makes the model read or write 'stress'; an input or output option left "
        "out takes the default neml2-syntax shows. Names are plain strings shared by "
        "every model of an input file: two models connect where one's output has the "
        "name of the other's input."
    )
    out += [""]
    out += para(
        "Some names are not options: a model derives them from another variable's name "
        "x by appending a suffix (neml2-syntax TYPE lists, under 'derived variables', "
        "which ones each type derives and from which option):"
    )
    for r in RULES:
        out += para(f"{r('x'):<12} {r.describe(long=True)}", "  ", " " * 15)
    out += [""]
    out += para(
        "A TransientDriver gives a model every history input x~m it reads (x~1: the "
        "previous step, x~2: the one before) and the time t with t~1. Where a type has an "
        "option that renames a derived variable (SR2ForwardEulerTimeIntegration's "
        "'rate' and 'old_variable', NonlinearSystem's 'residuals', "
        "FredrickArmstrongPlasticHardening's 'back_stress_rate'), the option wins."
    )
    out += [""]
    out += para(
        "Names have no sub-axes. Older NEML2 inputs wrote 'state/x', 'forces/t' and "
        "'old_state/x'; here a '/' is an ordinary character, so 'state/x' is simply "
        "another name than 'x', and the previous value of x is x~1."
    )
    out += [""]
    out += para(
        "Options that take one list per tensor type spell the type in the middle: "
        "prescribed_SR2_names / prescribed_SR2_values (TransientDriver), input_Scalar_names "
        "(ModelUnitTest), unknowns_MRP (predictors). The types are Scalar, Vec, SR2, R2, "
        "WR2, SSR4 and MRP (older NEML2: Rot); older spellings such as force_SR2_names are "
        "answered with the current one."
    )
    out += [""]
    out += para(
        "A parameter given a name that is neither a number, a [Tensors] block nor a "
        "[Models] block becomes an input variable of that name. A TransientDriver's "
        "result keys are input.<step>.<name> and output.<step>.<name>."
    )
    return "\n".join(out) + "\n"


def _code(text: str) -> str:
    """RST ``code`` spans and Sphinx roles (``:attr:`x```) as `code` (easier on a terminal)."""
    text = re.sub(r":[a-z]+:`(.+?)`", r"`\1`", text)
    return re.sub(r"``(.+?)``", r"`\1`", text, flags=re.DOTALL)


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return "'" + " ".join(str(v) for v in value) + "'"
    return repr(value)


def field_summary(f: dict[str, Any]) -> str:
    """``name (kind, type, default X, ..., range [1, inf))`` for one catalogue field."""
    parts = [f["kind"]]
    typ = f.get("type") or ""
    if typ:
        parts.append(f"list of {typ}" if f.get("many") else typ)
    elif f.get("many"):
        parts.append("list")
    parts.append("required" if f.get("required") else f"default {_plain(f.get('default'))}")
    if f.get("choices"):
        parts.append("one of: " + ", ".join(f["choices"]))
    if f.get("range"):
        parts.append(f"range {f['range']}")
    return f"{f['name']} ({', '.join(parts)})"


def derived_summary(d: dict[str, Any]) -> str:
    """``<variable>_rate (input, SR2): time rate of <variable>; ...`` for one entry."""
    kind = {"replaces": f"replaces <{d['from']}>"}.get(d["kind"], d["kind"])
    head = f"{d['name']} ({kind}{', ' + d['type'] if d.get('type') else ''})"
    notes = [d.get("doc") or ""]
    if d.get("each"):
        notes.append(f"one for each name in '{d['from']}'")
    if d.get("when"):
        notes.append(f"only when {d['when']}")
    if d.get("renamed_by"):
        notes.append(f"option '{d['renamed_by']}' names it instead")
    return head + ": " + "; ".join(n for n in notes if n)


def render_entry(e: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    """The full text of one catalogue entry: docstring, options, derived variables.

    Args:
        e: one entry of ``neml2-syntax --json`` (``types[i]``).
        width: the column to wrap option and variable descriptions at.

    Returns:
        The text, ending with a newline.
    """
    out = [f"[{e.get('section', '?')}] {e['type']}", ""]
    doc = _code(e.get("doc") or "(no docstring)")
    out += [("  " + line).rstrip() for line in doc.splitlines()]
    out.append("")

    def item(head: str, body: str) -> None:
        out.extend(textwrap.wrap(head, width, initial_indent="    ", subsequent_indent="        "))
        if body:
            out.extend(
                textwrap.wrap(body, width, initial_indent="        ", subsequent_indent="        ")
            )

    fields = e.get("fields", [])
    if fields:
        out.append("  options:")
        for f in fields:
            body = _code(f.get("doc") or "")
            if f.get("formerly"):
                body += f" (older NEML2 spelling: {', '.join(f['formerly'])})"
            item(field_summary(f), body.strip())
    else:
        out.append("  options: none")
    derived = e.get("derived", [])
    if derived:
        out += ["", "  derived variables (named after an option's variable):"]
        for d in derived:
            item(derived_summary(d), "")
    return "\n".join(out) + "\n"


def one_line(e: dict[str, Any]) -> str:
    """``[Section] Type: first line of the docstring``."""
    first = (e.get("doc") or "").strip().splitlines()
    return f"[{e.get('section', '?')}] {e['type']}: {_code(first[0]) if first else ''}"


def _select(patterns: Sequence[str], known: list[str]) -> tuple[list[str], list[str]]:
    """The types matching *patterns* (names or shell globs), and the patterns that
    match none."""
    chosen: list[str] = []
    missing: list[str] = []
    for p in patterns:
        hits = fnmatch.filter(known, p) if any(c in p for c in "*?[") else [p]
        hits = [h for h in hits if h in known]
        if not hits:
            missing.append(p)
        chosen += [h for h in hits if h not in chosen]
    return chosen, missing


def _unknown_message(name: str, known: list[str]) -> str:
    from neml2.models import suggest
    from neml2.models._spellings import former_type_hint

    hint = former_type_hint(name, known) or suggest(name, known)
    return f"unknown type '{name}'{hint}"


def main(argv: Sequence[str] | None, parser: Callable[..., argparse.ArgumentParser]) -> int:
    """``neml2-syntax [TYPE...] [--json] [--brief] [--section S] [--conventions]``.

    Args:
        argv: the command line (without the program name); None: ``sys.argv[1:]``.
        parser: ``(prog, description, epilog)`` -> the tools' common argument parser.

    Returns:
        The exit status: 0, or 1 when a TYPE is not registered.
    """
    from neml2.models import lookup, registered_types
    from neml2.models._schema import catalogue

    p = parser(
        "neml2-syntax",
        "Describe the registered HIT types: docstring, options (kind, type, default, "
        "choices) and the variable names each type derives (x~1, x_rate, x_residual).",
        "examples:\n"
        "  neml2-syntax SR2BackwardEulerTimeIntegration\n"
        "  neml2-syntax '*TimeIntegration' --brief\n"
        "  neml2-syntax --section Drivers\n"
        "  neml2-syntax --conventions\n"
        "  neml2-syntax --json > catalogue.json",
    )
    p.add_argument("types", nargs="*", help="types to describe (shell patterns allowed)")
    p.add_argument("--json", action="store_true", help="machine-readable catalogue")
    p.add_argument("--brief", action="store_true", help="one line per type")
    p.add_argument("--section", help="only the types of this section (Models, Drivers, ...)")
    p.add_argument(
        "--conventions", action="store_true", help="explain how variables are named, then exit"
    )
    a = p.parse_args(argv)
    if a.conventions:
        print(conventions_text(_width()), end="")
        return 0
    known = registered_types()
    names, missing = _select(a.types, known) if a.types else (known, [])
    if missing:
        listed = "; ".join(_unknown_message(m, known) for m in missing)
        print(
            f"neml2-syntax: error: {listed}; list every type with: neml2-syntax --brief",
            file=sys.stderr,
        )
        return 1
    entries = []
    for n in names:
        entry = catalogue(lookup(n))
        entry["type"] = n
        entries.append(entry)
    if a.section:
        sections = sorted({e["section"] for e in entries})
        entries = [e for e in entries if e["section"] == a.section]
        if not entries:
            print(
                f"neml2-syntax: error: no type in section '{a.section}' (sections: "
                f"{', '.join(sections)})",
                file=sys.stderr,
            )
            return 1
    if a.json:
        print(json.dumps({"types": entries, "conventions": conventions_json()}, indent=2))
        return 0
    if a.brief:
        for e in entries:
            print(one_line(e))
        return 0
    width = _width()
    print("\n".join(render_entry(e, width) for e in entries), end="")
    return 0
