"""SIGINT / SIGTERM stop neml2-run, neml2-inspect and neml2-syntax within a second, even
inside one long C call that holds the GIL: exit 130 / 143, one line on stderr, no
partial file left. A broken plugin makes neml2-run fail, never exit 0 unchecked.

The long C call comes from a test hook: a small script patches the step it names
(``torch.save`` while the result is written, ``load_model``, the syntax catalogue) with
``sum(range(10**13))`` (hours, in C) and runs the tool's main as its console script does.
"""

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

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "fork") and sys.platform.startswith("linux")),
    reason="the supervisor that stops a run inside a C call needs fork (Linux)",
)

INPUT = """
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    save_as = 'result.pt'
  []
[]
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""

#: Runs a tool with one step stuck in C; prints "ready" on stderr when it is.
HOOK = textwrap.dedent(
    """
    import os
    import sys
    from pathlib import Path

    import torch

    from neml2.drivers import _cli

    tool = sys.argv.pop(1)

    def stuck(*args, **kwargs):
        if tool == "run" and isinstance(args[1], (str, os.PathLike)):
            Path(args[1]).write_bytes(b"partial")  # torch.save(data, tmp)
        sys.stderr.write("ready\\n")
        sys.stderr.flush()
        sum(range(10**13))  # hours, in C, holding the GIL

    if tool == "run":  # while the result is written: its temporary file exists
        torch.save = stuck
    elif tool == "inspect":
        import neml2.models

        neml2.models.load_model = stuck
    else:
        import neml2.drivers._syntax

        neml2.drivers._syntax.main = stuck
    main = {"run": _cli.run_main, "inspect": _cli.inspect_main, "syntax": _cli.syntax_main}
    sys.exit(main[tool]())  # no argv: as the console script calls it
    """
)


NONE = "no result written"


def _wait_for(proc: subprocess.Popen, needle: bytes, seconds: float = 180) -> bytes:
    """Read the tool's stderr until *needle* shows (or fail after *seconds*)."""
    seen = b""
    deadline = time.monotonic() + seconds
    fd = proc.stderr.fileno()
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            pytest.fail(f"no {needle!r} on stderr within {seconds} s; got {seen!r}")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                pytest.fail(f"the tool ended (exit {proc.returncode}) before {needle!r}: {seen!r}")
            seen += chunk
    return seen


@pytest.mark.parametrize(
    ("tool", "args", "sig", "line"),
    [
        ("run", ["t.i", "driver"], signal.SIGTERM, "neml2-run: interrupted (SIGTERM); " + NONE),
        ("run", ["t.i", "driver"], signal.SIGINT, "neml2-run: interrupted (SIGINT); " + NONE),
        ("inspect", ["t.i", "elasticity"], signal.SIGTERM, "neml2-inspect: interrupted (SIGTERM)"),
        ("syntax", [], signal.SIGINT, "neml2-syntax: interrupted (SIGINT)"),
    ],
    ids=["run-TERM", "run-INT", "inspect-TERM", "syntax-INT"],
)
def test_a_signal_stops_the_tool_inside_a_long_c_call(tmp_path, tool, args, sig, line):
    (tmp_path / "t.i").write_text(INPUT)
    (tmp_path / "hook.py").write_text(HOOK)
    proc = subprocess.Popen(
        [sys.executable, "hook.py", tool, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        head = _wait_for(proc, b"ready\n")
        time.sleep(0.3)  # well inside the C call (not between "ready" and it)
        if tool == "run":
            assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, rest = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = (head + rest).decode()
    print(f"{tool} {sig.name}: stopped in {took:.2f} s")
    assert proc.returncode == 128 + sig, err
    assert took < 2.0, f"stopped after {took:.2f} s"
    assert err.splitlines() == ["ready", line], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hook.py", "t.i"]  # no file left


# ---------------------------------------------------------------- plugins

PLUGIN_INPUT = """
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'x'
    input_Scalar_values = '1'
    output_Scalar_names = 'y'
    output_Scalar_values = '2'
  []
[]
[Models]
  [model]
    type = FakeExitPluginScale
  []
[]
"""


def test_a_plugin_that_exits_at_import_makes_neml2_run_fail(tmp_path):
    """sys.exit(0) in a plugin must not end neml2-run with status 0 before the check ran."""
    site = tmp_path / "site"
    info = site / "fake_exit_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-exit-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neml2.models]\nexiter = fake_exit_plugin\n")
    (site / "fake_exit_plugin.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "f.i").write_text(PLUGIN_INPUT)
    path = os.pathsep.join(p for p in [str(site), os.environ.get("PYTHONPATH", "")] if p)
    out = subprocess.run(
        [sys.executable, "-m", "neml2.drivers", "f.i", "unit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
    )
    assert out.returncode == 1, out
    message = out.stderr.strip().splitlines()[-1]
    assert message.startswith("neml2-run: error: "), out.stderr
    assert "'exiter = fake_exit_plugin' of distribution fake-exit-plugin 0.1" in message
    assert "sys.exit(0)" in message
    assert "Traceback" not in out.stderr
    assert not list(Path(tmp_path).glob("*.pt"))
