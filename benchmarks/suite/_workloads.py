"""Benchmark workloads: input file, model name, load history and initial state.

Imports only torch and the standard library, so that both workers (ours and the
reference library's, in its own virtual environment) build bit-identical inputs.

A history is a dict ``name -> (tensor, sub_batch_ndim)`` with tensors at
``(nsteps + 1, B, *sub, *base)``: step 0 is the initial state, steps 1..nsteps are
the increments a transient run takes. Initial conditions are ``name -> (tensor,
sub_batch_ndim)`` at ``(B, *sub, *base)``; state variables without one start at zero.
The time ``t`` is part of the history.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
WORKLOADS_DIR = HERE / "workloads"
F64 = torch.float64

#: Mandel-form unit uniaxial strain (0.1, -0.05, -0.05) used by the reference benchmarks.
_UNIAXIAL = (0.1, -0.05, -0.05, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Workload:
    """One benchmark workload.

    ``state_sub_batch`` gives, for state variables (outputs fed back as ``name~1``),
    the sub-batch shape they carry (per-crystal axes); others are ``(B, *base)``.
    """

    name: str
    file: str
    model: str
    description: str
    kind: str  # "explicit" or "implicit"
    state_sub_batch: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return WORKLOADS_DIR / self.file


def _ramp(nsteps: int) -> torch.Tensor:
    """(nsteps + 1, 1) fractions 0 .. 1."""
    return torch.linspace(0.0, 1.0, nsteps + 1, dtype=F64).unsqueeze(-1)


def _strain_history(batch: int, nsteps: int, end_time: torch.Tensor) -> dict:
    """Uniaxial strain ramp to 10 % over ``end_time`` (B,), as in the reference benchmarks."""
    r = _ramp(nsteps)  # (N+1, 1)
    strain = r.unsqueeze(-1) * torch.tensor(_UNIAXIAL, dtype=F64).expand(batch, 6)
    t = r * end_time.unsqueeze(0)  # (N+1, B)
    return {"strain": (strain.contiguous(), 0), "t": (t.contiguous(), 0)}


def _logspace_end_time(batch: int, lo: float, hi: float) -> torch.Tensor:
    return torch.logspace(lo, hi, batch, dtype=F64)


def _mrp_from_rodrigues(r: torch.Tensor) -> torch.Tensor:
    """Standard Rodrigues vector (..., 3) -> modified Rodrigues parameters (..., 3)."""
    return r / (torch.sqrt((r * r).sum(-1, keepdim=True) + 1.0) + 1.0)


def history(w: Workload, batch: int, nsteps: int) -> dict:
    """Forces (prescribed inputs, ``t`` included) of workload *w* at *batch* points."""
    if w.name in ("elasticity", "chaboche2", "chaboche4"):
        return _strain_history(batch, nsteps, _logspace_end_time(batch, 5.0, 5.0))
    if w.name in ("perzyna", "j2_radret"):
        return _strain_history(batch, nsteps, _logspace_end_time(batch, -1.0, 5.0))
    if w.name == "scp":
        r = _ramp(nsteps)
        end = torch.linspace(1.0, 10.0, batch, dtype=F64)
        d = torch.tensor(_UNIAXIAL, dtype=F64).expand(nsteps + 1, batch, 6)
        wv = torch.tensor([0.1, -0.05, -0.05], dtype=F64).expand(nsteps + 1, batch, 3)
        return {
            "t": ((r * end.unsqueeze(0)).contiguous(), 0),
            "deformation_rate": (d.contiguous(), 0),
            "vorticity": (wv.contiguous(), 0),
        }
    if w.name == "taylor":
        t = torch.linspace(0.0, 50.0 * nsteps / 99.0, nsteps + 1, dtype=F64)
        t = t.unsqueeze(-1).expand(nsteps + 1, batch)
        control = torch.tensor([1.0, 0, 0, 0, 0, 0], dtype=F64).expand(nsteps + 1, batch, 6)
        presc = torch.tensor([1e-3, 0, 0, 0, 0, 0], dtype=F64).expand(nsteps + 1, batch, 6)
        return {
            "t": (t.contiguous(), 0),
            "control": (control.contiguous(), 0),
            "prescribed": (presc.contiguous(), 0),
            "vorticity": (torch.zeros(nsteps + 1, batch, 3, dtype=F64), 0),
        }
    raise KeyError(w.name)


#: The 5 crystal orientations (MRP) of the reference's Taylor regression input.
_TAYLOR_MRP = (
    (-0.269981, -0.299844, -0.86408),
    (0.209546, 0.192014, 0.514051),
    (-0.0251234, -0.0175916, -0.636644),
    (-0.146257, -0.0475218, -0.970804),
    (-0.174458, -0.302169, -0.523373),
)


def initial_state(w: Workload, batch: int) -> dict:
    """Initial values of state variables that do not start at zero."""
    if w.name == "scp":
        r = torch.stack(
            [
                torch.linspace(0.0, 0.75, batch, dtype=F64),
                torch.linspace(0.0, -0.25, batch, dtype=F64),
                torch.linspace(-0.1, 0.1, batch, dtype=F64),
            ],
            dim=-1,
        )
        return {"orientation": (_mrp_from_rodrigues(r), 0)}
    if w.name == "taylor":
        q = torch.tensor(_TAYLOR_MRP, dtype=F64).expand(batch, 5, 3).contiguous()
        return {"orientation": (q, 1)}
    return {}


def to_device(values: dict, device: str) -> dict:
    """A history or initial state (``name -> (tensor, sub_batch_ndim)``) copied onto
    *device*. The values are always built on the CPU first: both sides and both devices
    then start from bit-identical inputs (the agreement check compares their digests),
    and the copy is made once, before anything is timed."""
    return {n: (v.to(device), sub) for n, (v, sub) in values.items()}


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("elasticity", "elasticity.i", "model", "linear isotropic elasticity", "explicit"),
        Workload(
            "j2_radret",
            "j2_radret.i",
            "model",
            "J2 isotropic + kinematic hardening, radial return (1 unknown)",
            "implicit",
        ),
        Workload(
            "perzyna", "perzyna.i", "model", "Perzyna viscoplasticity (7 unknowns)", "implicit"
        ),
        Workload(
            "chaboche2",
            "chaboche2.i",
            "model",
            "Chaboche, 2 back stresses (19 unknowns)",
            "implicit",
        ),
        Workload(
            "chaboche4",
            "chaboche4.i",
            "model",
            "Chaboche, 4 back stresses (31 unknowns)",
            "implicit",
        ),
        Workload(
            "scp",
            "scp.i",
            "model_with_stress",
            "single-crystal plasticity, 12 slip systems (10 unknowns)",
            "implicit",
        ),
        Workload(
            "taylor",
            "taylor.i",
            "model",
            "Taylor polycrystal, 5 crystals x 12 slip systems, mixed control",
            "implicit",
            {"elastic_strain": (5,), "orientation": (5,), "slip_hardening": (5,)},
        ),
    )
}


def points_label(n: int) -> str:
    """1 -> '1', 100 -> '1e2', 100000 -> '1e5'."""
    if n >= 100 and math.log10(n).is_integer():
        return f"1e{int(math.log10(n))}"
    return str(n)
