"""The ``neml2-hit`` command-line tool.

``neml2-hit check [-o PATH=VALUE]... FILE...``
    parse each file (includes and substitutions too) and report every error as
    ``file:line:column: error: reason``; exit status 1 if any file failed.
    An override must name an existing block (``+PATH=VALUE`` creates it).
``neml2-hit fmt [--check | -i] FILE...``
    print the canonical layout of each file (``-``: standard input; only the
    syntax is checked, ``${...}`` is not evaluated), rewrite
    files in place (``-i/--in-place``: atomically, a failed write leaves the file as
    it was), or only report files that would change (``--check``, exit status 1 if any
    would).

Every error is one line (``-v/--verbose``: with the Python traceback of an unforeseen
one). Exit status 2: a bad command line. Only regular files are read, up to
``$NEML2_HIT_MAX_FILE_BYTES`` (64 MiB by default; standard input too).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
import traceback
from collections.abc import Sequence

from ._cli_support import add_version_argument, error_line
from ._errors import HitError, Location
from ._limits import FILE_BYTES_ENV, file_limit
from ._parser import _read, parse_file, parse_tree
from ._render import format_node

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="neml2-hit", description="Check and format HIT input files.")
    add_version_argument(ap, "neml2-hit")
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="on an error, also print its Python traceback"
    )
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="parse files and report errors")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument(
        "-o",
        "--override",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="apply a command-line override before checking (repeatable). PATH must name an "
        "existing block (a new parameter may join a block that has parameters; a top-level "
        "NAME=VALUE may define a name the file reads as ${NAME}); "
        "'+PATH=VALUE' creates missing blocks and parameters",
    )
    fmt = sub.add_parser("fmt", help="rewrite files in the canonical layout")
    fmt.add_argument("files", nargs="+", metavar="FILE", help="files ('-' for stdin)")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    return ap


def _error(err: HitError) -> None:
    print(f"{err.file}:{err.line}:{err.column}: error: {err.reason}", file=sys.stderr)


def _check(files: Sequence[str], overrides: Sequence[str]) -> int:
    status = 0
    for f in files:
        try:
            parse_file(f, overrides)
        except HitError as e:
            _error(e)
            status = 1
    return status


def _fmt(files: Sequence[str], check: bool, in_place: bool) -> int:
    status = 0
    for f in files:
        try:
            if f == "-":
                name = "<stdin>"
                limit = file_limit(None, Location(name, 1, 1))
                text = sys.stdin.read(limit + 1)
                if not len(text) <= limit:
                    raise HitError(
                        Location(name, 1, 1),
                        f"standard input has more than {limit} characters ({FILE_BYTES_ENV})",
                    )
            else:
                name = f
                text = _read(f, None, file_limit(None, Location(name, 1, 1)))
            formatted = format_node(parse_tree(text, name))
        except HitError as e:
            _error(e)
            status = 1
            continue
        except (OSError, UnicodeDecodeError) as e:
            print(
                f"{f}:1:1: error: cannot read: {getattr(e, 'strerror', None) or e}", file=sys.stderr
            )
            status = 1
            continue
        if check:
            if formatted != text:
                print(f"would reformat {f}", file=sys.stderr)
                status = 1
        elif in_place and f != "-":
            if formatted != text:
                try:
                    _rewrite(f, formatted)
                except OSError as e:
                    print(f"{f}:1:1: error: cannot write: {e.strerror or e}", file=sys.stderr)
                    status = 1
        else:
            sys.stdout.write(formatted)
    return status


def _rewrite(path: str, text: str) -> None:
    """Replace the file *path* (a symlink: the file it names) by *text*, atomically: a
    temporary file beside it, renamed over it once written, so a full disk or any other
    failure leaves the file as it was. A folder that takes no new file (a writable file
    in a read-only folder) gets the file rewritten in place, as before."""
    target = os.path.realpath(path)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".tmp"
        )
    except PermissionError:
        with open(target, "r+", encoding="utf-8") as fh:
            fh.write(text)
            fh.truncate()
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool with *argv* (default: ``sys.argv[1:]``); return the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args.files, args.override)
        return _fmt(args.files, args.check, args.in_place)
    except BrokenPipeError:
        raise
    except Exception as e:  # a bug or an unforeseen failure: still one line
        if args.verbose:
            traceback.print_exc(file=sys.stderr)
        hint = "" if args.verbose else " (run with --verbose for the traceback)"
        print(f"neml2-hit: error: {error_line(e)}{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
