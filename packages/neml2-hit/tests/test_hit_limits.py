"""Command-line overrides that cannot miss, and the reader's bounds.

* an override must name an existing block (``+path=value`` creates);
* only regular files are read, up to a size bound, never blocking on a FIFO;
* ``${...}`` cannot expand a value (or all of them) past a bound;
* a UTF-8 byte-order mark is accepted; a forgotten ``[]`` is reported at its section.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys

import pytest

from neml2 import hit
from neml2.hit import HitError, HitIncludeError, HitOverrideError, HitSubstitutionError
from neml2.hit._cli import main

TEXT = """\
top = 1
[Models]
  [el]
    type = Elastic
    E = 1
  []
  [plastic/yield]
    type = Yield
    sy = 10
  []
[]
[Solvers]
  [newton]
    type = Newton
  []
[]
"""


def parse(*overrides: str) -> hit.Node:
    return hit.parse(TEXT, "m.i", overrides=list(overrides))


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail instead of hanging: SIGALRM interrupts a blocking open/read."""

    def boom(signum, frame):
        raise TimeoutError(f"still blocked after {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------------ overrides
def test_overrides_of_existing_parameters_and_new_options_of_object_blocks():
    root = parse("Models/el/E=2", "Models/el/nu=0.3", "top=4", "Solvers/newton/max_its=3")
    assert root.param("Models/el/E").raw == "2"
    assert root.param("Models/el/nu").raw == "0.3"  # new: the schema judges the name
    assert root.param("top").raw == "4"
    assert root.param("Solvers/newton/max_its").raw == "3"
    assert root.param("Models/plastic/yield/sy").raw == "10"
    root = parse("Models/plastic/yield/sy=5", "Models/plastic/yield/h=1")
    assert root.param("Models/plastic/yield/sy").raw == "5"
    assert root.param("Models/plastic/yield/h").raw == "1"


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("Model/el/E=2", "no block 'Model' (did you mean 'Models/el/E'?)"),
        ("Models/ell/E=2", "no block 'Models/ell' (did you mean 'Models/el/E'?)"),
        ("Models/el/sub/E=2", "no block 'Models/el/sub'"),
        ("Model/plastik/yield/sy=2", "(did you mean 'Models/plastic/yield/sy'?)"),
        ("Models/E=2", "[Models] holds no parameters (did you mean 'Models/el/E'?)"),
        ("Solvers/type=Newton", "(did you mean 'Solvers/newton/type'?)"),
        ("E=2", "no parameter 'E' at the top level (did you mean 'Models/el/E'?)"),
        ("tpo=2", "no parameter 'tpo' at the top level (did you mean 'top'?)"),
        (
            "nothing_like_it=2",
            "no parameter 'nothing_like_it' at the top level, and no ${nothing_like_it} of "
            "the input reads one; write",
        ),
        ("Models/el=2", "'Models/el' is a block, not a parameter"),
        ("Models=2", "'Models' is a block, not a parameter"),
        ("Models/plastic=2", "'Models/plastic' is a block, not a parameter"),
    ],
)
def test_an_override_that_would_miss_is_an_error(override, fragment):
    with pytest.raises(HitOverrideError) as info:
        parse("Models/el/E=3", override)
    err = info.value
    assert (err.file, err.line, err.column) == ("<command line>", 2, 1)
    assert fragment in err.reason, err.reason
    assert f"override '{override.split('=')[0]}'" in err.reason
    if "is a block" not in fragment:
        assert f"write '+{override.split('=')[0]}=...' to create it" in err.reason


READS = """\
nsteps = 5
[Tensors]
  [x]
    n = ${nbatch}
    m = '${fparse 2 * nbatch + sqrt(scale)}'
    k = ${replace label}
    s = ${raw a b}
  []
[]
"""


