"""Property-based tests: random trees and layouts round-trip; mutated files fail cleanly."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from neml2 import hit

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFORMANCE = Path(
    os.environ.get(
        "NEML2_CONFORMANCE_DIR",
        Path(__file__).resolve().parents[3] / "tests-integration" / "conformance" / "data",
    )
)

names = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.-+<>~", min_size=1, max_size=8
).filter(lambda s: s not in (".", ".."))
scalars = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False),
    st.booleans(),
)
values = st.one_of(
    scalars,
    st.lists(st.one_of(st.integers(), st.floats(allow_nan=False), names), max_size=5),
    st.lists(st.lists(st.integers(-99, 99), min_size=1, max_size=3), min_size=1, max_size=3),
)
comment_text = st.text(max_size=15).filter(lambda s: "\n" not in s)


@st.composite
def section_body(draw, depth: int):
    """A list of ('param'|'comment'|'section', ...) entries with unique names."""
    n = draw(st.integers(0, 5 if depth < 3 else 2))
    used_params: set[str] = set()
    used_sections: set[str] = set()
    body = []
    for _ in range(n):
        kind = draw(st.sampled_from(["param", "param", "comment", "section"]))
        if kind == "section" and depth >= 4:
            kind = "param"
        if kind == "param":
            name = draw(names.filter(lambda s: s not in used_params))
            used_params.add(name)
            op = draw(st.sampled_from(["=", "=", ":="]))
            trailing = draw(st.none() | comment_text)
            body.append(("param", name, draw(values), op, trailing))
        elif kind == "comment":
            body.append(("comment", draw(comment_text)))
        else:
            name = draw(names.filter(lambda s: s not in used_sections))
            used_sections.add(name)
            trailing = draw(st.none() | comment_text)
            body.append(("section", name, draw(section_body(depth + 1)), trailing))
    return body


def build(node: hit.Node, body) -> None:
    for entry in body:
        if entry[0] == "param":
            _, name, value, op, trailing = entry
            p = node.set_param(name, value, op=op)
            p.comment = trailing
        elif entry[0] == "comment":
            node.add_comment(entry[1])
        else:
            _, name, sub, trailing = entry
            child = node.add_child(name)
            child.comment = trailing
            build(child, sub)


@SETTINGS
@given(section_body(0))
def test_random_trees_round_trip(body):
    root = hit.Node()
    build(root, body)
    text = hit.render(root)
    back = hit.parse(text)
    assert hit.structure(back) == hit.structure(root)
    assert hit.render(back) == text
    canon = hit.format_node(root)
    assert hit.structure(hit.parse(canon)) == hit.structure(root)
    assert hit.format_text(canon) == canon


# -- random layouts of the same content ------------------------------------------------------
gaps = st.sampled_from([" ", "\n", "\n\n", "\n  ", "\t", " \n\t ", "\r\n", "\n\n\n    "])
tight = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def laid_out(draw):
    """A random tree whose whitespace is randomised (still valid HIT)."""
    root = hit.Node()
    build(root, draw(section_body(0)))
    for node in root.walk():
        for item in node.items:
            item.prefix = draw(gaps)
            if isinstance(item, hit.Comment) and "\n" not in item.prefix:
                item.prefix = "\n" + item.prefix  # else it would trail the line before
            if isinstance(item, hit.Param):
                item._key_ws, item._op_ws = draw(tight), draw(tight)
            if isinstance(item, hit.Param | hit.Node) and item._comment_text is not None:
                item._comment_ws = draw(tight)
        if node is not root:
            node._close_prefix = draw(gaps)
            if draw(st.booleans()):
                node._header = f"[./{node.name}]"
                node._close_text = "[../]"
    # whatever follows a comment must start on a new line
    text = hit.render(root)
    return root, text


def _comment_safe(root: hit.Node) -> None:
    for node in root.walk():
        follow_comment = node._comment_text is not None
        for item in node.items:
            if follow_comment and "\n" not in (item.prefix or "\n"):
                item.prefix = "\n" + (item.prefix or "")
            follow_comment = isinstance(item, hit.Comment) or (
                not isinstance(item, hit.Comment) and item._comment_text is not None
            )
            if isinstance(item, hit.Node):
                continue
        if node is not root and follow_comment and "\n" not in (node._close_prefix or "\n"):
            node._close_prefix = "\n" + (node._close_prefix or "")


def _fix_after_sections(root: hit.Node) -> None:
    """A section's close comment also swallows the rest of its line."""
    for node in root.walk():
        prev = None
        for item in node.items:
            if isinstance(prev, hit.Node) and prev._close_comment_text is not None:
                item.prefix = "\n" + (item.prefix or "")
            prev = item


