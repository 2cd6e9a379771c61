"""Size bounds of the reader: how large a file, and a substituted value, may be.

Each bound has a default, an environment variable that replaces the default,
and a keyword of :func:`neml2.hit.parse` / :func:`neml2.hit.parse_file` that
replaces both:

* the size of each file read (the input and every ``!include``):
  ``max_file_bytes``, ``NEML2_HIT_MAX_FILE_BYTES``, 64 MiB;
* the UTF-8 size of each value that contains ``${...}``, once substituted:
  ``max_value_bytes``, ``NEML2_HIT_MAX_VALUE_BYTES``, 10 MiB. All such values
  of one parse together may take at most :data:`TOTAL_FACTOR` times that.
"""

from __future__ import annotations

import os
import stat

from ._errors import HitError, Location

__all__ = [
    "FILE_BYTES_ENV",
    "MAX_FILE_BYTES",
    "MAX_VALUE_BYTES",
    "TOTAL_FACTOR",
    "VALUE_BYTES_ENV",
    "file_kind",
    "file_limit",
    "nbytes",
    "value_limit",
]

MAX_FILE_BYTES = 64 * 2**20
"""Default bound on the size of one input file, in bytes (64 MiB)."""
MAX_VALUE_BYTES = 10 * 2**20
"""Default bound on one value after ``${...}`` substitution, in bytes of UTF-8 (10 MiB)."""
#: The substituted values of one parse together: at most this many value bounds.
TOTAL_FACTOR = 8
FILE_BYTES_ENV = "NEML2_HIT_MAX_FILE_BYTES"
"""The environment variable that replaces :data:`MAX_FILE_BYTES` (a positive integer)."""
VALUE_BYTES_ENV = "NEML2_HIT_MAX_VALUE_BYTES"
"""The environment variable that replaces :data:`MAX_VALUE_BYTES` (a positive integer)."""


def _limit(explicit: int | None, keyword: str, env: str, default: int, at: Location) -> int:
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, int) or not explicit > 0:
            raise ValueError(f"{keyword} must be a positive integer (bytes), not {explicit!r}")
        return explicit
    text = os.environ.get(env, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise HitError(at, f"environment variable {env}={text!r} is not a positive integer (bytes)")
    return value


def file_limit(explicit: int | None, at: Location) -> int:
    """The file-size bound: *explicit*, else ``$NEML2_HIT_MAX_FILE_BYTES``, else 64 MiB."""
    return _limit(explicit, "max_file_bytes", FILE_BYTES_ENV, MAX_FILE_BYTES, at)


def value_limit(explicit: int | None, at: Location) -> int:
    """The value bound: *explicit*, else ``$NEML2_HIT_MAX_VALUE_BYTES``, else 10 MiB."""
    return _limit(explicit, "max_value_bytes", VALUE_BYTES_ENV, MAX_VALUE_BYTES, at)


def nbytes(text: str) -> int:
    """The UTF-8 size of *text* (cheap for ASCII)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def file_kind(mode: int) -> str | None:
    """Name the kind of a file that is not a regular file.

    The reader refuses everything but regular files, and the command-line tools
    say why with this.

    Args:
        mode: a file mode, as in ``os.stat(path).st_mode``.

    Returns:
        ``None`` for a regular file; otherwise the kind in words:
            ``"a directory"``, ``"a FIFO"``, ``"a character device"``,
            ``"a block device"``, ``"a socket"`` or ``"a special file"``.
    """
    if stat.S_ISREG(mode):
        return None
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"
