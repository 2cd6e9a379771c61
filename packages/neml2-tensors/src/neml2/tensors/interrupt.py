"""How a command ends on SIGINT or SIGTERM: within a second, with exit status 130 / 143,
one line on stderr, and no partial output left behind.

Every neml2 command-line tool (``neml2-run``, ``neml2-inspect``, ``neml2-syntax``,
``neml2-compile``) runs its work through :func:`run_command`. Two layers stop it:

* **In the process.** :func:`signals_raise` turns SIGINT and SIGTERM into
  :class:`Interrupted`, a ``BaseException`` raised in the main thread, so ``finally``
  blocks run and :func:`partial_output` removes what was being written; :func:`critical`
  holds a signal back while a temporary file is created or renamed, so none is orphaned.
* **The supervisor.** A Python-level handler runs only between bytecodes: a run inside
  one long C call (``sum(range(10**11))``, a huge integer power, an extension that keeps
  the GIL) never sees it, and no thread of that process can act either, since the call
  holds the GIL. So :func:`run_command` with ``supervise=True`` (what the console scripts
  pass) forks first: the child runs the command; the parent only waits. It forwards
  SIGINT and SIGTERM to the child and, when the child is still alive :data:`GRACE`
  seconds later (or at a second signal), kills it with SIGKILL, removes the partial
  outputs the child registered (the child reports them through a pipe as it creates
  them), writes the one line and exits with 128 + the signal number. Supervision needs
  ``fork`` (Linux); ``NEML2_SUPERVISE=0`` turns it off (in-process handling only).

A partial output is a path a command is writing that is not complete yet: a temporary
file next to its target, an artifact folder being built. Register it with
:func:`partial_output` for as long as it is partial; a complete output is announced
with :func:`output_written`, which the one line names (``wrote only FILE``).

This module needs only the standard library; it lives in ``neml2.tensors``, next to the
error taxonomy (:class:`~neml2.tensors.FatalError` exits 1,
:class:`~neml2.tensors.ConvergenceError` 3, :class:`Interrupted` 128 + the signal), the
lowest package every tool depends on.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import struct
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = [
    "GRACE",
    "SIGNALS",
    "Interrupted",
    "critical",
    "interruption_line",
    "make_dirs",
    "output_written",
    "partial_output",
    "run_command",
    "signals_raise",
]

#: The signals a command turns into :class:`Interrupted`.
SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Seconds the command has to unwind after a signal before the supervisor kills it.
GRACE = 0.5

#: Environment variable: ``0`` runs commands without the supervisor process.
SUPERVISE_ENV = "NEML2_SUPERVISE"


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived while :func:`signals_raise` was active.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that no ``except Exception``
    of a model or driver swallows it.
    """

    def __init__(self, signum: int):
        """Make the exception of the signal *signum*.

        Args:
            signum: The signal number (``signal.SIGINT`` or ``signal.SIGTERM``).
        """
        self.signum = int(signum)
        super().__init__(self.name)

    @property
    def name(self) -> str:
        """``SIGINT`` / ``SIGTERM``."""
        return _signal_name(self.signum)

    @property
    def exit_status(self) -> int:
        """The shell's convention: 128 + the signal number (130 SIGINT, 143 SIGTERM)."""
        return 128 + self.signum


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class _State:
    """The module's shared state (handlers are per process: one command at a time)."""

    depth = 0  # nesting of critical()
    pending: int | None = None  # a signal held back by critical()
    fired = False  # Interrupted was raised once: later signals are ignored
    #: the supervisor's pid (set in both processes when a command forks)
    supervisor: int | None = None
    #: supervisor side: the signals received (in order)
    received: list[int] = []  # noqa: RUF012  (class-level state, replaced per command)
    #: child side: the write end of the pipe to the supervisor
    channel: int | None = None
    #: the running command's name (run_command), None outside one
    command: str | None = None
    #: outputs completed during the current command, for the line
    written: list[str] = []  # noqa: RUF012
    #: partial outputs: path -> the directories created for it (outermost first)
    partial: dict[str, tuple[str, ...]] = {}  # noqa: RUF012
    #: re-entrant: a signal raised while the main thread holds it cannot deadlock it
    lock = threading.RLock()


