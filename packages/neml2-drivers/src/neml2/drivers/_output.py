"""Files the drivers write (``save_as``, ``--plot``): checked first, written atomically.

* :func:`check_target` runs before a run starts: the target must be (or become)
  a regular file in a writable directory; a directory, FIFO, device or socket
  (or a symlink to one), the input file itself, or a path under a regular file
  is an error naming the option.
* :func:`atomic_write` writes a temporary file next to the target, gives it the
  user's umask, and renames it over the target (``os.replace``): readers see the
  old file or the whole new one, never a part. The temporary file never outlives
  the call, whatever ends it (an error, SIGINT, SIGTERM).
* :func:`signals_raise` (used by ``neml2-run`` for the run's duration) turns
  SIGINT and SIGTERM into :class:`Interrupted`; :func:`critical` holds one back
  while a temporary file is being created or renamed, so none can be orphaned.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from neml2.hit import file_kind
from neml2.tensors import FatalError

#: The signals ``neml2-run`` turns into :class:`Interrupted`.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived while :func:`signals_raise` was active.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that no ``except Exception``
    of a model or driver swallows it.
    """

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(self.name)

    @property
    def name(self) -> str:
        """``SIGINT`` / ``SIGTERM``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention: 128 + the signal number (130 SIGINT, 143 SIGTERM)."""
        return 128 + self.signum


class _State:
    """The handlers' shared state (one run at a time: handlers are per process)."""

    depth = 0  # nesting of critical()
    pending: int | None = None  # a signal held back by critical()
    fired = False  # Interrupted was raised once: later signals are ignored


def _handler(signum: int, frame) -> None:
    if _State.fired:
        return
    if _State.depth > 0:
        _State.pending = signum
        return
    _State.fired = True
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """For the duration of the block, SIGINT and SIGTERM raise :class:`Interrupted`
    (the first one only); the previous handlers come back afterwards.

    Outside the main thread (where Python cannot install handlers) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}
    _State.depth, _State.pending, _State.fired = 0, None, False
    try:
        for sig in SIGNALS:
            previous[sig] = signal.signal(sig, _handler)
        yield
    finally:
        for sig, old in previous.items():
            # None: the old handler was not installed from Python; SIG_DFL is the closest
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        _State.pending = None


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A signal arriving inside the block is raised as :class:`Interrupted` at its end
    (when :func:`signals_raise` is active), so the block runs whole."""
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if _State.depth == 0 and _State.pending is not None and not _State.fired:
            signum, _State.pending = _State.pending, None
            _State.fired = True
            raise Interrupted(signum)


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
    right after the rename, before a signal that came meanwhile is raised. On any
    failure or signal before the rename the temporary file is removed and *path*
    is untouched. OS errors become a :class:`FatalError` naming *what*.
    """
    tmp: str | None = None
    done = False
    try:
        with critical():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(fd)
        write(tmp)
        os.chmod(tmp, 0o666 & ~umask())
        with critical():
            os.replace(tmp, path)
            done = True
            if written is not None:
                written(path)
    except OSError as e:
        raise FatalError(f"{what}: cannot write '{path}': {e.strerror or e}") from e
    finally:
        if tmp is not None and not done:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
