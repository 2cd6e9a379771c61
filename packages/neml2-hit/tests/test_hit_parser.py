"""Syntax features of the HIT dialect."""

from __future__ import annotations

import pytest

from neml2 import hit
from neml2.hit import HitIncludeError, HitSubstitutionError, HitValueError


def roundtrip(text: str) -> hit.Node:
    root = hit.parse(text)
    assert hit.render(root) == text
    assert hit.structure(hit.parse(hit.render(root))) == hit.structure(root)
    return root


def test_sections_params_and_paths():
    root = roundtrip("[Models]\n  [elasticity]\n    E = 1e5\n    nu = 0.3\n  []\n[]\n")
    el = root.find("Models/elasticity")
    assert el.name == "elasticity" and el.fullpath == "Models/elasticity"
    assert [p.name for p in el.params()] == ["E", "nu"]
    assert el.param("E").as_float() == 1e5
    assert el.param("E").fullpath == "Models/elasticity/E"
    assert str(el.location) == "<string>:2:3"
    assert str(el.param("nu").location) == "<string>:4:5"
    assert root.param("Models/elasticity/nu").as_float() == 0.3
    assert root.find("Models/nope") is None and root.param("Models/elasticity/x") is None
    assert root.find("") is root and root.fullpath == ""


def test_path_headers_and_path_params():
    root = roundtrip("[a/b]\n  c/d = 1\n[]\n[a]\n  [b]\n    e = 2\n  []\n[]\n")
    assert root.find("a/b").fullpath == "a/b"
    assert root.param("a/b/c/d").as_int() == 1
    assert root.param("a/b/e").as_int() == 2
    assert root.find("a/b").param("c/d").raw == "1"


def test_legacy_headers():
    root = roundtrip("[Models]\n  [./a]\n    x = 1\n  [../]\n[]\n")
    a = root.find("Models/a")
    assert a.name == "a" and a.legacy and a.param("x").as_int() == 1
    assert hit.format_node(root) == "[Models]\n  [a]\n    x = 1\n  []\n[]\n"


def test_several_elements_on_one_line():
    root = roundtrip("[a] x=1 y = 'b c' [b] z=2 [] []")
    assert root.param("a/x").raw == "1" and root.param("a/y").raw == "b c"
    assert root.param("a/b/z").raw == "2"


def test_quoting_and_escapes():
    root = roundtrip(
        "a = 'it\\'s'\nb = \"say \\\"hi\\\"\"\nc = 'back\\\\slash'\nd = 'tab\\there'\n"
        "e = ''\nf = '$5 and \\${x}'\ng = \"multi\nline\"\n"
    )
    assert root.param("a").raw == "it's"
    assert root.param("b").raw == 'say "hi"'
    assert root.param("c").raw == "back\\slash"
    assert root.param("d").raw == "tab\there"
    assert root.param("e").raw == ""
    assert root.param("f").raw == "$5 and ${x}"
    assert root.param("g").raw == "multi\nline"
    assert root.param("a").text == "'it\\'s'"


def test_triple_quoted_values_are_dedented():
    text = "[T]\n  [x]\n    expr = '''\n      f(1,\n        2)\n    '''\n  []\n[]\n"
    root = roundtrip(text)
    assert root.param("T/x/expr").raw == "f(1,\n  2)"
    root = roundtrip("e = " + '"' * 3 + "a = 'q' " + '"' * 3 + "\n")
    assert root.param("e").raw == "a = 'q'"


