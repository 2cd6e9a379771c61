"""Build the tiny "scale" AOTI artifact the C++ and neml2.aoti tests load.

Plain torch only (no neml2 packages), so both test suites can use it:
``python make_artifact.py OUTDIR`` writes ``OUTDIR/scale/{metadata.json,cpu/float64/*.pt2}``.

"scale": inputs x (Scalar) and strain (SR2), promoted parameter k = 2 (shape ()).
Outputs y = k * x * tr(strain) (Scalar) and s = x * strain (SR2); the jacobian
graph adds dy/dstrain (6,) and ds/dx (6,). The .pt2 files are cached under
<repo>/build/aoti-cache by a hash of this file and the torch version.
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
TR = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)


def reference(x, strain, k):
    tr_ = torch.tensor(TR, dtype=strain.dtype, device=strain.device)
    y = k * x * (strain * tr_).sum(-1)
    s = x.unsqueeze(-1) * strain
    dy_de = (k * x).unsqueeze(-1) * tr_
    return y, s, dy_de, strain


class Forward(torch.nn.Module):
    def forward(self, x, strain, k):
        y, s, _, _ = reference(x, strain, k)
        return y, s


class Jacobian(torch.nn.Module):
    def forward(self, x, strain, k):
        return reference(x, strain, k)


def _compile(module: torch.nn.Module, path: Path) -> None:
    key = hashlib.sha256(
        HERE.read_bytes() + type(module).__name__.encode() + torch.__version__.encode()
    ).hexdigest()[:32]
    cached = CACHE / f"scale-{key}.pt2"
    if not cached.is_file():
        b = torch.export.Dim("batch", min=1, max=2**31 - 2)
        args = (
            torch.rand(8, dtype=torch.float64),
            torch.rand(8, 6, dtype=torch.float64),
            torch.tensor(2.0, dtype=torch.float64),
        )
        ep = torch.export.export(module, args, dynamic_shapes=({0: b}, {0: b}, None))
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = CACHE / f".{key}.tmp.pt2"
        torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
        tmp.replace(cached)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, path)


def metadata() -> dict:
    return {
        "schema_version": 1,
        "format": "neml2-aoti",
        "torch_version": torch.__version__,
        "model": "scale",
        "inputs": [
            {"name": "x", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "strain", "type": "SR2", "base_shape": [6], "sub_batch": 0},
        ],
        "outputs": [
            {"name": "y", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "s", "type": "SR2", "base_shape": [6], "sub_batch": 0},
        ],
        "derivatives": [{"output": "y", "input": "strain"}, {"output": "s", "input": "x"}],
        "parameters": [{"name": "k", "shape": [], "value": [2.0]}],
        "solvers": [],
        "graphs": {
            "forward": {"file": "forward.pt2", "outputs": ["y", "s"]},
            "jacobian": {"file": "jacobian.pt2", "outputs": ["y", "s", "y:strain", "s:x"]},
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
    art = out / "scale"
    _compile(Forward(), art / "cpu" / "float64" / "forward.pt2")
    _compile(Jacobian(), art / "cpu" / "float64" / "jacobian.pt2")
    (art / "metadata.json").write_text(json.dumps(metadata(), indent=2))
    return art


if __name__ == "__main__":
    print(build(Path(sys.argv[1])))