def test_a_bare_top_level_override_defines_a_name_the_input_reads():
    """The reference's habit `nbatch=10`: without '+' when a ${nbatch} of the file reads
    it (the file leaves its value to the command line), in ${name}, ${replace name}
    and ${fparse ...}."""
    root = hit.parse(READS, "r.i", overrides=["nbatch=10", "scale=4", "label=q", "nsteps=7"])
    assert root.param("Tensors/x/n").raw == "10"
    assert root.param("Tensors/x/m").raw == "22"
    assert root.param("Tensors/x/k").raw == "q"
    assert root.param("nbatch").raw == "10" and root.param("nsteps").raw == "7"
    assert str(root.param("nbatch").location) == "<command line>:1:1"


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        # a near miss of a name the input reads: suggested, not created
        ("nbatc=10", "no parameter 'nbatc' at the top level (did you mean 'nbatch'?)"),
        # fparse's functions and constants, and ${raw ...} arguments, are not parameters
        ("sqrt=2", "no parameter 'sqrt' at the top level"),
        ("pi=3", "no parameter 'pi' at the top level"),
        ("a=1", "no parameter 'a' at the top level"),
    ],
)
def test_a_bare_top_level_override_the_input_does_not_read_is_an_error(override, fragment):
    with pytest.raises(HitOverrideError) as info:
        hit.parse(READS, "r.i", overrides=["nbatch=1", "scale=1", "label=q", override])
    name = override.split("=")[0]
    assert fragment in info.value.reason, info.value.reason
    assert f"no ${{{name}}} of the input reads one; write '+{name}=...' to create it" in (
        info.value.reason
    )


def test_plus_creates_blocks_and_parameters():
    root = parse("+Models/new/deep/type=Foo", "Models/new/deep/x=1", "+flag=true", "+Models/el/E=7")
    assert root.param("Models/new/deep/type").raw == "Foo"
    assert root.param("Models/new/deep/x").raw == "1"  # the created block holds parameters now
    assert root.param("flag").raw == "true"
    assert root.param("Models/el/E").raw == "7"  # '+' on an existing parameter just sets it
    assert str(root.param("Models/new/deep/type").location) == "<command line>:1:2"
    assert str(root.param("Models/new/deep/type").value_location) == "<command line>:1:23"
    assert str(root.param("Models/new/deep/x").location) == "<command line>:2:1"
    again = hit.parse(hit.render(root))  # still renders to valid HIT
    assert again.param("Models/new/deep/type").raw == "Foo"


def test_plus_is_a_marker_not_part_of_the_path():
    root = hit.parse("+a = 1\n", overrides=["++a=2"])
    assert root.param("+a").raw == "2"
    with pytest.raises(hit.HitSyntaxError, match="malformed override"):
        hit.parse("a = 1\n", overrides=["+ a=2"])
    with pytest.raises(HitOverrideError, match="'Models/el' is a block, not a parameter"):
        parse("+Models/el=1")


def test_parameters_written_as_paths_make_their_blocks_exist():
    root = hit.parse("Models/el/E = 1\n", overrides=["Models/el/nu=2"])
    assert root.param("Models/el/nu").raw == "2"
    with pytest.raises(HitOverrideError, match="no block 'Models/x'"):
        hit.parse("Models/el/E = 1\n", overrides=["Models/x/nu=2"])


def test_included_blocks_count(tmp_path):
    (tmp_path / "inc.i").write_text("[Models]\n  [el]\n    E = 1\n  []\n[]\n")
    (tmp_path / "m.i").write_text("!include inc.i\n")
    root = hit.parse_file(tmp_path / "m.i", overrides=["Models/el/E=2", "Models/el/nu=3"])
    assert root.param("Models/el/E").raw == "2" and root.param("Models/el/nu").raw == "3"


