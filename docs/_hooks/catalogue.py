"""MkDocs hook: the model catalogue, generated at build time, one page per family.

None of the catalogue's pages is a file under ``docs/``: :func:`on_files` adds them to
the build, so they always list exactly the types registered in the installed neml2
(plugins included). ``catalogue.md`` is the index (the families with a line each, the
naming conventions and every type A-Z); ``catalogue/<family>.md`` holds one family
(:mod:`catalogue_families`: a type's family is read from the module that defines it)
with an example input (:mod:`catalogue_examples`, run by the docs test) and one entry
per type: its docstring with the equations typeset (:mod:`catalogue_tex`), its input
and output variables with their shapes, the variable names it derives, its parameters
and options (type, default, valid range or choices, older NEML2 spellings).

The data come from ``neml2-syntax --json`` and from the registry itself (each type's
module, read in a second process). ``render_pages(library())`` is plain Python, so the
docs test checks the pages without MkDocs.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

PAGE = "catalogue.md"
#: The section of mkdocs.yml's nav that lists the catalogue's pages.
NAV_SECTION = "Model catalogue"


def _sibling(name: str) -> ModuleType:
    """A module beside this hook (MkDocs loads a hook by path, not as a package)."""
    key = f"_neml2_docs_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


families = _sibling("catalogue_families")
examples = _sibling("catalogue_examples")
tex = _sibling("catalogue_tex")


# ---------------------------------------------------------------------- the data
def _syntax_command() -> list[str]:
    exe = Path(sys.executable).with_name("neml2-syntax")
    return [str(exe) if exe.exists() else "neml2-syntax", "--json"]


#: Run in a fresh interpreter: where each registered type is defined, and the base
#: shape of each typed tensor.
_REGISTRY = """
import json
import neml2.drivers  # registers the driver types, as neml2-syntax does
import neml2.tensors
from neml2.models import lookup, registered_types
classes = {n: [lookup(n).__module__, lookup(n).__qualname__] for n in registered_types()}
shapes = {}
for name in dir(neml2.tensors):
    shape = getattr(getattr(neml2.tensors, name), "BASE_SHAPE", None)
    if isinstance(shape, tuple):
        shapes[name] = list(shape)
print(json.dumps({"classes": classes, "shapes": shapes}))
"""


def _run_all(commands: list[list[str]]) -> list[str]:
    """The standard outputs of *commands*, run side by side (each imports torch)."""
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    outs = []
    for cmd, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:2])} exited {proc.returncode}: {err[-2000:]}")
        outs.append(out)
    return outs


def library() -> dict:
    """Everything the pages show: ``neml2-syntax --json`` with each type's ``module``
    and ``class`` (from the registry, read in a second process), and the base
    ``shapes`` of the typed tensors."""
    syntax, registry = _run_all([_syntax_command(), [sys.executable, "-c", _REGISTRY]])
    cat = json.loads(syntax)
    reg = json.loads(registry.strip().splitlines()[-1])
    for e in cat["types"]:
        e["module"], e["class"] = reg["classes"].get(e["type"], ["", e["type"]])
    return {**cat, "shapes": reg["shapes"]}


def by_family(entries: list[dict]) -> dict:
    """``{Family: [entries, by type name]}`` in the navigation's order, families without
    a type left out."""
    groups: dict = {}
    for e in sorted(entries, key=lambda e: e["type"].casefold()):
        groups.setdefault(families.family_of(e.get("module", "")), []).append(e)
    order = [*families.FAMILIES, families.OTHER]
    return {f: groups[f] for f in order if f in groups}


def page_paths(entries: list[dict]) -> list[str]:
    """The catalogue's pages for *entries*: the index, then one per family with types."""
    return [PAGE, *(f.path for f in by_family(entries))]


# ---------------------------------------------------------------------- Markdown
#: A Google-style section header of a docstring (``Attributes:``, ``Args:``).
_SECTION = re.compile(r"^(Args|Arguments|Attributes|Returns|Raises|Note|Notes|Example|Examples):$")
#: A code span of a docstring, ``like this`` (RST) or `like this` (Markdown).
_SPAN = re.compile(r"``(.+?)``|(?<!`)`([^`\n]+)`(?!`)", re.DOTALL)


class _Context:
    """What rendering a docstring needs: the option names (which stay code, not
    mathematics), whether to typeset equations, and the links to other types."""

    def __init__(self, names=frozenset(), math: bool = True, links: dict | None = None):
        self.names = frozenset(names)
        self.math = math
        self.links = links or {}