def test_arrays_and_matrices():
    root = roundtrip("v = '1 2 3'\nm = '1 2; 3 4 5;6'\nb = 'on OFF Yes no TRUE false'\n")
    assert root.param("v").as_list(int) == [1, 2, 3]
    assert root.param("v").as_list(float) == [1.0, 2.0, 3.0]
    assert root.param("v").as_list() == ["1", "2", "3"]
    assert root.param("m").as_matrix(int) == [[1, 2], [3, 4, 5], [6]]
    assert root.param("b").as_list(bool) == [True, False, True, False, True, False]
    root = roundtrip("m = ''\nn = '\n  a b\n  c d\n'\n")
    assert root.param("m").as_matrix() == [] and root.param("m").as_list() == []
    assert root.param("n").as_list() == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("raw", "method", "expected"),
    [
        ("42", "as_int", 42),
        ("-7", "as_int", -7),
        ("1e-3", "as_float", 1e-3),
        ("-.5", "as_float", -0.5),
        ("3", "as_float", 3.0),
        ("inf", "as_float", float("inf")),
        ("On", "as_bool", True),
        ("no", "as_bool", False),
        ("hello world", "as_str", "hello world"),
    ],
)
def test_conversions(raw, method, expected):
    root = hit.parse(f"[s]\n  p = '{raw}'\n[]\n")
    assert getattr(root.param("s/p"), method)() == expected


@pytest.mark.parametrize(
    ("raw", "call"),
    [
        ("1.5", lambda p: p.as_int()),
        ("1_000", lambda p: p.as_int()),
        ("abc", lambda p: p.as_float()),
        ("1,0", lambda p: p.as_float()),
        ("maybe", lambda p: p.as_bool()),
        ("1", lambda p: p.as_bool()),
        ("1 x 3", lambda p: p.as_list(int)),
        ("1 2; 3 y", lambda p: p.as_matrix(float)),
    ],
)
def test_conversion_errors_name_the_parameter(raw, call):
    root = hit.parse(f"[Models]\n  [a]\n    p = '{raw}'\n  []\n[]\n", "in.i")
    with pytest.raises(HitValueError) as info:
        call(root.param("Models/a/p"))
    assert "parameter 'Models/a/p'" in str(info.value)
    assert str(info.value).startswith("in.i:3:5: ")


def test_comments_are_kept():
    text = "# top\n[a] # header\n  # inside\n  x = 1 # trailing\n\n  # spaced\n[] # close\n# end\n"
    root = roundtrip(text)
    a = root.find("a")
    assert a.comment == "header"
    assert a.param("x").comment == "trailing"
    assert [c.content for c in a.comments()] == ["inside", "spaced"]
    assert [c.text for c in root.comments()] == ["# top", "# end"]


def test_override_operator():
    root = roundtrip("[a]\n  x = 1\n  x := 2\n[]\n[a]\n  y := 3\n[]\n[a]\n  y = 4\n[]\n")
    assert root.param("a/x").raw == "2"
    assert root.param("a/y").raw == "3"
    assert [p.name for p in root.find("a").params()] == ["x"]
    assert all(not p.overridden for s in root.walk() for p in s.params())


def test_substitution_scopes():
    text = (
        "E = 100\nname = top\n[Models]\n  nu = 0.3\n  [a]\n    E = ${E}\n    nu = ${nu}\n"
        "    n = ${name}_x\n    q = '${Models/a/E} ${replace nu}'\n  []\n[]\n"
    )
    root = roundtrip(text)
    a = root.find("Models/a")
    assert a.param("E").raw == "100"  # self-reference skips itself and finds the outer E
    assert a.param("nu").raw == "0.3"
    assert a.param("n").raw == "top_x"
    assert a.param("q").raw == "100 0.3"


def test_substitution_of_later_parameters_and_chains():
    root = roundtrip("a = ${b}\nb = ${c}x\nc = '${raw 1 2 3}'\n")
    assert [root.param(n).raw for n in "abc"] == ["123x", "123x", "123"]


def test_brace_commands(monkeypatch):
    monkeypatch.setenv("NEML2_HIT_TEST_VAR", "from-env")
    root = roundtrip(
        "E = 200\nhalf = ${fparse E/2}\npw = ${fparse 2^3*2}\nf = ${fparse sqrt(16)+cos(0)}\n"
        "cmp = ${fparse E > 100}\nr = ${raw a b c}\nenv = ${env NEML2_HIT_TEST_VAR}\n"
        "u = ${units 1 km -> m}\nu2 = ${units 2.5 MPa}\nnest = ${fparse ${E}*2}\n"
        "fr = ${fparse 1/4}\n"
    )
    got = {p.name: p.raw for p in root.params()}
    assert got == {
        "E": "200",
        "half": "100",
        "pw": "16",
        "f": "5",
        "cmp": "1",
        "r": "abc",
        "env": "from-env",
        "u": "1000",
        "u2": "2.5",
        "nest": "400",
        "fr": "0.25",
    }


