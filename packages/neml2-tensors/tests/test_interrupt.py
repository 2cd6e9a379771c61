"""neml2.tensors.interrupt: SIGINT / SIGTERM end a command within a second, with one
line on stderr and no partial output, even inside a C call that holds the GIL."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from neml2.tensors import Interrupted as Exported
from neml2.tensors import interrupt
from neml2.tensors.interrupt import (
    Interrupted,
    critical,
    make_dirs,
    output_written,
    partial_output,
    run_command,
    signals_raise,
)

POSIX = hasattr(os, "fork") and sys.platform.startswith("linux")


def _spin() -> None:
    for _ in range(1000):  # the Python-level handler runs between bytecodes
        pass


# ---------------------------------------------------------------- in the process


def test_the_exception_is_exported_with_the_error_taxonomy():
    assert Exported is Interrupted and issubclass(Interrupted, BaseException)
    assert not issubclass(Interrupted, Exception)


def test_signals_raise_once_and_restore_the_handlers():
    before = {s: signal.getsignal(s) for s in interrupt.SIGNALS}
    with pytest.raises(Interrupted) as e, signals_raise():
        os.kill(os.getpid(), signal.SIGTERM)
        _spin()
    assert e.value.exit_status == 143 and e.value.name == "SIGTERM"
    assert {s: signal.getsignal(s) for s in interrupt.SIGNALS} == before


def test_a_signal_inside_critical_is_raised_at_its_end():
    done = []
    with pytest.raises(Interrupted) as e, signals_raise():
        with critical():
            os.kill(os.getpid(), signal.SIGINT)
            _spin()
            done.append(True)
        done.append(False)  # not reached
    assert done == [True] and e.value.exit_status == 130


def test_a_partial_output_is_removed_on_an_error_and_kept_when_complete(tmp_path):
    created = make_dirs(tmp_path / "a" / "b")
    assert created == (tmp_path / "a", tmp_path / "a" / "b")
    assert make_dirs(tmp_path / "a") == ()  # existing: nothing created
    with pytest.raises(RuntimeError), partial_output(tmp_path / "a" / "b" / "f", created) as p:
        p.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []  # the file and the directories made for it
    with partial_output(tmp_path / "d") as p:
        p.mkdir()
        (p / "x").write_text("whole")
    assert (tmp_path / "d" / "x").read_text() == "whole"
    assert interrupt._State.partial == {}


def test_a_partial_directory_tree_goes_on_a_signal_but_a_non_empty_parent_stays(tmp_path):
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "mine").write_text("user data")
    with pytest.raises(Interrupted), signals_raise():
        with partial_output(tmp_path / "keep" / "tree", [tmp_path / "keep"]) as p:
            (p / "sub").mkdir(parents=True)
            (p / "sub" / "f.pt2").write_bytes(b"12")
            os.kill(os.getpid(), signal.SIGTERM)
            _spin()
    assert sorted(os.listdir(tmp_path / "keep")) == ["mine"]


def test_run_command_in_the_process_reports_one_line(capsys, tmp_path):
    def body():
        output_written(tmp_path / "done.pt")
        os.kill(os.getpid(), signal.SIGTERM)
        _spin()
        return 0  # pragma: no cover - interrupted first

    assert run_command("tool", body) == 143
    assert capsys.readouterr().err.splitlines() == [
        f"tool: interrupted (SIGTERM); wrote only {tmp_path / 'done.pt'}"
    ]
    output_written(tmp_path / "late.pt")  # outside a command: not recorded
    assert interrupt._State.written == [str(tmp_path / "done.pt")]


def test_run_command_takes_a_keyboard_interrupt_as_sigint(capsys):
    def body():
        raise KeyboardInterrupt

    assert run_command("tool", body, outputs=False) == 130
    assert capsys.readouterr().err.splitlines() == ["tool: interrupted (SIGINT)"]
    assert run_command("tool", lambda: 7) == 7


def test_the_line():
    assert interrupt.interruption_line("p", 2) == "p: interrupted (SIGINT); no result written"
    assert interrupt.interruption_line("p", 15, ["a", "b"]) == (
        "p: interrupted (SIGTERM); wrote only a, b"
    )


# ---------------------------------------------------------------- supervised (subprocess)

#: A command whose body writes a partial file, then sits in one long C call that holds
#: the GIL (no Python handler or thread can run during it).
SCRIPT = textwrap.dedent(
    """
    import os, sys
    from neml2.tensors.interrupt import make_dirs, output_written, partial_output, run_command

    import neml2.tensors.interrupt

    mode = sys.argv[1]
    if mode == "patient":  # the supervisor waits 60 s after one signal
        neml2.tensors.interrupt.GRACE = 60.0

    def body():
        if mode == "exit":
            print(os.getpid(), flush=True)
            return 7
        output_written("first.pt")
        created = make_dirs("made/deeper")
        with partial_output("made/deeper/part.tmp", created) as p:
            p.write_text("half")
            sys.stderr.write(f"ready {os.getpid()}\\n")
            sys.stderr.flush()
            sum(range(10**13))  # hours, in C, holding the GIL
        return 0

    sys.exit(run_command("tool", body, supervise=True))
    """
)


def _start(tmp_path: Path, mode: str = "stuck", **env) -> subprocess.Popen:
    (tmp_path / "cmd.py").write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, "cmd.py", mode],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )


def _wait_for(proc: subprocess.Popen, needle: bytes, seconds: float = 120) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    fd = proc.stderr.fileno()
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            pytest.fail(f"no {needle!r} within {seconds} s: {seen!r}")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                pytest.fail(f"ended (exit {proc.returncode}) before {needle!r}: {seen!r}")
            seen += chunk
    return seen


def _stop(proc: subprocess.Popen, sig: int, head: bytes) -> tuple[float, str]:
    time.sleep(0.3)  # well inside the C call (not between "ready" and it)
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        _, rest = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return time.monotonic() - t0, (head + rest).decode()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.skipif(not POSIX, reason="the supervisor needs fork (Linux)")
@pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"]
)
def test_a_signal_stops_a_command_inside_a_long_c_call(tmp_path, sig, status):
    proc = _start(tmp_path)
    head = _wait_for(proc, b"ready ")
    child = int(head.split(b"ready ")[1].split()[0])
    assert child != proc.pid  # the command runs in the supervised child
    took, err = _stop(proc, sig, head)
    assert proc.returncode == status, err
    print(f"{sig.name}: stopped in {took:.2f} s")
    assert took < 2.0, f"stopped after {took:.2f} s"
    lines = [line for line in err.splitlines() if not line.startswith("ready ")]
    assert lines == [f"tool: interrupted ({sig.name}); wrote only first.pt"], err
    assert sorted(os.listdir(tmp_path)) == ["cmd.py"]  # part.tmp and made/deeper removed
    time.sleep(0.2)
    assert _gone(child)


@pytest.mark.skipif(not POSIX, reason="the supervisor needs fork (Linux)")
def test_a_second_signal_stops_the_command_at_once(tmp_path):
    proc = _start(tmp_path, "patient")  # one signal would wait 60 s
    head = _wait_for(proc, b"ready ")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    took, err = _stop(proc, signal.SIGINT, head)  # a second Ctrl-C
    assert proc.returncode == 130, err
    assert took < 10, f"stopped after {took:.2f} s"
    assert err.splitlines()[-1] == "tool: interrupted (SIGINT); wrote only first.pt"
    assert sorted(os.listdir(tmp_path)) == ["cmd.py"]


@pytest.mark.skipif(not POSIX, reason="the supervisor needs fork (Linux)")
def test_a_child_killed_otherwise_is_cleaned_up_and_named(tmp_path):
    proc = _start(tmp_path)
    head = _wait_for(proc, b"ready ")
    child = int(head.split(b"ready ")[1].split()[0])
    os.kill(child, signal.SIGKILL)  # the OOM killer, say
    _, rest = proc.communicate(timeout=30)
    err = (head + rest).decode()
    assert proc.returncode == 128 + signal.SIGKILL, err
    assert err.splitlines()[-1] == "tool: killed by SIGKILL; wrote only first.pt"
    assert sorted(os.listdir(tmp_path)) == ["cmd.py"]


@pytest.mark.skipif(not POSIX, reason="the supervisor needs fork (Linux)")
def test_the_supervisor_passes_the_exit_status_and_output_through(tmp_path):
    proc = _start(tmp_path, "exit")
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (7, b"")
    assert int(out) != proc.pid  # the body ran in the child


def test_without_the_supervisor_the_command_runs_in_the_process(tmp_path):
    proc = _start(tmp_path, "exit", NEML2_SUPERVISE="0")
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err, int(out)) == (7, b"", proc.pid)
