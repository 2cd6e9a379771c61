"""Files the drivers write (``save_as``, ``--plot``): checked first, written atomically.

* :func:`check_target` runs before a run starts: the target must be (or become)
  a regular file in a writable directory; a directory, FIFO, device or socket
  (or a symlink to one), the input file itself, or a path under a regular file
  is an error naming the option.
* :func:`atomic_write` writes a temporary file next to the target, gives it the
  user's umask, and renames it over the target (``os.replace``): readers see the
  old file or the whole new one, never a part. The temporary file never outlives
  the call, whatever ends it (an error, SIGINT, SIGTERM): it is a
  :func:`neml2.tensors.interrupt.partial_output`, which the command's supervisor
  removes even when the run is killed inside a long C call.

Signals (``Interrupted``, ``signals_raise``, ``critical``) are handled by
:mod:`neml2.tensors.interrupt`, shared with ``neml2-compile``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from neml2.hit import file_kind
from neml2.tensors import FatalError
from neml2.tensors.interrupt import critical, output_written, partial_output


def check_target(
    raw: str,
    what: str,
    base: Path | None = None,
    protect: Sequence[tuple[Path, str]] = (),
) -> Path:
    """Check that the output path *raw* can receive a new file; return the path to replace.

    Args:
        raw: the path as the user wrote it
        what: names the option in errors (``"t.i:12:5: save_as"``, ``"--plot"``)
        base: the directory a relative *raw* resolves against (default: the current one)
        protect: ``(path, description)`` of files the output must not overwrite

    A symlink is followed: the file it points to is the one replaced, the link stays.
    A missing parent directory is fine when it can be created: the nearest existing
    ancestor must be a writable directory. Raises :class:`FatalError` naming *what*.
    """
    if not raw.strip():
        raise FatalError(f"{what}: the path is empty")
    if raw.endswith("/") or (os.altsep is not None and raw.endswith(os.altsep)):
        raise FatalError(f"{what}: '{raw}' ends with '/': it names a directory, not a file")
    path = Path(raw)
    if not path.is_absolute():
        path = (base if base is not None else Path.cwd()) / path
    path = Path(os.path.abspath(path))
    target = Path(os.path.realpath(path)) if os.path.islink(path) else path
    shown = f"'{path}'" if target == path else f"'{path}' (a symlink to '{target}')"
    try:
        st: os.stat_result | None = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # the parent check below says why, if anything is wrong
    except OSError as e:
        raise FatalError(f"{what}: cannot inspect {shown}: {e.strerror or e}") from None
    if st is not None:
        kind = file_kind(st.st_mode)
        if kind is not None:
            raise FatalError(
                f"{what}: {shown} is {kind}, not a regular file: refusing to write there"
            )
    for other, description in protect:
        same = os.path.realpath(other) == os.path.realpath(target)
        if not same and st is not None:
            with contextlib.suppress(OSError):
                same = os.path.samestat(st, os.stat(other))
        if same:
            raise FatalError(f"{what}: {shown} is {description}; writing there would overwrite it")
    parent = target.parent
    existing = parent
    while not os.path.exists(existing) and existing != existing.parent:
        existing = existing.parent
    if not os.path.isdir(existing):
        raise FatalError(
            f"{what}: cannot write '{target.name}' in '{parent}': '{existing}' is not a directory"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        to = "" if existing == parent else f" (to create '{parent}' in it)"
        raise FatalError(f"{what}: directory '{existing}' is not writable{to}")
    return target


def umask() -> int:
    """The process's umask (read without changing it where ``/proc`` tells it)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


def atomic_write(
    path: Path,
    write: Callable[[str], object],
    what: str,
    written: Callable[[Path], object] | None = None,
) -> None:
    """Create or replace *path* with what ``write(tmp)`` writes into the file ``tmp``.

    ``tmp`` lies in the same directory (created if missing); once written it gets
    mode ``0o666 & ~umask`` and is renamed over *path*; ``written(path)`` is called
    right after the rename, before a signal that came meanwhile is raised, and the
    running command learns of the file (:func:`neml2.tensors.interrupt.output_written`).
    On any failure or signal before the rename the temporary file is removed (it is a
    partial output while it exists) and *path* is untouched. OS errors become a
    :class:`FatalError` naming *what*.
    """
    try:
        with contextlib.ExitStack() as partial:
            with critical():  # the file exists only once registered as partial
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                os.close(fd)
                partial.enter_context(partial_output(tmp))
            write(tmp)
            os.chmod(tmp, 0o666 & ~umask())
            with critical():
                os.replace(tmp, path)
                if written is not None:
                    written(path)
                output_written(path)
    except OSError as e:
        raise FatalError(f"{what}: cannot write '{path}': {e.strerror or e}") from e


def save_atomically(
    path: Path, obj: object, what: str, written: Callable[[Path], object] | None = None
) -> None:
    """:func:`atomic_write` of ``torch.save(obj)`` (through :func:`save_torch`) to *path*.

    Every failure is a one-line :class:`FatalError` naming *what* and *path*: an OS
    error with its reason ("No space left on device"), an error of torch's
    serializer with the first line of its message.
    """
    try:
        atomic_write(path, lambda tmp: save_torch(obj, tmp), what, written)
    except RuntimeError as e:  # torch's C++ side; its messages span lines
        first = next((line for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise FatalError(f"{what}: cannot write '{path}': {first.strip()}") from e


def save_torch(obj: object, tmp: str) -> None:
    """``torch.save(obj, tmp)``, serialized in memory first and written (and synced)
    with plain file calls: a full disk is then an :class:`OSError` with the OS reason
    ("No space left on device"), which :func:`atomic_write` reports on one line,
    where torch's own file writer raises ``RuntimeError: basic_ios::clear``."""
    import io

    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    with buf.getbuffer() as view, open(tmp, "wb") as f:
        f.write(view)
        f.flush()
        os.fsync(f.fileno())
