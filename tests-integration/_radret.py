"""J2 radial return (``benchmarks/suite/workloads/j2_radret.i``, the reference library's
``benchmark/radret`` model) and the step inputs the compiled-route tests feed it."""

from __future__ import annotations

from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
RADRET = ROOT / "benchmarks" / "suite" / "workloads" / "j2_radret.i"
F64 = torch.float64


def virgin_step(scale: torch.Tensor) -> dict:
    """One step from a virgin state at ``n = len(scale)`` points: a uniaxial strain
    ``scale * (1, -1/2, -1/2, 0, 0, 0)`` (Mandel), times 2 / 1 / 0 for now and the two
    previous steps, every state variable zero."""
    n = scale.shape[0]
    zero6 = torch.zeros(n, 6, dtype=F64)
    zero = torch.zeros(n, dtype=F64)
    return {
        "strain": scale.unsqueeze(-1) * torch.tensor([1.0, -0.5, -0.5, 0.0, 0.0, 0.0], dtype=F64),
        "plastic_strain~1": zero6,
        "equivalent_plastic_strain~1": zero,
        "kinematic_plastic_strain~1": zero6,
        "gamma~1": zero,
        "gamma~2": zero,
        "t": torch.full((n,), 2.0, dtype=F64),
        "t~1": torch.full((n,), 1.0, dtype=F64),
        "t~2": torch.zeros(n, dtype=F64),
    }