def _md(text: str, ctx: _Context | None = None) -> str:
    """A docstring as Markdown: dedented paragraphs, code spans as `code` (an equation
    as ``$...$``, a type's name as a link to its entry) and the entries of an
    ``Attributes:`` / ``Args:`` section as a bulleted list."""
    ctx = ctx or _Context()
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
        out.append(f"- ``{m[1]}``: {m[2]}" if m else stripped)
    text = re.sub(r":[a-z]+:`(.+?)`", r"``\1``", "\n".join(out))  # Sphinx roles
    return _angles(_SPAN.sub(lambda m: _span(m[1] or m[2], ctx), text))


def _span(code: str, ctx: _Context) -> str:
    """One code span of a docstring as Markdown."""
    code = " ".join(code.split())
    if ctx.math:
        math = tex.to_tex(code, ctx.names)
        if math is not None:
            return f"${math}$"
    if code in ctx.links:
        return f"[`{code}`]({ctx.links[code]})"
    return f"`{code}`"


def _angles(text: str) -> str:
    """``<`` outside code spans, links and equations as ``&lt;``: ``<variable>_rate``
    is no HTML tag."""
    parts = re.split(r"(\[`[^`]*`\]\([^)]*\)|`[^`]*`|\$[^$\n]+\$)", text)
    return "".join(p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts))


def _cell(value: object) -> str:
    s = value if isinstance(value, str) else json.dumps(value)
    if s == "":
        s = "''"
    return _angles(s).replace("|", "\\|").replace("\n", " ")


def _code_cell(value: object) -> str:
    """A value as a code span in a table cell (*none* for no value)."""
    if value is None:
        return "*none*"
    s = value if isinstance(value, str) else json.dumps(value)
    return "`" + (s or "''").replace("|", "\\|").replace("`", "'") + "`"


def has_equation(entry: dict) -> bool:
    """Does the docstring state an equation (a ``code`` span holding ``=``)?"""
    return bool(re.search(r"``[^`]*=[^`]*``", entry.get("doc") or ""))


def anchor(type_name: str) -> str:
    """The anchor of a type's heading (MkDocs' ``toc`` slug of the name)."""
    return type_name.lower()


def _shape(type_name: str, shapes: dict, batch: bool) -> str:
    """``(*B, 6)`` for an SR2 variable, ``(6)`` for an SR2 value without batch."""
    base = shapes.get(type_name)
    if base is None:
        return "dynamic"
    dims = (["*B"] if batch else []) + [str(d) for d in base]
    return "`(" + ", ".join(dims) + ")`"


def _default_name(f: dict) -> str:
    if f.get("required"):
        return "*required*"
    default = f.get("default")
    if isinstance(default, str):  # a derived default: '{back_stress}_rate'
        default = re.sub(r"\{(\w+)\}", r"<\1>", default)
    return _code_cell(default)


def _values(f: dict) -> str:
    """An option's valid values: its range (interval notation) or its choices."""
    if f.get("range"):
        return _code_cell(f["range"])
    if f.get("choices"):
        return "one of " + ", ".join(_code_cell(c) for c in f["choices"])
    return ""


def _description(f: dict, ctx: _Context) -> str:
    """An option's description cell: its doc and its older spellings."""
    doc = _md(f.get("doc") or "", ctx)
    parts = [doc + "." if doc and doc[-1] not in ".:;!?)" and f.get("formerly") else doc]
    if f.get("formerly"):
        parts.append("Older NEML2 spelling: " + ", ".join(f"`{c}`" for c in f["formerly"]) + ".")
    return " ".join(p for p in parts if p).replace("|", "\\|").replace("\n", " ")


def _type(f: dict) -> str:
    typ = _cell(f.get("type", ""))
    return f"list of {typ}" if f.get("many") else typ


def _variables(fields: list[dict], shapes: dict, ctx: _Context) -> list[str]:
    rows = [f for f in fields if f["kind"] in ("input", "output")]
    if not rows:
        return []
    out = [
        "**Variables** (the option names the variable; its default name):",
        "",
        "| option | | default name | type | shape | description |",
        "|---|---|---|---|---|---|",
    ]
    for f in rows:
        out.append(
            f"| `{f['name']}` | {f['kind']} | {_default_name(f)} | {_type(f)} | "
            f"{_shape(f.get('type', ''), shapes, True)} | {_description(f, ctx)} |"
        )
    return [*out, ""]


