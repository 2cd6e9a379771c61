"""Bad input, the CLI sweep: every tool's error is one line naming the file, option or
variable, with a non-zero exit and no traceback (``check_row`` asserts the one line).

One table over ``neml2-run``, ``neml2-inspect``, ``neml2-syntax``, ``neml2-compile``
and ``neml2-hit``, fed a missing file, a path through a regular file (``t.i/x``: this
blocks a read even for root, where ``chmod 000`` does not), a binary or an empty file,
a bad driver or model name, a bad ``--dtype`` / ``--device``, and output folders that
cannot take files (a regular file, a folder under one). The tools' own
``-v/--verbose`` (the traceback of an unforeseen error) is checked below the table.

The last rows pass on purpose (exit 0): the harness can tell.
"""

from __future__ import annotations

import errno
import os

import pytest
from _table import HELLO, Cli, assert_one_error_line, check_row, ids

from neml2.compiler._cli import main as compile_main
from neml2.drivers._cli import inspect_main, run_main, syntax_main
from neml2.hit import _cli as hit_cli
from neml2.hit._cli import main as hit_main

BINARY = b"\xff\xfe\x00binary\x80"
GOOD = {"good.i": (HELLO / "input.i").read_text()}
#: the rows that feed one bad INPUT to every tool that reads one
READERS = (
    ("run", run_main, ("driver",)),
    ("inspect", inspect_main, ("elasticity",)),
    ("compile", compile_main, ("elasticity", "-o", "out", "--no-cache", "-q")),
    ("hit-check", lambda argv: hit_main(["check", *argv]), ()),
    ("hit-fmt", lambda argv: hit_main(["fmt", *argv]), ()),
)


def _each_reader(what: str, path: str, fragment: str, files=None) -> list[Cli]:
    return [
        Cli(f"{name}-{what}", main, (path, *rest), 1, fragment, files=files or {})
        for name, main, rest in READERS
    ]