@SETTINGS
@given(laid_out())
def test_random_layouts_render_byte_identical(sample):
    root, _ = sample
    _comment_safe(root)
    _fix_after_sections(root)
    text = hit.render(root)
    back = hit.parse(text)
    assert hit.render(back) == text
    assert hit.structure(back) == hit.structure(root)
    canon = hit.format_node(back)
    assert hit.structure(hit.parse(canon)) == hit.structure(root)
    assert hit.format_text(canon) == canon


# -- fuzzing with mutated real inputs --------------------------------------------------------
def _seeds() -> list[tuple[str, str]]:
    files = sorted(CONFORMANCE.rglob("*.i")) if CONFORMANCE.is_dir() else []
    seeds = [(str(f), f.read_text()) for f in files[:: max(1, len(files) // 12)]]
    seeds.append(
        (
            "<builtin>",
            "# c\n[a/b] # h\n  x = '1 2; 3 4'\n  y := ${x}\n  [./c]\n    e = '''\n  f(1)\n'''\n"
            '  [../]\n  z = "q\\"${fparse 1+2}"\n[]\n',
        )
    )
    return seeds


SEEDS = _seeds()
PIECES = [
    "[",
    "]",
    "[]",
    "'",
    '"',
    "'''",
    "=",
    ":=",
    "#",
    "${",
    "}",
    "/",
    "./",
    "../",
    "\n",
    " ",
    "\\",
    "!include ",
    "${fparse 1/",
    "${raw ",
    "${env ",
    ";",
    "\t",
    "x",
    "\x00",
]


@st.composite
def mutated(draw):
    name, text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "duplicate", "swap"]))
        i = draw(st.integers(0, len(text)))
        if op == "delete":
            j = draw(st.integers(i, min(len(text), i + 20)))
            text = text[:i] + text[j:]
        elif op == "insert":
            piece = draw(st.sampled_from(PIECES) | st.text(max_size=3))
            text = text[:i] + piece + text[i:]
        else:
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            if op == "duplicate":
                lines.insert(a, lines[a])
            else:
                b = draw(st.integers(0, len(lines) - 1))
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return name, text


FUZZ_EXAMPLES = int(os.environ.get("NEML2_HIT_FUZZ_EXAMPLES", "400"))


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fuzz_only_hit_errors_escape(sample):
    name, text = sample
    assume(SEEDS)
    try:
        root = hit.parse(text, name)
    except hit.HitError as e:
        assert e.line >= 1 and e.column >= 1 and e.reason
        assert str(e).startswith(f"{e.file}:{e.line}:{e.column}: ")
        return
    assert hit.render(root) == text
    canon = hit.format_node(root)
    assert hit.structure(hit.parse(canon, name)) == hit.structure(root)
    for node in root.walk():
        for p in node.params():
            for conv in (p.as_int, p.as_float, p.as_bool, p.as_matrix):
                try:
                    conv()
                except hit.HitValueError:
                    pass


def test_huge_flat_and_deep_inputs_do_not_recurse():
    text = "[a]\n" + "".join(f"  p{i} = {i}\n" for i in range(20000)) + "[]\n"
    root = hit.parse(text)
    assert hit.render(root) == text
    deep = "[a]" * 5000
    try:
        hit.parse(deep)
    except hit.HitSyntaxError as e:
        assert "nested too deeply" in e.reason
    many = "x = " + "${" * 500 + "y" + "}" * 500
    try:
        hit.parse(many)
    except hit.HitSyntaxError as e:
        assert "nested too deeply" in e.reason
    expr = "x = ${fparse " + "(" * 3000 + "1" + ")" * 3000 + "}"
    try:
        hit.parse(expr)
    except hit.HitSubstitutionError:
        pass
    chain = "".join(f"v{i} = ${{v{i + 1}}}\n" for i in range(300)) + "v300 = 1\n"
    try:
        assert hit.parse(chain).param("v0").raw == "1"
    except hit.HitSubstitutionError as e:
        assert "too long" in e.reason


def test_environment_is_not_required():
    assert "NEML2_HIT_SURELY_UNSET_VARIABLE" not in os.environ


# -- random text over the HIT alphabet ------------------------------------------------------
hit_pieces = st.sampled_from(
    [*"[]'\"=:#${}/.\n \t\\!;ab1", "!include ", "'''", "[./", "[../]", "x = ", "${fparse ", "\r\n"]
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hit_pieces, max_size=40).map("".join))
def test_random_text_parses_or_fails_cleanly_and_formats_faithfully(text):
    try:
        root = hit.parse(text)
    except hit.HitError as e:
        assert e.line >= 1 and e.column >= 1 and e.reason
        return
    assert hit.render(root) == text
    canon = hit.format_node(root)
    back = hit.parse(canon)
    assert hit.structure(back) == hit.structure(root)
    assert hit.format_node(back) == canon
