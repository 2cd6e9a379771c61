"""Build the "wobble" AOTI artifact the DispatchedModel tests load (C++ and Python).

Plain torch only (no neml2 packages): ``python make_dispatch_artifact.py OUTDIR``
writes ``OUTDIR/wobble/{metadata.json,cpu/float64/*.pt2}`` and prints the path.

"wobble": inputs x (Scalar), strain (SR2) and slip (Scalar with a sub-batch axis of 3,
as the per-slip variables of crystal plasticity), promoted parameter k = 1.5 (shape ()).
With r = sqrt(1 + x^2) and tr the trace of strain::

    y = k exp(-x^2) tr / r                  (Scalar)
    s = r strain + x strain^2               (SR2, elementwise square)
    g = x sin(slip)                         (Scalar, sub-batch 3)

Non-linear on purpose, so a chunk boundary that changed the arithmetic would
show. Both graphs also return the number of points with x < 0 as a solve status
(``"status": true``), so libneml2 raises ConvergenceError for any chunk holding
a negative x: the tests use it to make one chunk fail. The jacobian graph holds
the blocks y:x, y:strain, s:x, s:strain, g:x and g:slip. The .pt2 files are cached under
<repo>/build/aoti-cache keyed by a hash of this file and the torch version.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve()
CACHE = HERE.parents[2] / "build" / "aoti-cache"
NAME = "wobble"
K = 1.5


def values(x: torch.Tensor, strain: torch.Tensor, slip: torch.Tensor, k: torch.Tensor):
    """``(y, s, g, dy/dx, dy/dstrain, ds/dx, ds/dstrain, dg/dx, dg/dslip, failed)`` for
    x: (N,), strain: (N, 6), slip: (N, 3)."""
    tr_vec = torch.zeros(6, dtype=strain.dtype, device=strain.device)
    tr_vec[:3] = 1.0
    tr = (strain * tr_vec).sum(-1)
    r = torch.sqrt(1.0 + x * x)
    g = k * torch.exp(-x * x) / r
    y = g * tr
    s = r.unsqueeze(-1) * strain + x.unsqueeze(-1) * strain * strain
    dy_dx = tr * g * (-2.0 * x - x / (r * r))
    dy_de = g.unsqueeze(-1) * tr_vec
    ds_dx = (x / r).unsqueeze(-1) * strain + strain * strain
    ds_de = torch.diag_embed(r.unsqueeze(-1) + 2.0 * x.unsqueeze(-1) * strain)
    g = x.unsqueeze(-1) * torch.sin(slip)
    dg_dx = torch.sin(slip)
    dg_dslip = torch.diag_embed(x.unsqueeze(-1) * torch.cos(slip))
    failed = (x < 0).sum()
    return y, s, g, dy_dx, dy_de, ds_dx, ds_de, dg_dx, dg_dslip, failed


class Forward(torch.nn.Module):
    def forward(self, x, strain, slip, k):
        y, s, g, *_, failed = values(x, strain, slip, k)
        return y, s, g, failed


class Jacobian(torch.nn.Module):
    def forward(self, x, strain, slip, k):
        return values(x, strain, slip, k)


def _package(module: torch.nn.Module, dst: Path) -> None:
    """Export with a dynamic batch, AOT-compile (or take the cached .pt2), copy to *dst*."""
    key = hashlib.sha256(
        HERE.read_bytes() + type(module).__name__.encode() + torch.__version__.encode()
    ).hexdigest()[:32]
    cached = CACHE / f"{NAME}-{key}.pt2"
    if not cached.is_file():
        batch = torch.export.Dim("batch", min=1, max=2**31 - 2)
        example = (
            torch.rand(8, dtype=torch.float64),
            torch.rand(8, 6, dtype=torch.float64),
            torch.rand(8, 3, dtype=torch.float64),
            torch.tensor(K, dtype=torch.float64),
        )
        dynamic = ({0: batch}, {0: batch}, {0: batch}, None)
        ep = torch.export.export(module, example, dynamic_shapes=dynamic, strict=False)
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = CACHE / f".{NAME}-{key}.tmp.pt2"
        torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
        tmp.replace(cached)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, dst)


def metadata() -> dict:
    blocks = [("y", "x"), ("y", "strain"), ("s", "x"), ("s", "strain"), ("g", "x"), ("g", "slip")]
    return {
        "schema_version": 1,
        "format": "neml2-aoti",
        "torch_version": torch.__version__,
        "model": NAME,
        "inputs": [
            {"name": "x", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "strain", "type": "SR2", "base_shape": [6], "sub_batch": 0},
            {"name": "slip", "type": "Scalar", "base_shape": [], "sub_batch": [3]},
        ],
        "outputs": [
            {"name": "y", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "s", "type": "SR2", "base_shape": [6], "sub_batch": 0},
            {"name": "g", "type": "Scalar", "base_shape": [], "sub_batch": [3]},
        ],
        "derivatives": [{"output": o, "input": i} for o, i in blocks],
        "parameters": [{"name": "k", "shape": [], "value": [K]}],
        "solvers": [],
        "graphs": {
            "forward": {"file": "forward.pt2", "outputs": ["y", "s", "g"], "status": True},
            "jacobian": {
                "file": "jacobian.pt2",
                "outputs": ["y", "s", "g", *(f"{o}:{i}" for o, i in blocks)],
                "status": True,
            },
        },
        "targets": [
            {
                "device": "cpu",
                "dtype": "float64",
                "graphs": {
                    "forward": "cpu/float64/forward.pt2",
                    "jacobian": "cpu/float64/jacobian.pt2",
                },
            }
        ],
    }


def build(out: Path) -> Path:
    """Write the artifact under ``out/wobble`` and return that directory."""
    art = Path(out) / NAME
    _package(Forward(), art / "cpu" / "float64" / "forward.pt2")
    _package(Jacobian(), art / "cpu" / "float64" / "jacobian.pt2")
    (art / "metadata.json").write_text(json.dumps(metadata(), indent=2))
    return art


if __name__ == "__main__":
    print(build(Path(sys.argv[1])))
