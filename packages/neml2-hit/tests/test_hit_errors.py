"""A table of malformed inputs and the exact error each must report."""

from __future__ import annotations

import pytest

from neml2 import hit
from neml2.hit import (
    HitDuplicateError,
    HitError,
    HitIncludeError,
    HitSubstitutionError,
    HitSyntaxError,
)

S, D, Inc, B = HitSyntaxError, HitDuplicateError, HitIncludeError, HitSubstitutionError

# (input, error class, line, column, fragment of the reason)
CASES = [
    ("[a]\n  x = 1\n", S, 1, 1, "section 'a' is never closed"),
    ("[a]\n  [b]\n  x = 1\n[]\n", S, 2, 3, "section 'b' is never closed"),
    ("[M]\n  [a]\n    x = 1\n  [b]\n  []\n[]\n", S, 2, 3, "section 'a' is never closed"),
    ("[M]\n  [a]\n  []\n[N]\n[]\n", S, 1, 1, "section 'M' is never closed"),
    ("[]\n", S, 1, 1, "unmatched section close '[]'"),
    ("[a]\n[]\n[../]\n", S, 3, 1, "unmatched section close '[../]'"),
    ("[a\n[]\n", S, 1, 1, "unterminated section header"),
    ("[a b]\n[]\n", S, 1, 2, "invalid section name 'a b'"),
    ("[a//b]\n[]\n", S, 1, 2, "invalid section name 'a//b'"),
    ("[./]\n[]\n", S, 1, 2, "invalid section name './'"),
    ("[a]\n  ]\n[]\n", S, 2, 3, "unexpected ']'"),
    ("x =\n", S, 1, 4, "missing value for parameter 'x'"),
    ("x = # comment\n", S, 1, 5, "missing value for parameter 'x'"),
    ("x 1\n", S, 1, 3, "expected '=' after parameter name 'x'"),
    ("= 1\n", S, 1, 1, "missing parameter name"),
    ("'x' = 1\n", S, 1, 1, "unexpected string"),
    ("$x = 1\n", S, 1, 1, "unexpected character '$'"),
    ("[a]\n  x = 1 2 3\n[]\n", S, 2, 9, "unexpected text after the value of 'x'"),
    ("x = 'a' 'b'\n", S, 1, 9, "unexpected text after the value of 'x'"),
    ("x = 1 ]\n", S, 1, 7, "unexpected text after the value"),
    ("x = 'abc\n", S, 1, 5, "unterminated string"),
    ('x = "abc\n', S, 1, 5, "unterminated string"),
    ("[T]\n  e = '''\n   f(x)\n[]\n", S, 2, 7, "unterminated string (missing closing ''')"),
    ("x = 'a\\qb'\n", S, 1, 7, "bad escape sequence"),
    ('x = "a\\', S, 1, 7, "bad escape sequence '\\' followed by end of text"),
    ("\tx = 'a\\%'\n", S, 1, 8, "bad escape sequence"),
    ("x = ${y\n", S, 1, 5, "unterminated brace expression"),
    ("x = 'pre ${y' \n", S, 1, 10, "unterminated brace expression"),
    ("[a]\n  x = 1\n  x = 2\n[]\n", D, 3, 3, "parameter 'a/x' (first set at <string>:2:3)"),
    ("x := 1\nx := 2\n", D, 2, 1, "duplicate parameter 'x'"),
    ("[a/b]\n  x = 1\n[]\n[a]\n  [b]\n    x = 2\n  []\n[]\n", D, 6, 5, "'a/b/x'"),
    ("[a]\n  x = ${nope}\n[]\n", B, 2, 7, "unknown substitution '${nope}'"),
    ("a = ${b}\nb = ${a}\n", B, 2, 5, "circular substitution '${a}'"),
    ("x = ${}\n", B, 1, 5, "empty substitution"),
    ("x = ${env NEML2_HIT_SURELY_UNSET_VARIABLE}\n", B, 1, 5, "is not set"),
    ("x = ${fparse 1 +}\n", B, 1, 5, "cannot parse expression"),
    ("x = ${fparse gamma(2)}\n", B, 1, 5, "unsupported function 'gamma'"),
    ("x = ${fparse 1/0}\n", B, 1, 5, "cannot evaluate"),
    ("y = abc\nx = ${fparse 2*y}\n", B, 2, 5, "'y' = 'abc' is not a number"),
    ("x = ${frobnicate 3}\n", B, 1, 5, "unknown brace command 'frobnicate'"),
    ("x = ${units 1 m -> s}\n", B, 1, 5, "cannot convert length to time"),
    ("x = ${units 1 furlong -> m}\n", B, 1, 5, "unsupported unit 'furlong'"),
    ("!include\n", S, 1, 1, "missing file name after '!include'"),
    ("[a]\n  !include surely_missing_file.i\n[]\n", Inc, 2, 3, "file not found"),
]


@pytest.mark.parametrize(
    ("text", "cls", "line", "column", "fragment"),
    CASES,
    ids=[f"{i:02d}-{c[4][:30]}" for i, c in enumerate(CASES)],
)
def test_error_location(text, cls, line, column, fragment):
    with pytest.raises(HitError) as info:
        hit.parse(text, "<string>")
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    assert (err.file, err.line, err.column) == ("<string>", line, column), str(err)
    assert fragment in err.reason
    assert str(err) == f"<string>:{line}:{column}: {err.reason}"


def test_table_is_large_enough():
    assert len(CASES) >= 25


def test_error_names_the_file(tmp_path):
    f = tmp_path / "bad.i"
    f.write_text("[Models]\n  [a]\n    E = 1 2\n  []\n[]\n")
    with pytest.raises(HitSyntaxError) as info:
        hit.parse_file(f)
    assert str(info.value).startswith(f"{f}:3:11: ")


def test_too_deep_nesting_is_an_error_not_recursion():
    depth = hit.MAX_DEPTH + 1
    text = "[a]\n" * depth + "[]\n" * depth
    with pytest.raises(HitSyntaxError) as info:
        hit.parse(text)
    assert (info.value.line, info.value.column) == (depth, 1)
    assert "nested too deeply" in info.value.reason


def test_deep_path_header_is_an_error():
    text = "[" + "/".join(["a"] * (hit.MAX_DEPTH + 5)) + "]\n[]\n"
    with pytest.raises(HitSyntaxError, match="nested too deeply"):
        hit.parse(text)


def test_maximum_depth_is_fine():
    depth = hit.MAX_DEPTH
    text = "[a]\n" * depth + "x = 1\n" + "[]\n" * depth
    root = hit.parse(text)
    assert root.find("/".join(["a"] * depth)).param("x").as_int() == 1
    assert hit.render(root) == text
    assert hit.format_text(text).count("\n") == 2 * depth + 1


def test_errors_are_picklable():
    import pickle

    with pytest.raises(HitError) as info:
        hit.parse("x = 1 2")
    err = pickle.loads(pickle.dumps(info.value))
    assert (type(err), err.line, err.column, err.reason) == (
        HitSyntaxError,
        1,
        7,
        info.value.reason,
    )