def _handler(signum: int, frame) -> None:
    if _State.supervisor is not None and _State.supervisor == os.getpid():
        # the supervisor: its loop (_supervise), woken by the wakeup fd, forwards it
        _State.received.append(signum)
        return
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

    Returns:
        A context manager (``as`` binds nothing).
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
    (when :func:`signals_raise` is active), so the block runs whole.

    Returns:
        A context manager (``as`` binds nothing).

    Raises:
        Interrupted: at the end of the block, for a signal that came inside it.
    """
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if _State.depth == 0 and _State.pending is not None and not _State.fired:
            signum, _State.pending = _State.pending, None
            _State.fired = True
            raise Interrupted(signum)


# ---------------------------------------------------------------- partial outputs
# Messages from the child to the supervisor: a kind byte, the payload's length (4 bytes,
# big endian), the payload: file system paths joined by NUL (which no path contains).
_REGISTER, _UNREGISTER, _WRITTEN, _REPORTED = b"+", b"-", b"W", b"R"
_HEADER = struct.Struct(">cI")


def _send(kind: bytes, *paths: str) -> None:
    fd = _State.channel
    if fd is None:
        return
    payload = b"\0".join(os.fsencode(p) for p in paths)
    data = _HEADER.pack(kind, len(payload)) + payload
    with contextlib.suppress(OSError):  # the supervisor is gone: nothing to tell
        while data:
            data = data[os.write(fd, data) :]


def _remove(path: str, created: Iterable[str] = ()) -> None:
    """Remove *path* (a file, or a directory tree), then the directories of *created*
    that are empty, innermost first."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass
    for d in reversed(tuple(created)):
        with contextlib.suppress(OSError):
            os.rmdir(d)


def make_dirs(path: str | os.PathLike[str]) -> tuple[Path, ...]:
    """Create the directory *path* and its missing parents.

    Args:
        path: The directory to create.

    Returns:
        The directories this call created, outermost first (empty when *path* existed);
            pass them as ``created`` to :func:`partial_output`.

    Raises:
        OSError: A directory cannot be created (an ancestor is a file, no permission).
    """
    target = Path(os.path.abspath(path))
    missing: list[Path] = []
    p = target
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    created: list[Path] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if not d.is_dir():
                raise
            continue  # made meanwhile by someone else: not ours to remove
        created.append(d)
    if not target.is_dir():
        raise NotADirectoryError(f"'{target}' is not a directory")
    return tuple(created)


@contextlib.contextmanager
def partial_output(
    path: str | os.PathLike[str], created: Iterable[str | os.PathLike[str]] = ()
) -> Iterator[Path]:
    """Declare *path* (a file or a directory) partial for the duration of the block.

    Enter the block before creating *path*, or create it and enter the block inside one
    :func:`critical` block, so that no signal comes between the two.

    When the block ends with an exception (an error, :class:`Interrupted`), *path* is
    removed (a directory with its contents), then the directories of *created* that are
    empty. When the process is killed meanwhile (by the supervisor after a signal, or
    otherwise), the supervisor removes them. When the block ends normally nothing is
    removed: *path* is complete, or was renamed to its final place.

    Args:
        path: The file or directory being written.
        created: The directories made for it (:func:`make_dirs`), outermost first.

    Returns:
        A context manager; ``as`` binds the absolute path of *path*.
    """
    p = os.path.abspath(path)
    made = tuple(os.path.abspath(d) for d in created)
    ok = False
    try:
        with critical():  # registered whole; a signal meanwhile is raised after it
            with _State.lock:
                _State.partial[p] = made
                _send(_REGISTER, p, *made)
        yield Path(p)
        ok = True
    finally:
        if not ok:
            _remove(p, made)
        with _State.lock:
            _State.partial.pop(p, None)
            _send(_UNREGISTER, p)


def output_written(path: str | os.PathLike[str]) -> None:
    """Announce that the command completed the output *path*: the line of an interrupted
    command names it (``wrote only PATH``). Outside :func:`run_command` nothing happens.

    Args:
        path: The output file, at its final place.
    """
    if _State.command is None:
        return
    with _State.lock:
        _State.written.append(str(path))
        _send(_WRITTEN, str(path))