ROWS = [
    *_each_reader("missing-file", "none.i", "none.i"),
    *_each_reader("path-through-a-file", "good.i/x", "'good.i/x': Not a directory", GOOD),
    *_each_reader("binary-file", "bin.i", "'bin.i' is not UTF-8 text", {"bin.i": BINARY}),
    Cli(
        "run-empty-file",
        run_main,
        ("empty.i", "driver"),
        1,
        "empty.i: no [Drivers] section; cannot run 'driver'",
        files={"empty.i": ""},
    ),
    Cli(
        "compile-empty-file",
        compile_main,
        ("empty.i", "elasticity", "-o", "out"),
        1,
        "empty.i: no [Models] section; cannot load model 'elasticity'",
        files={"empty.i": ""},
    ),
    Cli(
        "run-unknown-driver",
        run_main,
        ("{hello}/unit.i", "nodriver"),
        1,
        "no block named 'nodriver' in [Drivers]",
    ),
    Cli(
        "inspect-unknown-model",
        inspect_main,
        ("good.i", "elastcity"),
        1,
        "no block named 'elastcity' in [Models] (did you mean 'elasticity'?)",
        files=GOOD,
    ),
    Cli(
        "compile-unknown-model",
        compile_main,
        ("good.i", "elastcity", "-o", "out"),
        1,
        "no block named 'elastcity' in [Models]",
        files=GOOD,
    ),
    Cli(
        "syntax-unknown-types",
        syntax_main,
        ("NoSuchType", "AlsoNot"),
        1,
        "neml2-syntax: error: unknown type 'NoSuchType'; unknown type 'AlsoNot'; list every "
        "type with: neml2-syntax --brief",
    ),
    Cli(
        "compile-bad-dtype",
        compile_main,
        ("good.i", "elasticity", "--dtype", "float16", "-o", "out"),
        1,
        "--dtype 'float16': choose from float64, float32",
        files=GOOD,
    ),
    Cli(
        "compile-bad-device",
        compile_main,
        ("good.i", "elasticity", "--device", "tpu", "-o", "out"),
        1,
        "--device 'tpu': choose from cpu, cuda",
        files=GOOD,
    ),
    Cli(
        "compile-output-dir-is-a-file",
        compile_main,
        ("good.i", "elasticity", "-o", "afile"),
        2,
        "--output-dir 'afile' is a regular file, not a directory",
        files={**GOOD, "afile": "x"},
    ),
    Cli(
        "compile-output-dir-under-a-file",
        compile_main,
        ("good.i", "elasticity", "-o", "afile/out"),
        2,
        r"--output-dir 'afile/out': '\S*afile' is not a directory",
        files={**GOOD, "afile": "x"},
        regex=True,
    ),
    Cli(
        "compile-output-dir-is-a-device",
        compile_main,
        ("good.i", "elasticity", "-o", "/dev/null"),
        2,
        "--output-dir '/dev/null' is a character device, not a directory",
        files=GOOD,
    ),
    Cli(
        # checked before the compile, not after it (where the cache is filled)
        "compile-cache-dir-is-a-file",
        compile_main,
        ("good.i", "elasticity", "-o", "out", "--cache-dir", "afile"),
        2,
        "--cache-dir 'afile' is a regular file, not a directory",
        files={**GOOD, "afile": "x"},
        absent=("out",),
    ),
    Cli(
        "run-missing-arguments-names-only-the-required",
        run_main,
        (),
        2,
        r"the following arguments are required: input, driver\n",
        regex=True,
    ),
    Cli(
        # --no-cache: the cache folder is not used, so not checked (the next error shows)
        "compile-cache-dir-ignored-with-no-cache",
        compile_main,
        ("good.i", "elasticity", "--dtype", "float16", "--cache-dir", "afile", "--no-cache"),
        1,
        "--dtype 'float16'",
        files={**GOOD, "afile": "x"},
    ),
    # ------------------------------------------------------------ pass on purpose
    Cli(
        "run-overrides-after-an-option",
        run_main,
        ("{hello}/unit.i", "unit", "--quiet", "Models/elasticity/coefficients='200e3 0.3'"),
        0,
        "",
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)


# ---------------------------------------------------------------- -v / --verbose


def _broken_parse(*args, **kwargs):
    raise KeyError("a bug")


@pytest.mark.parametrize(
    ("main", "argv", "prog"),
    [
        (run_main, ["good.i", "driver"], "neml2-run"),
        (inspect_main, ["good.i", "elasticity"], "neml2-inspect"),
        (compile_main, ["good.i", "elasticity", "-o", "out", "--no-cache"], "neml2-compile"),
        (hit_main, ["check", "good.i"], "neml2-hit"),
    ],
    ids=["run", "inspect", "compile", "hit"],
)
def test_an_unforeseen_error_is_one_line_and_verbose_shows_the_traceback(
    main, argv, prog, tmp_path, monkeypatch, capsys
):
    """A bug deep inside (here: the HIT parser raising KeyError) is one line; with
    ``-v`` / ``--verbose`` its traceback comes first."""
    from neml2 import hit

    (tmp_path / "good.i").write_text(GOOD["good.i"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hit, "parse_file", _broken_parse)
    monkeypatch.setattr(hit_cli, "parse_file", _broken_parse)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert_one_error_line(err)
    assert f"{prog}: error: KeyError: 'a bug' (run with --verbose for the traceback)" in err
    for flag in ("-v", "--verbose"):
        assert main([flag, *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):"), err
        assert err.splitlines()[-1] == f"{prog}: error: KeyError: 'a bug'"


def test_hit_fmt_in_place_on_a_full_disk_keeps_the_file(tmp_path, monkeypatch, capsys):
    """``neml2-hit fmt -i``: the file is replaced whole or not at all; a full disk is
    one line with the OS reason."""
    ugly = "[a]\nx=1\n[]\n"
    (tmp_path / "u.i").write_text(ugly)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(hit_cli.os, "replace", full)
    assert hit_main(["fmt", "-i", str(tmp_path / "u.i")]) == 1
    err = capsys.readouterr().err
    assert_one_error_line(err)
    assert f"{tmp_path / 'u.i'}:1:1: error: cannot write: No space left on device" in err
    assert (tmp_path / "u.i").read_text() == ugly
    assert sorted(p.name for p in tmp_path.iterdir()) == ["u.i"]  # no temporary left
