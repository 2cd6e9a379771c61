"""A compiled implicit model runs right with more threads than the compiling machine had.

Artifacts are compiled with a size hint of 1024 points, so their kernels get OpenMP
regions, and the Newton loop's convergence test (an ``all`` over the batch) becomes a
parallel reduction. torch 2.13 sized that reduction's per-thread partials by the
compiling process's thread count unless ``cpp.dynamic_threads`` is set: J2 radial
return compiled on 2 cores and run with 4 threads crashed (segmentation fault).
The artifact runs in a child process here, so a crash fails this test only.

J2 radial return (``benchmarks/suite/workloads/j2_radret.i``) compiles in about a
minute cold; ``build/aoti-cache`` keeps it (``test_aoti_zero_iterations`` compiles the
same graph).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from _radret import F64, RADRET, ROOT, virgin_step

import neml2
from neml2.compiler import CompileOptions, compile_file

CACHE = ROOT / "build" / "aoti-cache"

CHILD = """
import sys, torch
from neml2.aoti import Model
art, inputs, out, threads = sys.argv[1:5]
torch.set_num_threads(int(threads))
torch.save(Model(art).forward(torch.load(inputs)), out)
"""


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    d = tmp_path_factory.mktemp("radret-threads")
    return compile_file(RADRET, CompileOptions.from_strings("model"), d, cache_dir=CACHE)


def _inputs(n: int) -> dict:
    """A step from a virgin state: the first three quarters of the batch stay elastic
    (Newton converges there at once), the last quarter yields. A reduction that drops
    the partials of the threads past the compile-time count would stop the loop early."""
    scale = torch.linspace(0.01, 0.03, n, dtype=F64)
    scale[: 3 * n // 4] *= 1e-4
    return virgin_step(scale)


@pytest.mark.parametrize("n", [4096, 1])
def test_more_threads_than_at_compile_time(artifact, tmp_path, n):
    threads = 2 * max(torch.get_num_threads(), 2)
    x = _inputs(n)
    torch.save(x, tmp_path / "in.pt")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(artifact.artifact_dir),
            str(tmp_path / "in.pt"),
            str(tmp_path / "out.pt"),
            str(threads),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"the artifact run with {threads} threads exited with {proc.returncode}:\n"
        f"{proc.stderr[-2000:]}"
    )
    got = torch.load(tmp_path / "out.pt")
    with torch.no_grad():
        want = neml2.load_model(RADRET, "model").forward(x)
    assert set(got) == set(want)
    for k, w in want.items():
        scale = float(w.abs().max()) + 1e-300
        torch.testing.assert_close(got[k], w, rtol=1e-10, atol=1e-10 * scale, msg=k)
    # the yielding quarter did yield: the comparison is not between two elastic steps
    if n > 1:
        assert float(want["equivalent_plastic_strain"][-1]) > 0