def interruption_line(
    prog: str, signum: int, written: Iterable[str] = (), outputs: bool = True
) -> str:
    """The one line an interrupted command writes on stderr.

    Args:
        prog: The command's name.
        signum: The signal that stopped it.
        written: The outputs it completed before the signal.
        outputs: Whether the command writes files: the line then says which it wrote.

    Returns:
        ``"PROG: interrupted (SIGINT); no result written"`` (or ``; wrote only A, B``);
            without *outputs*, ``"PROG: interrupted (SIGINT)"``.
    """
    return f"{prog}: interrupted ({_signal_name(signum)})" + _tail(written, outputs)


def _tail(written: Iterable[str], outputs: bool) -> str:
    """What the line says about the outputs: ``; no result written`` or ``; wrote only ...``."""
    if not outputs:
        return ""
    done = list(written)
    return f"; wrote only {', '.join(done)}" if done else "; no result written"


# ---------------------------------------------------------------- commands
def run_command(
    prog: str,
    body: Callable[[], int],
    *,
    supervise: bool = False,
    outputs: bool = True,
) -> int:
    """Run the command *body* so that SIGINT and SIGTERM stop it cleanly.

    *body* runs with :func:`signals_raise` active. A signal ends it with
    :class:`Interrupted`; what it registered with :func:`partial_output` is removed, one
    line (:func:`interruption_line`) is written on stderr, and the status is 130
    (SIGINT) or 143 (SIGTERM). A ``KeyboardInterrupt`` counts as SIGINT.

    With *supervise* (and ``fork`` available, ``NEML2_SUPERVISE`` not ``0``, the main
    thread), the process forks first: this call returns in the child, which runs *body*;
    the parent supervises it (see the module's description) and never returns: it ends
    the process with the child's exit status. An interrupted child ends at once after
    its line (``os._exit``: the interpreter's exit would wait for threads still at work).
    Console scripts pass ``supervise=True``; calls from Python (tests) leave it off.

    Args:
        prog: The command's name, the line's first word.
        body: The command; returns its exit status.
        supervise: Whether to run *body* in a supervised child process.
        outputs: Whether the command writes files (the line then says which it wrote).

    Returns:
        *body*'s exit status, or 128 + the signal number.
    """
    _State.command, _State.written = prog, []
    try:
        with signals_raise():
            try:
                if supervise and _can_supervise():
                    _fork(prog, outputs)  # returns in the child only
                return body()
            except (Interrupted, KeyboardInterrupt) as e:
                _State.fired = True  # a second signal changes nothing now
                signum = e.signum if isinstance(e, Interrupted) else int(signal.SIGINT)
                _report(prog, signum, outputs)
                if _State.channel is not None:
                    # a supervised child has unwound (its partial outputs are gone): end
                    # now, not after the interpreter's exit, which joins threads still
                    # at work (an Inductor compile: seconds)
                    os._exit(128 + signum)
                return 128 + signum
    finally:
        _State.command = None


def _report(prog: str, signum: int, outputs: bool) -> None:
    """Write the one line (in the process that ran the command)."""
    with _State.lock:
        line = interruption_line(prog, signum, _State.written, outputs)
        _send(_REPORTED)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _can_supervise() -> bool:
    return (
        hasattr(os, "fork")
        and sys.platform.startswith("linux")  # fork after importing torch: Linux only
        and os.environ.get(SUPERVISE_ENV, "1").strip() != "0"
        and threading.current_thread() is threading.main_thread()
        and _State.channel is None  # not inside a supervised child already
    )


def _fork(prog: str, outputs: bool) -> None:
    """Fork; return in the child. The parent supervises the child and exits."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered is written twice
    r, w = os.pipe()
    parent = os.getpid()
    _State.supervisor, _State.received = parent, []
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a process with threads (torch has one, idle)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        os.close(r)
        _State.channel = w
        _State.received = []
        _end_with_parent(parent)
        return
    status = 70  # EX_SOFTWARE: only if the supervisor itself fails
    try:
        os.close(w)
        status = _supervise(prog, pid, r, outputs)
    except BaseException as e:  # never run the command a second time in the parent
        with contextlib.suppress(Exception):
            os.write(2, f"{prog}: supervisor error: {type(e).__name__}: {e}\n".encode())
        with contextlib.suppress(Exception):
            _, st = os.waitpid(pid, 0)
            status = _exit_code(st)
    finally:
        os._exit(status)


def _end_with_parent(parent: int) -> None:
    """In the child: get SIGTERM when the supervisor dies (Linux ``PR_SET_PDEATHSIG``)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the supervisor died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _exit_code(st: int) -> int:
    if os.WIFSIGNALED(st):
        return 128 + os.WTERMSIG(st)
    return os.WEXITSTATUS(st) if os.WIFEXITED(st) else 70