def test_check_cli_overrides(tmp_path, capsys):
    f = tmp_path / "m.i"
    f.write_text(TEXT)
    assert main(["check", str(f), "-o", "Modles/el/E=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("<command line>:1:1: error: override 'Modles/el/E': no block 'Modles'")
    assert "(did you mean 'Models/el/E'?)" in err
    assert main(["check", str(f), "-o", "+Modles/el/E=2"]) == 0
    assert main(["check", str(f), "-o", "Models/el/E=2", "-o", "Models/el/nu=2"]) == 0


# ----------------------------------------------------------------------- file reads
def test_non_regular_files_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "pipe.i"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.i"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        cases = [
            ("/dev/zero", "a character device"),
            (str(fifo), "a FIFO"),
            (str(tmp_path), "a directory"),
            (str(sock_path), "a socket"),
        ]
        for path, kind in cases:
            with deadline(20), pytest.raises(HitIncludeError) as info:
                hit.parse_file(path)
            assert str(info.value) == f"{path}:1:1: '{path}' is not a regular file ({kind})"
            # through an include: the error is at the !include line
            (tmp_path / "a.i").write_text(f"x = 1\n[A]\n  !include '{path}'\n[]\n")
            with deadline(20), pytest.raises(HitIncludeError) as info:
                hit.parse_file(tmp_path / "a.i")
            assert (info.value.line, info.value.column) == (3, 3)
            assert f"'{path}' is not a regular file ({kind})" in info.value.reason
    finally:
        sock.close()


def test_a_symlink_to_a_regular_file_is_fine(tmp_path):
    (tmp_path / "real.i").write_text("x = 1\n")
    (tmp_path / "link.i").symlink_to(tmp_path / "real.i")
    assert hit.parse_file(tmp_path / "link.i").param("x").raw == "1"


def test_file_size_bound(tmp_path, monkeypatch):
    f = tmp_path / "m.i"
    f.write_text("x = 1\n")  # 6 bytes
    assert hit.parse_file(f, max_file_bytes=6).param("x").raw == "1"
    with pytest.raises(HitIncludeError, match=r"has 6 bytes, more than the limit of 5 "):
        hit.parse_file(f, max_file_bytes=5)
    monkeypatch.setenv(hit.FILE_BYTES_ENV, "5")
    with pytest.raises(HitIncludeError, match="NEML2_HIT_MAX_FILE_BYTES"):
        hit.parse_file(f)
    assert hit.parse_file(f, max_file_bytes=100).param("x").raw == "1"  # the keyword wins
    for bad in ("abc", "0", "-3", "1.5"):
        monkeypatch.setenv(hit.FILE_BYTES_ENV, bad)
        with pytest.raises(HitError) as info:
            hit.parse_file(f)
        assert f"{f}:1:1: environment variable NEML2_HIT_MAX_FILE_BYTES={bad!r}" in str(info.value)
    monkeypatch.delenv(hit.FILE_BYTES_ENV)
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="max_file_bytes must be a positive integer"):
            hit.parse_file(f, max_file_bytes=bad)  # type: ignore[arg-type]


def test_a_large_sparse_file_is_refused_before_reading(tmp_path):
    f = tmp_path / "big.i"
    with open(f, "wb") as fh:
        fh.truncate(hit.MAX_FILE_BYTES + 1)
    with pytest.raises(HitIncludeError, match=f"has {hit.MAX_FILE_BYTES + 1} bytes"):
        hit.parse_file(f)


def test_not_utf8_names_the_line(tmp_path):
    f = tmp_path / "m.i"
    f.write_bytes(b"a = 1\nb = '\xe9'\n")
    with pytest.raises(
        HitIncludeError, match=r"is not UTF-8 text \(invalid .* at line 2, byte 11\)"
    ):
        hit.parse_file(f)


def test_byte_order_mark_is_accepted(tmp_path):
    bom = "\ufeff"
    (tmp_path / "inc.i").write_text(bom + "[B]\n  y = 2\n[]\n", encoding="utf-8")
    (tmp_path / "m.i").write_text(bom + "x = 1\n!include inc.i\n", encoding="utf-8")
    root = hit.parse_file(tmp_path / "m.i")
    assert root.param("x").raw == "1" and root.param("B/y").raw == "2"
    assert str(root.param("x").location).endswith("m.i:1:1")
    assert hit.parse(bom + "x = 1\n").param("x").raw == "1"
    with pytest.raises(hit.HitSyntaxError, match="unexpected character"):
        hit.parse("x = 1\n" + bom + "y = 2\n")  # only at the very start