def _parameters(fields: list[dict], shapes: dict, ctx: _Context) -> list[str]:
    rows = [f for f in fields if f["kind"] == "parameter"]
    if not rows:
        return []
    out = [
        "**Parameters** (a number, a `[Tensors]` name, another model's output or a "
        "variable name; the shape is its value's, batch axes allowed):",
        "",
        "| parameter | type | shape | default | range | description |",
        "|---|---|---|---|---|---|",
    ]
    for f in rows:
        default = "*required*" if f.get("required") else _code_cell(f.get("default"))
        out.append(
            f"| `{f['name']}` | {_type(f)} | {_shape(f.get('type', ''), shapes, False)} | "
            f"{default} | {_values(f)} | {_description(f, ctx)} |"
        )
    return [*out, ""]


def _options(fields: list[dict], ctx: _Context) -> list[str]:
    rows = [f for f in fields if f["kind"] not in ("input", "output", "parameter")]
    if not rows:
        return []
    out = [
        "**Options:**",
        "",
        "| option | kind | type | default | values | description |",
        "|---|---|---|---|---|---|",
    ]
    for f in rows:
        default = "*required*" if f.get("required") else _code_cell(f.get("default"))
        out.append(
            f"| `{f['name']}` | {f['kind']} | {_type(f)} | {default} | {_values(f)} | "
            f"{_description(f, ctx)} |"
        )
    return [*out, ""]