class _Inbox:
    """The supervisor's view of the child: its partial outputs, what it wrote, whether
    it wrote the line itself."""

    def __init__(self, fd: int):
        self.fd = fd
        self.open = True
        self.buf = b""
        self.partial: dict[str, tuple[str, ...]] = {}
        self.written: list[str] = []
        self.reported = False

    def read(self) -> None:
        """Read what is there (the pipe is non-blocking), then act on every message."""
        while self.open:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                self.open = False
                break
            self.buf += chunk
        while len(self.buf) >= _HEADER.size:
            kind, n = _HEADER.unpack_from(self.buf)
            if len(self.buf) < _HEADER.size + n:
                break
            payload = self.buf[_HEADER.size : _HEADER.size + n]
            self.buf = self.buf[_HEADER.size + n :]
            paths = [os.fsdecode(p) for p in payload.split(b"\0")] if payload else []
            if kind == _REGISTER and paths:
                self.partial[paths[0]] = tuple(paths[1:])
            elif kind == _UNREGISTER and paths:
                self.partial.pop(paths[0], None)
            elif kind == _WRITTEN and paths:
                self.written.append(paths[0])
            elif kind == _REPORTED:
                self.reported = True

    def clean(self) -> None:
        """Remove the partial outputs the child left, newest first."""
        for path, made in reversed(list(self.partial.items())):
            _remove(path, made)
        self.partial.clear()


def _supervise(prog: str, pid: int, fd: int, outputs: bool) -> int:
    """The parent's loop: wait for the child, forward signals, stop it after GRACE."""
    os.set_blocking(fd, False)
    inbox = _Inbox(fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)  # a signal ends select()
    try:
        pidfd: int | None = os.pidfd_open(pid)  # readable when the child ends (Linux 5.3+)
    except (AttributeError, OSError):
        pidfd = None
    first: int | None = None  # the first SIGINT / SIGTERM
    deadline: float | None = None
    seen = 0
    extended = killed = False
    while True:
        count = len(_State.received)  # (the handler appends meanwhile)
        if count > seen:
            new, seen = _State.received[seen:count], count
            for s in new:
                with contextlib.suppress(OSError):
                    os.kill(pid, s)
            now = time.monotonic()
            if first is None:
                first, deadline = new[0], now + GRACE
                if len(new) > 1:
                    deadline = now  # a second signal: stop now
            else:
                deadline = now
        done, st = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            break
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            inbox.read()
            if inbox.reported and not extended and seen < 2:
                # it wrote the line and is exiting: a little more time to end by itself
                deadline, extended = now + GRACE, True
            else:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                _, st = os.waitpid(pid, 0)
                killed = True
                break
        timeout = None if deadline is None else max(0.0, deadline - now)
        if pidfd is None:  # no pidfd: poll waitpid
            timeout = 0.05 if timeout is None else min(timeout, 0.05)
        fds = [wake_r] + ([fd] if inbox.open else []) + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(fds, [], [], timeout)
        if wake_r in ready:
            with contextlib.suppress(OSError):
                while os.read(wake_r, 512):
                    pass
        if fd in ready:
            inbox.read()
    inbox.read()
    signal.set_wakeup_fd(-1)
    if os.WIFSIGNALED(st) or inbox.partial:
        inbox.clean()  # what the child was writing when it died (or left behind)
    if killed:
        assert first is not None
        if not inbox.reported:
            _line(interruption_line(prog, first, inbox.written, outputs))
        return 128 + first
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        if not inbox.reported:
            if sig in SIGNALS:
                _line(interruption_line(prog, sig, inbox.written, outputs))
            else:  # a crash, the OOM killer, kill -9 of the child
                _line(f"{prog}: killed by {_signal_name(sig)}" + _tail(inbox.written, outputs))
        return 128 + sig
    return _exit_code(st)


def _line(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (text + "\n").encode(errors="replace"))