# ------------------------------------------------------------------- value expansion
def test_value_bound_stops_an_expansion_bomb_at_its_line():
    text = "a0 = 'xxxxxxxxxxxxxxxx'\n" + "".join(
        f"a{k} = '${{a{k - 1}}}${{a{k - 1}}}'\n" for k in range(1, 64)
    )
    with pytest.raises(HitSubstitutionError) as info:
        hit.parse(text, "bomb.i")
    err = info.value
    # a20 = 16 MiB is the first past 10 MiB
    assert (err.file, err.line, err.column) == ("bomb.i", 21, 7)
    assert err.reason.startswith(f"the value of 'a20' expands beyond {hit.MAX_VALUE_BYTES} bytes")


def test_value_bound_keyword_env_and_nested_braces(monkeypatch):
    text = "a = 'xxxxxxxx'\nb = '${a}${a}'\n"
    assert hit.parse(text, max_value_bytes=16).param("b").raw == "x" * 16
    with pytest.raises(HitSubstitutionError, match=r"<string>:2:5: the value of 'b' expands"):
        hit.parse(text, max_value_bytes=15)
    monkeypatch.setenv(hit.VALUE_BYTES_ENV, "15")
    with pytest.raises(HitSubstitutionError, match="NEML2_HIT_MAX_VALUE_BYTES"):
        hit.parse(text)
    monkeypatch.setenv(hit.VALUE_BYTES_ENV, "many")
    with pytest.raises(HitError, match="NEML2_HIT_MAX_VALUE_BYTES='many' is not a positive"):
        hit.parse(text)
    monkeypatch.delenv(hit.VALUE_BYTES_ENV)
    # the argument of a brace command is bounded too, at the brace
    with pytest.raises(HitSubstitutionError) as info:
        hit.parse("a = 'xxxxxxxx'\nb = ${raw ${a} ${a} ${a}}\n", max_value_bytes=20)
    assert (info.value.line, info.value.column) == (2, 5)
    # multi-byte characters count in UTF-8 bytes
    with pytest.raises(HitSubstitutionError, match="expands beyond 10 bytes"):
        hit.parse("a = 'ééé'\nb = '${a}${a}'\n", max_value_bytes=10)


def test_total_bound_over_many_values():
    refs = "".join(f"b{k} = 'y${{a}}'\n" for k in range(20))
    text = "a = '" + "x" * 100 + "'\n" + refs
    # 20 values of 101 bytes: 2020 bytes in all
    assert hit.parse(text, max_value_bytes=300).param("b19").raw == "y" + "x" * 100
    with pytest.raises(HitSubstitutionError, match=r"expand beyond 808 bytes in all at 'b8'"):
        hit.parse(text, max_value_bytes=101)


# --------------------------------------------------------------------- the CLI reads
def test_fmt_refuses_non_regular_files_and_bounds_stdin(tmp_path, capsys, monkeypatch):
    assert main(["fmt", "/dev/zero"]) == 1
    assert "'/dev/zero' is not a regular file (a character device)" in capsys.readouterr().err
    f = tmp_path / "m.i"
    f.write_text("\ufeff[a]\n  x = 1\n[]\n", encoding="utf-8")
    assert main(["fmt", str(f)]) == 0
    assert capsys.readouterr().out == "[a]\n  x = 1\n[]\n"
    monkeypatch.setenv(hit.FILE_BYTES_ENV, "4")
    monkeypatch.setattr(sys, "stdin", io.StringIO("x = 1\n"))
    assert main(["fmt", "-"]) == 1
    assert "<stdin>:1:1: error: standard input has more than 4 characters" in (
        capsys.readouterr().err
    )


def test_check_reports_unclosed_section_at_its_header(tmp_path, capsys):
    f = tmp_path / "m.i"
    f.write_text("[Models]\n  [a]\n    x = 1\n  []\n  [b]\n    y = 2\n[]\n[Tensors]\n[]\n")
    assert main(["check", str(f)]) == 1
    assert capsys.readouterr().err.startswith(f"{f}:5:3: error: section 'b' is never closed")


def test_a_nul_in_a_file_name_is_an_error_not_a_crash():
    with pytest.raises(HitIncludeError, match=r"x\.i:1:1: invalid file name 'a\\x00b'"):
        hit.parse('!include "a\0b"\n', "x.i")
    with pytest.raises(HitIncludeError, match="cannot read"):
        hit.parse_file("a\0b")