def test_substitution_errors_point_at_the_brace():
    with pytest.raises(HitSubstitutionError) as info:
        hit.parse("[a]\n  x = 'pre ${missing} post'\n[]\n")
    assert (info.value.line, info.value.column) == (2, 12)


def test_includes(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "common.i").write_text("[b]\n  y = ${x}\n[]\n")
    (tmp_path / "sub" / "more.i").write_text("z = 3\n!include common.i\n")
    main = tmp_path / "main.i"
    text = "x = 1\n[a]\n  !include sub/more.i # shared\n[]\n"
    main.write_text(text)
    root = hit.parse_file(main)
    assert hit.render(root) == text
    a = root.find("a")
    assert [c.name for c in a.children()] == ["b"]
    assert a.param("z").as_int() == 3
    assert root.param("a/b/y").raw == "1"
    assert root.param("a/b/y").location.file == str(tmp_path / "sub" / "common.i")
    inc = a.items[0]
    assert isinstance(inc, hit.Include) and inc.comment == "shared"
    assert hit.structure(hit.parse(hit.render(root), str(main))) == hit.structure(root)


def test_set_param_on_an_included_parameter_overrides_it_in_place(tmp_path):
    (tmp_path / "common.i").write_text("E = 1\n")
    main = tmp_path / "main.i"
    main.write_text("[a]\n  !include common.i\n[]\n")
    root = hit.parse_file(main)
    root.find("a").set_param("E", 2)
    assert root.param("a/E").raw == "2"
    text = hit.render(root)
    assert text == "[a]\n  !include common.i\n  E := 2\n[]\n"
    main.write_text(text)
    assert hit.parse_file(main).param("a/E").raw == "2"


def test_include_cycle_and_errors_inside_includes(tmp_path):
    (tmp_path / "a.i").write_text("!include b.i\n")
    (tmp_path / "b.i").write_text("x = 1\n!include a.i\n")
    with pytest.raises(HitIncludeError) as info:
        hit.parse_file(tmp_path / "a.i")
    assert "include cycle: a.i -> b.i -> a.i" in info.value.reason
    assert (info.value.file, info.value.line, info.value.column) == (
        str(tmp_path / "b.i"),
        2,
        1,
    )
    (tmp_path / "self.i").write_text("!include self.i\n")
    with pytest.raises(HitIncludeError, match="include cycle"):
        hit.parse_file(tmp_path / "self.i")
    (tmp_path / "bad.i").write_text("[x]\n  y = 'oops\n[]\n")
    (tmp_path / "top.i").write_text("!include 'bad.i'\n")
    with pytest.raises(hit.HitSyntaxError) as info:
        hit.parse_file(tmp_path / "top.i")
    assert info.value.file == str(tmp_path / "bad.i") and info.value.line == 2
    (tmp_path / "open.i").write_text("[x]\n")
    (tmp_path / "top2.i").write_text("!include open.i\n[]\n")
    with pytest.raises(hit.HitSyntaxError, match="never closed"):
        hit.parse_file(tmp_path / "top2.i")
    (tmp_path / "dup.i").write_text("x = 1\n")
    (tmp_path / "top3.i").write_text("x = 0\n!include dup.i\n")
    with pytest.raises(hit.HitDuplicateError):
        hit.parse_file(tmp_path / "top3.i")
    (tmp_path / "top4.i").write_text("x := 0\n!include dup.i\n")
    assert hit.parse_file(tmp_path / "top4.i").param("x").raw == "0"


def test_missing_file():
    with pytest.raises(HitIncludeError) as info:
        hit.parse_file("/nonexistent/dir/x.i")
    assert str(info.value).startswith("/nonexistent/dir/x.i:1:1: file not found")


