"""What every neml2 command-line tool shares: ``--version`` and the INPUT-path check.

Lives in ``neml2.hit`` because it is the one package every tool depends on
(``neml2-hit`` itself, ``neml2-run``/``-inspect``/``-syntax``, ``neml2-compile``).
It must not import torch: versions come from ``importlib.metadata``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from importlib import metadata

from ._limits import file_kind

__all__ = [
    "PACKAGES",
    "add_version_argument",
    "error_line",
    "file_problem",
    "input_problem",
    "versions",
]

#: The six distributions of the workspace, in layering order.
PACKAGES = (
    "neml2-tensors",
    "neml2-hit",
    "neml2-models",
    "neml2-drivers",
    "neml2-compile",
    "neml2-aoti-runtime",
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions(prog: str, dist: str) -> str:
    """The ``--version`` text of the tool *prog* shipped by the distribution *dist*.

    First line ``prog VERSION``, then one line per neml2 distribution ("not
    installed" for an absent one), torch's and Python's.
    """
    rows = [(name, _version(name)) for name in (*PACKAGES, "torch")]
    rows.append(("python", platform.python_version()))
    width = max(len(name) for name, _ in rows)
    lines = [f"{prog} {_version(dist)}"]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    return "\n".join(lines) + "\n"


class _VersionAction(argparse.Action):
    """``--version``: print :func:`versions` on stdout and exit 0 (argparse's own
    version action re-wraps the text into one paragraph)."""

    def __init__(self, option_strings, dest, text: str = "", help=None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.text = text

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(self.text)
        sys.stdout.flush()
        parser.exit(0)


def add_version_argument(parser: argparse.ArgumentParser, dist: str) -> None:
    """Give *parser* a ``--version`` option printing :func:`versions`."""
    parser.add_argument(
        "--version",
        action=_VersionAction,
        text=versions(parser.prog, dist),
        help="print the versions of the neml2 packages, torch and Python, and exit",
    )


def input_problem(path: str | os.PathLike[str], arg: str = "INPUT") -> str | None:
    """Why *path*, given as the command-line argument *arg*, cannot be a HIT file.

    Only ``stat`` is used, never ``open``, so a FIFO cannot block. Returns None for
    a regular file (a symlink to one included) and for a path that cannot be
    inspected (absent, no permission): the reader reports those with its own words.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    kind = file_kind(st.st_mode)
    if kind is None:
        return None
    return f"{arg} '{os.fspath(path)}' is not a regular file ({kind}), not a HIT file"


def file_problem(path: str | os.PathLike[str], what: str) -> str | None:
    """Why *path*, a file the user named (*what*: ``"reference file"``, ``"CSV file"``),
    cannot be read as a regular file; None when it can be opened for reading.

    Only ``stat`` is used, never ``open``, so a FIFO cannot block. The reasons:
    ``"<what> not found: PATH"``; ``"<what> PATH: 'DIR' is not a directory"`` (a
    path through a regular file); ``"<what> PATH is a directory, not a regular
    file"`` (a FIFO, a device: likewise); ``"cannot read <what> PATH: <OS reason>"``.
    """
    shown = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return f"{what} not found: {shown}"
    except NotADirectoryError:
        parent = os.path.dirname(os.path.abspath(shown))
        while parent and not os.path.exists(parent) and parent != os.path.dirname(parent):
            parent = os.path.dirname(parent)
        return f"{what} {shown}: '{parent}' is not a directory"
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        return f"cannot read {what} {shown}: {getattr(e, 'strerror', None) or e}"
    kind = file_kind(st.st_mode)
    if kind is not None:
        return f"{what} {shown} is {kind}, not a regular file"
    if not os.access(path, os.R_OK):
        return f"cannot read {what} {shown}: Permission denied"
    return None


def error_line(e: BaseException) -> str:
    """An unforeseen exception *e* on one line, for a tool's ``prog: error: ...``:
    ``FILE: reason`` for an OS error (``'/x': No space left on device``), else
    ``Type: first line of the message``."""
    if isinstance(e, OSError) and e.strerror:
        where = f"'{e.filename}': " if e.filename is not None else ""
        return f"{where}{e.strerror}"
    first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
    return f"{type(e).__name__}: {first}" if first else type(e).__name__