def _derived_rows(derived: list[dict]) -> list[str]:
    """The table of the variable names a type derives (empty when none)."""
    if not derived:
        return []
    rows = [
        "**Derived variables** (named after the variable of an option):",
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
    """The index's section on naming conventions, from ``neml2-syntax --json``."""
    if not rules:
        return []
    out = [
        "## Naming conventions",
        "",
        "A variable is named by the option that declares it (`variable = 'stress'`). A "
        "few names are derived instead: a type appends a suffix to the name of another "
        "variable `x`. Each entry lists, under *Derived variables*, which names its "
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


#: Sections whose docstrings are about code (Python expressions, driver options), not
#: equations: their code spans are never typeset.
_CODE_SECTIONS = {"Tensors", "Drivers"}


def summary(entry: dict, ctx: _Context | None = None) -> str:
    """The first sentence of a type's docstring (up to a period outside code), as
    Markdown."""
    para = " ".join(inspect.cleandoc(entry.get("doc") or "").split("\n\n")[0].split())
    for m in re.finditer(r"``.+?``|`[^`]+`|\.(?=\s|$)", para):
        if m[0] == ".":  # the first period outside code ends the sentence
            para = para[: m.end()]
            break
    return _md(para, ctx)


def _entry(e: dict, shapes: dict, links: dict) -> list[str]:
    fields = e.get("fields", [])
    names = {f["name"] for f in fields} | {c for f in fields for c in f.get("choices", [])}
    ctx = _Context(names, math=e.get("section") not in _CODE_SECTIONS, links=links)
    where = f"`[{e.get('section', 'Models')}]` block, `type = {e['type']}`"
    if e.get("module") and not any(p.startswith("_") for p in e["module"].split(".")):
        where += f"; Python: `{e['module']}.{e.get('class', e['type'])}`"
    out = [f"## {e['type']}", "", where + ".", ""]
    doc = _md(e.get("doc") or "", ctx)
    out += [doc or "*(no docstring: the variables and options below say what it takes)*", ""]
    if e.get("section") == "Models" and not has_equation(e):
        out += ["*(structural type: no equation of its own)*", ""]
    out += _variables(fields, shapes, ctx)
    out += _derived_rows(e.get("derived", []))
    out += _parameters(fields, shapes, ctx)
    out += _options(fields, ctx)
    if not fields:
        out += ["No options.", ""]
    return out


def _example(family) -> list[str]:
    if family.slug not in examples.EXAMPLES:
        return []
    text, hit = examples.EXAMPLES[family.slug]
    out = ["## Example", "", text, ""]
    if family.slug in examples.PARSE_ONLY:
        out += [f"<!-- docs-test: parse-only ({examples.PARSE_ONLY[family.slug]}) -->", ""]
    return [*out, "```hit", hit.rstrip("\n"), "```", ""]


def render_family(family, entries: list[dict], shapes: dict, links: dict) -> str:
    """One family's page (Markdown)."""
    out = [
        f"# {family.title}",
        "",
        f"{family.summary} {len(entries)} types, generated from the registry when the "
        "site is built; the [catalogue's index](../catalogue.md) lists every family and "
        "explains the [naming conventions](../catalogue.md#naming-conventions).",
        "",
    ]
    if family.slug in families.GUIDES:
        target, title = families.GUIDES[family.slug]
        out += [f"See also: [{title}](../{target}).", ""]
    out += [", ".join(f"[{e['type']}](#{anchor(e['type'])})" for e in entries), ""]
    out += _example(family)
    for e in entries:
        out += _entry(e, shapes, links)
    return "\n".join(out)


def render_index(groups: dict, conventions: list[dict], shapes: dict) -> str:
    """The catalogue's index page (Markdown)."""
    total = sum(len(v) for v in groups.values())
    links = {
        e["type"]: f"{family.path}#{anchor(e['type'])}" for family, v in groups.items() for e in v
    }
    out = [
        "# Model catalogue",
        "",
        f"Every registered type ({total} in this build), one page per family, generated "
        "when the site is built from `neml2-syntax --json` and the registry: a type's "
        "family is the package that defines it (a hardening law is written in "
        "`neml2.models.solid_mechanics.plasticity.*_hardening`), so a plugin's or a new "
        "type appears without editing the docs. Each entry gives the HIT block and `type`, "
        "the docstring with its equation, the input and output variables with their "
        "shapes (`*B` the batch axes, sub-batch axes included), the names it derives, its "
        'parameters and options: type ("list of" for a list), default, valid range '
        "(interval notation: `(0, inf)` positive and finite, `[1, inf)` at least 1; a "
        "parameter given by a variable is not checked at load) or choices, and older "
        "NEML2 spellings. Each family's page starts with an example input. "
        "`uv run neml2-syntax TYPE` prints the same on a terminal.",
        "",
        "| family | types | what it holds |",
        "|---|---|---|",
    ]
    for family, entries in groups.items():
        out.append(f"| [{family.title}]({family.path}) | {len(entries)} | {family.summary} |")
    out += ["", *_conventions(conventions or [])]
    out += ["## Every type", "", "| type | family | what it is |", "|---|---|---|"]
    rows = sorted(
        ((e["type"], family, e) for family, v in groups.items() for e in v),
        key=lambda r: r[0].casefold(),
    )
    for name, family, e in rows:
        fields = e.get("fields", [])
        names = {f["name"] for f in fields} | {c for f in fields for c in f.get("choices", [])}
        ctx = _Context(names, math=e.get("section") not in _CODE_SECTIONS, links=links)
        line = summary(e, ctx).replace("|", "\\|").replace("\n", " ")
        out.append(f"| [{name}]({links[name]}) | [{family.title}]({family.path}) | {line} |")
    return "\n".join([*out, ""])


def render_pages(lib: dict) -> dict[str, str]:
    """``{path: Markdown}`` of every catalogue page for *lib* (:func:`library`)."""
    groups = by_family(lib["types"])
    shapes = lib.get("shapes", {})
    pages = {PAGE: render_index(groups, lib.get("conventions", []), shapes)}
    links = {
        e["type"]: f"{Path(family.path).name}#{anchor(e['type'])}"
        for family, v in groups.items()
        for e in v
    }
    for family, entries in groups.items():
        pages[family.path] = render_family(family, entries, shapes, links)
    return pages


# ---------------------------------------------------------------------- MkDocs events
_pages: dict[str, str] = {}


def on_config(config):
    """MkDocs event: generate the pages; list any page the nav's catalogue section
    lacks (a plugin's types: the ``other`` family) at the end of that section."""
    _pages.clear()
    _pages.update(render_pages(library()))
    for item in config["nav"] or []:
        if isinstance(item, dict) and isinstance(item.get(NAV_SECTION), list):
            section = item[NAV_SECTION]
            listed = {
                v
                for entry in section
                for v in (entry.values() if isinstance(entry, dict) else [entry])
            }
            for path in _pages:
                if path not in listed:
                    title = _pages[path].splitlines()[0].lstrip("# ")
                    section.append({title: path})
    return config


def on_files(files, config):
    """MkDocs event: add the generated catalogue pages to the site's files."""
    from mkdocs.structure.files import File

    for path, text in (_pages or render_pages(library())).items():
        files.append(File.generated(config, path, content=text))
    return files