def test_command_line_overrides(tmp_path):
    f = tmp_path / "m.i"
    f.write_text("E0 = 5\n[Models]\n  [el]\n    E = 1\n    nu = ${E}\n  []\n[]\n")
    root = hit.parse_file(
        f,
        overrides=[
            "Models/el/E=2e5",
            "Models/el/extra := 'a b'",
            "+Models/new/deep/x=1 2 3",  # '+' creates the missing sections
            "Models/el/ref=${E0}",
        ],
    )
    el = root.find("Models/el")
    assert el.param("E").as_float() == 2e5
    assert el.param("nu").raw == "2e5"  # substitution sees the override
    assert el.param("extra").raw == "a b"
    assert root.param("Models/new/deep/x").as_list(int) == [1, 2, 3]
    assert el.param("ref").raw == "5"
    assert str(el.param("E").location) == "<command line>:1:1"
    assert str(el.param("E").value_location) == "<command line>:1:13"
    # the overridden tree still renders to valid HIT with the same content
    again = hit.parse(hit.render(root))
    assert again.param("Models/new/deep/x").raw == "1 2 3"
    assert again.param("Models/el/E").raw == "2e5"


@pytest.mark.parametrize(
    ("override", "column", "fragment"),
    [
        ("Models/el/E", 1, "expected path=value"),
        ("=3", 1, "expected path=value"),
        ("Models/el/E=", 13, "missing value"),
        ("Models//E=1", 1, "invalid path"),
        ("Models/el/E='x", 13, "unterminated string"),
        ("Models/el/E='x' y", 16, "unexpected text after the value"),
        ("Models/el/E='a\\qb'", 15, "bad escape"),
    ],
)
def test_malformed_overrides(override, column, fragment):
    with pytest.raises(hit.HitSyntaxError) as info:
        hit.parse("[Models]\n  [el]\n    E = 1\n  []\n[]\n", overrides=["+a=1", override])
    err = info.value
    assert (err.file, err.line, err.column) == ("<command line>", 2, column), str(err)
    assert fragment in err.reason
    assert override in err.reason or fragment == "bad escape" or "in override" in err.reason


def test_empty_and_whitespace_inputs():
    for text in ["", "\n", "   \n\t\n", "# only a comment", "# c\n\n"]:
        root = roundtrip(text)
        assert root.children() == [] and root.params() == []


def test_crlf_line_endings():
    text = "[a]\r\n  x = 1\r\n  y = 'p q'\r\n[]\r\n"
    root = roundtrip(text)
    assert root.param("a/x").as_int() == 1 and root.param("a/y").as_list() == ["p", "q"]


def test_tabs_count_as_one_column():
    with pytest.raises(hit.HitSyntaxError) as info:
        hit.parse("[a]\n\t\tx = 1 2\n[]\n")
    assert (info.value.line, info.value.column) == (2, 9)


def test_parse_rejects_bytes():
    with pytest.raises(TypeError):
        hit.parse(b"x = 1")  # type: ignore[arg-type]


def test_override_brace_errors_point_into_the_override():
    with pytest.raises(HitSubstitutionError) as info:
        hit.parse("x = 1\n", overrides=["x=2", "+y=${nope}"])
    assert (info.value.file, info.value.line, info.value.column) == ("<command line>", 2, 4)
    with pytest.raises(HitSubstitutionError) as info:
        hit.parse("x = 1\n", overrides=["x=a ${nope}"])
    assert (info.value.line, info.value.column) == (1, 5)


def test_parse_tree_keeps_braces_unevaluated():
    root = hit.parse_tree("a = 1\nb = 'x ${a} ${fparse a*2}'\nc = '''\n  ${a}\n'''\n")
    assert root.param("b").raw == "x ${a} ${fparse a*2}"
    assert root.param("c").raw == "${a}"
    full = hit.parse("a = 1\nb = 'x ${a} ${fparse a*2}'\nc = '''\n  ${a}\n'''\n")
    assert full.param("b").raw == "x 1 2" and full.param("c").raw == "1"
