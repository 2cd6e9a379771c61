"""The row format and runner of the bad-input tables (one row per bad input).

Each ``test_*.py`` here holds a list of rows and one parametrized test that runs
them with :func:`check_row`. A row says what is fed in, what must come out (an
exit code of a command-line tool, or an exception type of an API call) and a
fragment of the message the user sees. Rows never pass by accident: a row that
expects an error fails when none comes, when another code or type comes, or when
the message lacks the fragment.

Two kinds of row:

* :class:`Cli` runs a command (``neml2-run``, ``neml2-hit``, ...) in-process by
  its ``main(argv)`` function, in a fresh temporary directory where its
  ``files`` were written first, and captures stdout and stderr;
* :class:`Api` calls a Python function with the temporary directory and
  expects an exception.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HELLO = Path(__file__).resolve().parents[2] / "examples" / "hello"


@dataclass(frozen=True)
class Cli:
    """A command-line run that must end with ``exit`` and print ``fragment``.

    Attributes:
        id: short unique name of the row (the pytest id)
        main: the tool's ``main(argv) -> int`` (e.g. ``neml2.drivers._cli.run_main``)
        argv: its arguments; ``{tmp}`` and ``{hello}`` are replaced by the temporary
            directory and the shipped ``examples/hello`` folder
        exit: the exit status it must return
        fragment: text (a regular expression when ``regex``) that must occur in
            stderr + stdout, case-sensitive
        files: ``{name: text}`` written into the temporary directory first
            (``bytes`` values are written as they are)
        regex: whether ``fragment`` is a regular expression
        absent: ``(path relative to tmp, ...)`` that must not exist afterwards
        prepare: ``prepare(tmp)`` run after ``files`` are written (to make a
            gold file, a FIFO, a read-only folder, ...)
    """

    id: str
    main: Callable[[list[str]], int]
    argv: tuple[str, ...]
    exit: int
    fragment: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    regex: bool = False
    absent: tuple[str, ...] = ()
    prepare: Callable[[Path], object] | None = None


@dataclass(frozen=True)
class Api:
    """A Python call ``call(tmp)`` that must raise ``raises`` with ``fragment`` in its message."""

    id: str
    call: Callable[[Path], object]
    raises: type[BaseException]
    fragment: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    regex: bool = False
    prepare: Callable[[Path], object] | None = None


def _write(tmp: Path, files: Mapping[str, str | bytes]) -> None:
    for name, text in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def _has(text: str, fragment: str, regex: bool) -> bool:
    return re.search(fragment, text) is not None if regex else fragment in text


def _expand(arg: str, tmp: Path) -> str:
    return arg.replace("{tmp}", str(tmp)).replace("{hello}", str(HELLO))


def check_row(row: Cli | Api, tmp: Path) -> None:
    """Run one row in the empty directory *tmp* and assert its expectations."""
    _write(tmp, row.files)
    if row.prepare is not None:
        row.prepare(tmp)
    if isinstance(row, Cli):
        out, err = io.StringIO(), io.StringIO()
        argv = [_expand(a, tmp) for a in row.argv]
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = row.main(argv)
                except SystemExit as e:  # argparse errors exit through SystemExit
                    code = e.code if isinstance(e.code, int) else 1
        finally:
            os.chdir(cwd)
        text = err.getvalue() + out.getvalue()
        assert code == row.exit, f"exit {code}, expected {row.exit}; output:\n{text}"
        if code not in (0, 2):  # 2: argparse prints its usage above the error line
            assert_one_error_line(err.getvalue())
        assert _has(text, row.fragment, row.regex), (
            f"message lacks {row.fragment!r}; output:\n{text}"
        )
        for rel in row.absent:
            assert not (tmp / rel).exists(), f"{rel} exists after the run"
        return
    with pytest.raises(row.raises) as info:
        row.call(tmp)
    message = str(info.value)
    assert _has(message, row.fragment, row.regex), (
        f"{type(info.value).__name__} message lacks {row.fragment!r}: {message}"
    )


def assert_one_error_line(stderr: str) -> None:
    """A command that failed printed its error on one line of *stderr*, without a
    traceback (warnings, ``prog: warning: ...``, may come before it)."""
    assert "Traceback" not in stderr, f"a traceback on stderr:\n{stderr}"
    lines = [ln for ln in stderr.splitlines() if ln.strip() and ": warning: " not in ln]
    assert len(lines) <= 1, f"{len(lines)} lines on stderr, expected one error line:\n{stderr}"


def ids(rows) -> list[str]:
    """The pytest ids of *rows*, checked unique."""
    names = [r.id for r in rows]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"duplicate row ids: {dup}"
    return names
