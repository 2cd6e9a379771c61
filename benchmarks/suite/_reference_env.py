"""The reference library's own virtual environment, outside the uv workspace.

NEML2 3.1.0 needs torch 2.12.1 (its compiled runtime misbehaves with a newer torch),
so it can never share our environment. ``ensure()`` creates, once,
``$NEML2_BENCH_REFERENCE_VENV`` or ``${XDG_CACHE_HOME:-~/.cache}/neml2-bench/reference-venv``
with ``uv venv`` + ``uv pip install neml2==3.1.0 torch==2.12.1`` (a few GB from PyPI)
and returns its Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REFERENCE = ("neml2==3.1.0", "torch==2.12.1")


def venv_dir() -> Path:
    env = os.environ.get("NEML2_BENCH_REFERENCE_VENV")
    if env:
        return Path(env).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "neml2-bench" / "reference-venv"


def python() -> Path:
    return venv_dir() / "bin" / "python"


def ready() -> bool:
    py = python()
    if not py.is_file():
        return False
    probe = "import importlib.metadata as m; print(m.version('neml2'), m.version('torch'))"
    r = subprocess.run([str(py), "-c", probe], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.split() == ["3.1.0", "2.12.1"]


def ensure(log=print) -> Path:
    """Create the reference environment if it is missing; return its Python."""
    if ready():
        return python()
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("the reference environment needs uv (https://docs.astral.sh/uv/)")
    d = venv_dir()
    d.parent.mkdir(parents=True, exist_ok=True)
    # the interpreter behind ours (same Python version on both sides, no download)
    base = getattr(sys, "_base_executable", None) or sys.executable
    log(f"creating the reference environment {d} (neml2 3.1.0 + torch 2.12.1, a few GB)")
    subprocess.run([uv, "venv", "--allow-existing", "--python", base, str(d)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            # .pyc at install time, as our workspace does ([tool.uv] compile-bytecode):
            # both sides then import torch at the same cost
            "--compile-bytecode",
            "--python",
            str(python()),
            "--index-url",
            "https://pypi.org/simple",
            *REFERENCE,
        ],
        check=True,
    )
    if not ready():
        raise SystemExit(f"{d}: neml2 3.1.0 / torch 2.12.1 did not install")
    return python()


if __name__ == "__main__":
    print(ensure())
