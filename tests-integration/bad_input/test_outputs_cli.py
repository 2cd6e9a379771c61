"""Bad input, items 4 and 10: outputs are never lost or clobbered; CLI conventions.

* ``save_as`` of a ``TransientDriver`` and ``neml2-run --plot`` are checked before
  the run starts: not a directory, FIFO, device (or a symlink to one), not the
  input file, in a directory that exists or can be created and is writable; a plot
  needs a known image extension and ``--plot-outputs`` names the model's variables.
  Errors name ``file:line: save_as`` or ``--plot`` / ``--plot-outputs``, and no file
  is written.
* Every command takes ``--version`` (all six packages and torch); an INPUT that is
  a directory, FIFO or device is reported as such, without opening it.
* SIGINT / SIGTERM during a run: exit 130 / 143, one line, no file left behind
  (subprocess tests below the table).

The last rows pass on purpose (exit 0): the harness can tell.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _table import HELLO, Api, Cli, check_row, ids

from neml2.compiler._cli import main as compile_main
from neml2.drivers._cli import inspect_main, run_main, syntax_main
from neml2.hit._cli import main as hit_main
from neml2.models import load_input
from neml2.tensors import FatalError

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False

RUN = """
!include {hello}/input.i
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, {n}))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, {n}).reshape({n}, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    {extra}
  []
  [regression]
    type = TransientRegression
    driver = 'driver'
    reference = 'gold.pt'
  []
[]
"""

#: the six distributions, then torch, in the --version text
VERSIONS = (
    r"neml2-tensors +\S.*neml2-hit +\S.*neml2-models +\S.*neml2-drivers +\S.*"
    r"neml2-compile +\S.*neml2-aoti-runtime +\S.*torch +\S"
)


def run_input(save_as: str | None = None, n: int = 4, extra: str = "") -> str:
    """A TransientDriver on the hello model (n steps), optionally with ``save_as``."""
    lines = [extra] if extra else []
    if save_as is not None:
        lines.append(f"save_as = '{save_as}'")
    return RUN.format(hello=HELLO, n=n, extra="\n    ".join(lines))


def _fifo(name: str):
    def make(tmp: Path) -> None:
        os.mkfifo(tmp / name)

    return make


def _symlink(name: str, to: str):
    def make(tmp: Path) -> None:
        target = Path(to) if os.path.isabs(to) else tmp / to
        os.symlink(target, tmp / name)

    return make


def _readonly_dir(name: str):
    def make(tmp: Path) -> None:
        (tmp / name).mkdir()
        os.chmod(tmp / name, 0o500)

    return make


def _run_driver(name: str):
    def call(tmp: Path):
        return load_input(tmp / "t.i").object("Drivers", name).run()

    return call


def _plot_api(path: str):
    def call(tmp: Path):
        from neml2.drivers.plot import plot

        return plot({}, ["stress"], tmp / path)

    return call


# root is not stopped by a read-only directory: there, the parent is a device instead
UNWRITABLE = (
    ("/dev/null/out.pt", r"save_as: cannot write 'out\.pt' in '/dev/null': '/dev/null' is not")
    if ROOT
    else ("ro/out.pt", r"t\.i:\d+:\d+: save_as: directory '[^']*/ro' is not writable")
)

ROWS = [
    # ------------------------------------------------------------ item 4: save_as
    Cli(
        "save-as-is-a-directory",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        r"t\.i:\d+:\d+: save_as: '[^']*/outdir' is a directory, not a regular file",
        files={"t.i": run_input("outdir"), "outdir/keep": "x"},
        regex=True,
    ),
    Cli(
        "save-as-ends-with-slash",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        "save_as: 'new/' ends with '/': it names a directory, not a file",
        files={"t.i": run_input("new/")},
        absent=("new",),
    ),
    Cli(
        "save-as-dot",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        "is a directory, not a regular file",
        files={"t.i": run_input(".")},
    ),
    Cli(
        "save-as-parent-is-a-file",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        r"save_as: cannot write 'out\.pt' in '[^']*/afile': '[^']*/afile' is not a directory",
        files={"t.i": run_input("afile/out.pt"), "afile": "x"},
        regex=True,
    ),
    Cli(
        "save-as-directory-not-writable",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        UNWRITABLE[1],
        files={"t.i": run_input(UNWRITABLE[0])},
        regex=True,
        prepare=None if ROOT else _readonly_dir("ro"),
    ),
    Cli(
        "save-as-is-a-fifo",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        r"save_as: '[^']*/out\.pt' is a FIFO, not a regular file",
        files={"t.i": run_input("out.pt")},
        regex=True,
        prepare=_fifo("out.pt"),
    ),
    Cli(
        "save-as-symlink-to-a-directory",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        r"save_as: '[^']*/link\.pt' \(a symlink to '[^']*/real'\) is a directory",
        files={"t.i": run_input("link.pt"), "real/keep": "x"},
        regex=True,
        prepare=_symlink("link.pt", "real"),
    ),
    Cli(
        "save-as-symlink-to-a-device",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        "(a symlink to '/dev/null') is a character device, not a regular file",
        files={"t.i": run_input("null.pt")},
        prepare=_symlink("null.pt", "/dev/null"),
    ),
    Cli(
        "save-as-is-the-input-file",
        run_main,
        ("t.i", "driver", "--quiet"),
        1,
        "is the input file; writing there would overwrite it",
        files={"t.i": run_input("t.i")},
    ),
    Cli(
        # checked before the regression even looks for its gold file
        "save-as-checked-before-a-regression-runs",
        run_main,
        ("t.i", "regression", "--quiet"),
        1,
        "save_as: ",
        files={"t.i": run_input("outdir"), "outdir/keep": "x"},
    ),
    Api(
        "api-save-as-is-a-directory",
        _run_driver("driver"),
        FatalError,
        "is a directory, not a regular file",
        files={"t.i": run_input("outdir"), "outdir/keep": "x"},
    ),
    # ------------------------------------------------------------ item 4: --plot
    Cli(
        "plot-is-a-directory",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png"),
        1,
        r"--plot: '[^']*/p\.png' is a directory, not a regular file",
        files={"t.i": run_input(), "p.png/keep": "x"},
        regex=True,
    ),
    Cli(
        "plot-parent-is-a-file",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "afile/p.png"),
        1,
        "afile' is not a directory",
        files={"t.i": run_input(), "afile": "x"},
    ),
    Cli(
        "plot-is-a-fifo",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png"),
        1,
        r"--plot: '[^']*/p\.png' is a FIFO, not a regular file",
        files={"t.i": run_input()},
        regex=True,
        prepare=_fifo("p.png"),
    ),
    Cli(
        "plot-unknown-format",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.xyz"),
        1,
        "--plot: 'p.xyz': cannot write the format 'xyz'; use one of .png",
        files={"t.i": run_input()},
        absent=("p.xyz",),
    ),
    Cli(
        "plot-no-extension",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "plot"),
        1,
        "--plot: 'plot' has no file extension",
        files={"t.i": run_input()},
        absent=("plot", "plot.png"),
    ),
    Cli(
        "plot-is-the-input-file",
        run_main,
        ("in.png", "driver", "--quiet", "--plot", "in.png"),
        1,
        "is INPUT, the input file; writing there would overwrite it",
        files={"in.png": run_input()},
    ),
    Cli(
        "plot-same-file-as-save-as",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "r.png"),
        1,
        r"--plot: '[^']*/r\.png' is where t\.i:\d+:\d+: save_as writes the result",
        files={"t.i": run_input("r.png")},
        regex=True,
        absent=("r.png",),
    ),
    Cli(
        "plot-driver-without-transient-result",
        run_main,
        ("{hello}/unit.i", "unit", "--plot", "p.png"),
        1,
        "--plot: driver 'unit' (ModelUnitTest) produces no transient result to plot",
        absent=("p.png",),
    ),
    Cli(
        "plot-outputs-unknown-name",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png", "--plot-outputs", "strss"),
        1,
        "--plot-outputs: 'strss' is not a variable of model 'elasticity' (did you mean 'stress'",
        files={"t.i": run_input("out.pt")},
        absent=("p.png", "out.pt"),
    ),
    Cli(
        "plot-outputs-unknown-input",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png", "--plot-outputs", "input.strian"),
        1,
        "(did you mean 'input.strain'",
        files={"t.i": run_input()},
        absent=("p.png",),
    ),
    Cli(
        "plot-outputs-component-out-of-range",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png", "--plot-outputs", "stress[6]"),
        1,
        "--plot-outputs: 'stress[6]': 'stress' has 6 component(s) (base shape (6,)), "
        "so i must lie in 0..5",
        files={"t.i": run_input()},
        absent=("p.png",),
    ),
    Cli(
        "plot-outputs-bad-component",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png", "--plot-outputs", "stress[x]"),
        1,
        "--plot-outputs: 'stress[x]' is not a variable 'name' or a component 'name[i]'",
        files={"t.i": run_input()},
        absent=("p.png",),
    ),
    Cli(
        "plot-outputs-without-plot",
        run_main,
        ("t.i", "driver", "--quiet", "--plot-outputs", "stress"),
        2,
        "--plot-outputs needs --plot FILE",
        files={"t.i": run_input()},
    ),
    Api(
        "api-plot-unknown-format",
        _plot_api("x.bmp"),
        FatalError,
        "cannot write the format 'bmp'",
    ),
    # ------------------------------------------------------------ item 10: --version
    Cli(
        "run-version", run_main, ("--version",), 0, r"(?s)^neml2-run \S+\n +" + VERSIONS, regex=True
    ),
    Cli("inspect-version", inspect_main, ("--version",), 0, "(?s)" + VERSIONS, regex=True),
    Cli("syntax-version", syntax_main, ("--version",), 0, "(?s)" + VERSIONS, regex=True),
    Cli("compile-version", compile_main, ("--version",), 0, "(?s)" + VERSIONS, regex=True),
    Cli(
        "hit-version", hit_main, ("--version",), 0, r"(?s)^neml2-hit \S+\n +" + VERSIONS, regex=True
    ),
    # ------------------------------------------------------------ item 10: INPUT
    Cli(
        "run-input-is-a-directory",
        run_main,
        ("d", "driver"),
        1,
        "neml2-run: error: INPUT 'd' is not a regular file (a directory), not a HIT file",
        files={"d/keep": "x"},
    ),
    Cli(
        "run-input-is-a-fifo",
        run_main,
        ("pipe.i", "driver"),
        1,
        "INPUT 'pipe.i' is not a regular file (a FIFO), not a HIT file",
        prepare=_fifo("pipe.i"),
    ),
    Cli(
        "run-input-is-a-device",
        run_main,
        ("/dev/null", "driver"),
        1,
        "INPUT '/dev/null' is not a regular file (a character device), not a HIT file",
    ),
    Cli(
        "inspect-input-is-a-directory",
        inspect_main,
        ("d", "elasticity"),
        1,
        "neml2-inspect: error: INPUT 'd' is not a regular file (a directory), not a HIT file",
        files={"d/keep": "x"},
    ),
    Cli(
        "inspect-input-is-a-fifo",
        inspect_main,
        ("pipe.i", "elasticity"),
        1,
        "INPUT 'pipe.i' is not a regular file (a FIFO), not a HIT file",
        prepare=_fifo("pipe.i"),
    ),
    Cli(
        "compile-input-is-a-directory",
        compile_main,
        ("d", "--model", "elasticity"),
        1,
        "neml2-compile: error: INPUT 'd' is not a regular file (a directory), not a HIT file",
        files={"d/keep": "x"},
    ),
    Cli(
        "compile-input-is-a-fifo",
        compile_main,
        ("pipe.i", "--model", "elasticity"),
        1,
        "INPUT 'pipe.i' is not a regular file (a FIFO), not a HIT file",
        prepare=_fifo("pipe.i"),
    ),
    # ------------------------------------------------------------ pass on purpose
    Cli(
        "run-help-shows-optional-overrides-and-save-as-rule",
        run_main,
        ("--help",),
        0,
        r"(?s)usage: neml2-run .*input driver \[overrides \.\.\.\].*"
        r"A relative save_as .* resolves against the directory of\s+INPUT",
        regex=True,
    ),
    Cli(
        "save-as-and-plot-written-when-good",
        run_main,
        ("t.i", "driver", "--quiet", "--plot", "p.png", "--plot-outputs", "stress[0]"),
        0,
        "plot written to p.png",
        files={"t.i": run_input("out/r.pt")},
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)


# ---------------------------------------------------------------- signals (subprocess)

#: 200000 steps of the hello model: 10 s and more, with a progress bar to wait for
SLOW_STEPS = 200_001


def _wait_for(proc: subprocess.Popen, needle: bytes, seconds: float) -> bytes:
    """Read the child's stderr until *needle* shows (or fail after *seconds*)."""
    seen = b""
    deadline = time.monotonic() + seconds
    fd = proc.stderr.fileno()
    while needle not in seen:
        left = deadline - time.monotonic()
        if not left > 0:
            proc.kill()
            pytest.fail(f"no {needle!r} on stderr within {seconds} s; got {seen!r}")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                pytest.fail(f"the run ended (exit {proc.returncode}) before {needle!r}: {seen!r}")
            seen += chunk
    return seen


@pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_signal_mid_run_exits_with_one_line_and_no_file(sig, status, tmp_path):
    (tmp_path / "slow.i").write_text(
        run_input("out.pt", n=SLOW_STEPS, extra="show_progress = true")
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "neml2.drivers", "slow.i", "driver"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        head = _wait_for(proc, b" steps ", 180)  # the progress bar: stepping has started
        proc.send_signal(sig)
        out, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = (head + rest).decode()
    line = f"neml2-run: interrupted ({sig.name}); no result written"
    assert proc.returncode == status, f"exit {proc.returncode}; stderr:\n{err[-2000:]}"
    assert err.count("interrupted") == 1, err[-2000:]
    assert line in err.splitlines(), err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert b"TransientDriver 'driver'" not in out  # no summary: the run did not finish
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slow.i"]  # no result, no temp file
