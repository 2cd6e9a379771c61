"""Smoke test run inside a venv that holds only built wheels (nox -s wheels).

usage: python check_install.py deployment|full
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path


def deployment() -> None:
    """neml2-tensors + neml2-aoti-runtime alone: import, run, build a C++ consumer."""
    import torch

    import neml2.aoti as aoti
    from neml2.tensors import FatalError

    for absent in ("neml2.hit", "neml2.models", "neml2.drivers", "neml2.compiler"):
        assert importlib.util.find_spec(absent) is None, f"{absent} must not be installed"
    assert aoti.broadcast_batch_shape({"strain": torch.zeros(2, 6)}, {"strain": [6]}) == [2]
    try:
        aoti.broadcast_batch_shape({"strain": torch.zeros(2, 5)}, {"strain": [6]})
    except FatalError as e:
        print("FatalError translated:", e)
    else:
        raise AssertionError("expected FatalError")
    consumer = Path(__file__).resolve().parents[2] / "cpp" / "consumer"
    with tempfile.TemporaryDirectory() as build:
        subprocess.run(
            [
                "cmake",
                "-S",
                str(consumer),
                "-B",
                build,
                f"-DCMAKE_PREFIX_PATH={aoti.cmake_prefix_path()}",
            ],
            check=True,
        )
        subprocess.run(["cmake", "--build", build], check=True)
        subprocess.run(["ctest", "--test-dir", build, "--output-on-failure"], check=True)
    print("deployment pair: ok")


def full() -> None:
    """All six wheels: the namespace merges and the facade is there."""
    import neml2

    for sub in ("hit", "tensors", "models", "drivers", "compiler", "aoti"):
        importlib.import_module(f"neml2.{sub}")
    assert callable(neml2.load_model)
    # the cpp-eager binding ships under its public name (and runs the models installed here)
    assert "host" in importlib.import_module("neml2.aoti.cpp_eager").python_interpreter()
    print("full install: ok")


if __name__ == "__main__":
    {"deployment": deployment, "full": full}[sys.argv[1]]()
