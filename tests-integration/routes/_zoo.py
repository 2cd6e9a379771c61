"""The model zoo of the route matrix: one input file per model, random valid inputs.

Inputs are raw name-keyed tensors ``(n, *sub_batch, *base)``: one step (``t~1 = 0``,
``t = dt``) from a small, consistent previous state, strains of a few 1e-3 so the
implicit models take a plastic step and their Newton solves converge.
The explicit models of the newer families (viscoelasticity, GTN, traction-separation)
take their inputs directly, sampled in the physical region and away from kinks.
The ``seed_*`` cases are the models written in the seed's authoring contract
(``../seed_models``). The files in ``zoo/`` are copies of the reference library's
inputs or, for those families, written after its unit tests (see zoo/README.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

ZOO = Path(__file__).resolve().parent / "zoo"
#: models written in the seed's authoring contract (registered on import)
SEED = Path(__file__).resolve().parents[1] / "seed_models"
sys.path.insert(0, str(SEED))
import seed_models  # noqa: E402, F401

F64 = torch.float64


@dataclass(frozen=True)
class Case:
    """One zoo model.

    *sub_batch*: input name -> sub-batch shape of its raw tensor (per-slip, per-grain).
    *pairs*: the ``-d OUT:IN`` Jacobian pairs compiled for the AOTI routes (compile
    time grows with them); the jvp tangents are set on the inputs these pairs name.
    """

    name: str
    file: Path
    make: Callable[[int, torch.Generator], dict[str, torch.Tensor]]
    pairs: tuple[str, ...]
    sub_batch: dict[str, tuple[int, ...]] = field(default_factory=dict)
    model: str = "model"

    def inputs(self, n: int, seed: int = 0) -> dict[str, torch.Tensor]:
        return self.make(n, torch.Generator().manual_seed(1000 * seed + n))

    @property
    def jvp_inputs(self) -> list[str]:
        return sorted({p.split(":")[1] for p in self.pairs})

    def tangents(self, n: int, seed: int = 1) -> dict[str, torch.Tensor]:
        x = self.inputs(n, seed=seed)
        g = torch.Generator().manual_seed(7 + n)
        return {k: torch.rand(x[k].shape, generator=g, dtype=F64) - 0.5 for k in self.jvp_inputs}


def _r(g, n, *shape, scale=1.0):
    return scale * (torch.rand(n, *shape, generator=g, dtype=F64) - 0.5)


def _step(n, dt):
    return {"t": torch.full((n,), dt, dtype=F64), "t~1": torch.zeros(n, dtype=F64)}


def _elasticity(n, g):
    return {"strain": _r(g, n, 6, scale=2e-3)}


def _j2(n, g):
    return {
        "E": _r(g, n, 6, scale=0.04),
        "plastic_strain~1": _r(g, n, 6, scale=1e-3),
        "equivalent_plastic_strain~1": 1e-3 * torch.rand(n, generator=g, dtype=F64),
        "flow_rate~1": torch.zeros(n, dtype=F64),
        **_step(n, 1.0),
    }


def _viscoplastic(n, g, backstresses=()):
    e1 = _r(g, n, 6, scale=0.004)
    x = {
        "E~1": e1,
        "E": e1 + _r(g, n, 6, scale=0.02),
        "stress~1": _r(g, n, 6, scale=50.0),
        "equivalent_plastic_strain~1": 1e-3 * torch.rand(n, generator=g, dtype=F64),
        **_step(n, 1.0),
    }
    for b in backstresses:
        x[b] = _r(g, n, 6, scale=5.0)
    return x


def _crystal(n, g):
    d = torch.tensor([0.1, -0.05, -0.05, 0.0, 0.0, 0.0], dtype=F64)
    return {
        "deformation_rate": d + _r(g, n, 6, scale=0.05),
        "vorticity": torch.tensor([0.1, -0.05, -0.05], dtype=F64) + _r(g, n, 3, scale=0.05),
        "dislocation_density~1": 10.0 + _r(g, n, 12, scale=4.0),
        "elastic_strain~1": _r(g, n, 6, scale=1e-3),
        "orientation~1": _r(g, n, 3, scale=0.5),
        **_step(n, 0.05),
    }


_GRAINS = 5


def _taylor(n, g):
    control = torch.tensor([1.0, 0, 0, 0, 0, 0], dtype=F64).expand(n, 6).clone()
    return {
        "control": control,
        "prescribed": torch.tensor([1e-3, 0, 0, 0, 0, 0], dtype=F64) + _r(g, n, 6, scale=2e-4),
        "vorticity": _r(g, n, 3, scale=1e-3),
        "slip_hardening~1": 5.0 * torch.rand(n, _GRAINS, generator=g, dtype=F64),
        "elastic_strain~1": _r(g, n, _GRAINS, 6, scale=1e-4),
        "orientation~1": _r(g, n, _GRAINS, 3, scale=0.8),
        "deformation_rate~1": _r(g, n, 6, scale=1e-4),
        "target_cauchy_stress~1": _r(g, n, 6, scale=1.0),
        **_step(n, 0.5),
    }


def _zener(n, g):
    return {"strain": _r(g, n, 6, scale=0.02), "viscous_strain": _r(g, n, 6, scale=0.004)}


def _zener_implicit(n, g):
    """One backward-Euler step (dt = 0.05, 2.5 Maxwell relaxation times 100/5000) from a
    partly relaxed viscous strain; the ImplicitUpdate solves for viscous_strain."""
    e1 = _r(g, n, 6, scale=0.01)
    return {
        "strain": e1 + _r(g, n, 6, scale=0.004),
        "viscous_strain~1": 0.3 * e1 + _r(g, n, 6, scale=0.001),
        **_step(n, 0.05),
    }


def _gtn(n, g):
    u = lambda: torch.rand(n, generator=g, dtype=F64)  # noqa: E731
    return {
        "flow_invariant": 20.0 + 80.0 * u(),
        "poro_invariant": _r(g, n, scale=120.0),
        "void_fraction": 0.01 + 0.29 * u(),  # physical: 0 < f < 1
        "isotropic_hardening": 40.0 * u(),
    }


def _bilinear_traction(n, g):
    """Onset 0.05..0.15, failure 0.35..1.15 beyond it; the effective separation spans
    0..1.3 x failure, so the elastic, softening and failed branches are all sampled
    (never exactly at a kink); the previous damage is below or above the trial one."""
    u = lambda: torch.rand(n, generator=g, dtype=F64)  # noqa: E731
    dc = 0.05 + 0.1 * u()
    df = dc + 0.3 + 0.7 * u()
    return {
        "effective_separation": 1.3 * df * u(),
        "critical_separation": dc,
        "full_separation": df,
        "normal_separation": 0.05 * u(),
        "normal_penetration": -0.01 * u(),
        "tangential_separation_1": _r(g, n, scale=0.04),
        "tangential_separation_2": _r(g, n, scale=0.04),
        "damage~1": 0.9 * u(),
    }


def _phase_field_fracture(n, g):
    """One step (dt = 3e-3, as the regression's 1000 steps over 3 s) of the damage Newton
    from damage up to 0.5, under strains up to the regression's final 0.016 magnitude;
    the previous step's damage is a little lower (the linear-extrapolation predictor)."""
    u = lambda: torch.rand(n, generator=g, dtype=F64)  # noqa: E731
    d1 = 0.5 * u()
    dt = 3e-3
    return {
        "E": _r(g, n, 6, scale=0.03),
        "d~1": d1,
        "d~2": d1 * (1.0 - 0.05 * u()),
        "t": torch.full((n,), 2 * dt, dtype=F64),
        "t~1": torch.full((n,), dt, dtype=F64),
        "t~2": torch.zeros(n, dtype=F64),
    }


def _pyrolysis(n, g):
    """One backward-Euler step of 100 s at 600-900 K from a conversion degree below 0.6."""
    u = lambda: torch.rand(n, generator=g, dtype=F64)  # noqa: E731
    return {
        "T": 600.0 + 300.0 * u(),
        "alpha~1": 0.6 * u(),
        "wb~1": 0.5 + 0.5 * u(),
        "wc~1": 0.3 * u(),
        "wg~1": 0.1 * u(),
        "phio~1": 0.05 * u(),
        **_step(n, 100.0),
    }


_BINS = 8


def _kwn(n, g):
    """Number densities per size bin small enough that the volume fraction stays near
    1e-4 (the matrix concentration stays inside the tabulated driving force's range)."""
    return {"number_density": 1e-10 * torch.rand(n, _BINS, generator=g, dtype=F64)}


def _porous_flow(n, g):
    """Fluid fractions give effective saturations 0.02-0.9: both sides of the capillary
    pressure's log-extension transition at 0.1 are sampled."""
    u = lambda: torch.rand(n, generator=g, dtype=F64)  # noqa: E731
    return {
        "phi": 0.01 + 0.44 * u(),
        "phimax": torch.full((n,), 0.5, dtype=F64) + 0.01 * u(),
        "phi0": 0.2 + 0.2 * u(),
        "m": 1.0 + 2.0 * u(),
    }


_CELLS = 8


def _finite_volume(n, g):
    """One backward-Euler step (dt = 0.1) of 8 cells; velocities of both signs per cell
    (the upwinding picks the left or right cell), positive concentrations."""
    return {
        "velocity": _r(g, n, _CELLS, scale=1.0),
        "concentration~1": torch.rand(n, _CELLS, generator=g, dtype=F64),
        **_step(n, 0.1),
    }


def _seed_elasticity(n, g):
    return {
        "T": 250.0 + 100.0 * torch.rand(n, generator=g, dtype=F64),
        "strain": _r(g, n, 6, scale=0.02),
    }


def _seed_energy(n, g):
    return {
        "strain": _r(g, n, 6, scale=0.02),
        "temperature": 250.0 + 100.0 * torch.rand(n, generator=g, dtype=F64),
    }


def _seed_parameters(n, g):
    return {"z": _r(g, n, scale=2.0), "x": _r(g, n, scale=2.0), "shift": _r(g, n, scale=2.0)}


def _seed_x(n, g):
    return {"x": _r(g, n, scale=2.0)}


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case("elasticity", ZOO / "elasticity.i", _elasticity, ("stress:strain",)),
        Case("j2_isoharden", ZOO / "j2_isoharden.i", _j2, ("stress:E",)),
        Case(
            "chaboche",
            ZOO / "chaboche.i",
            lambda n, g: _viscoplastic(n, g, ("X1~1", "X2~1")),
            ("stress:E",),
        ),
        Case("perzyna", ZOO / "perzyna.i", _viscoplastic, ("stress:E",)),
        Case(
            "crystal_per_slip",
            ZOO / "crystal_per_slip.i",
            _crystal,
            (
                "cauchy_stress:deformation_rate",
                "dislocation_density:dislocation_density~1",
                "dislocation_density:deformation_rate",
            ),
            sub_batch={"dislocation_density~1": (12,)},
        ),
        Case(
            "taylor",
            ZOO / "taylor.i",
            _taylor,
            ("mixed_state:prescribed", "elastic_strain:prescribed"),
            sub_batch={
                "slip_hardening~1": (_GRAINS,),
                "elastic_strain~1": (_GRAINS,),
                "orientation~1": (_GRAINS,),
            },
        ),
        Case(
            "zener",
            ZOO / "zener.i",
            _zener,
            (
                "stress:strain",
                "stress:viscous_strain",
                "viscous_strain_rate:strain",
                "viscous_strain_rate:viscous_strain",
            ),
        ),
        Case(
            "zener_implicit",
            ZOO / "zener_implicit.i",
            _zener_implicit,
            ("stress:strain", "viscous_strain:strain"),
        ),
        Case(
            "gtn",
            ZOO / "gtn.i",
            _gtn,
            ("yield_function:poro_invariant", "yield_function:void_fraction"),
        ),
        Case(
            "bilinear_traction",
            ZOO / "bilinear_traction.i",
            _bilinear_traction,
            (
                "traction:effective_separation",
                "traction:normal_separation",
                "damage:effective_separation",
            ),
        ),
        Case(
            "phase_field_fracture",
            ZOO / "phase_field_fracture.i",
            _phase_field_fracture,
            ("S:E", "d:E"),
        ),
        Case(
            "pyrolysis",
            ZOO / "pyrolysis.i",
            _pyrolysis,
            ("alpha:T", "alpha:alpha~1", "phio:T", "phio:alpha~1"),
        ),
        Case(
            "kwn",
            ZOO / "kwn.i",
            _kwn,
            ("growth_rate:number_density", "x_Cu:number_density"),
            sub_batch={"number_density": (_BINS,)},
        ),
        Case(
            "porous_flow",
            ZOO / "porous_flow.i",
            _porous_flow,
            ("Pc:phi", "Pc:phimax", "K:phi", "S:phi", "S:phimax"),
        ),
        Case(
            "finite_volume",
            ZOO / "finite_volume.i",
            _finite_volume,
            ("concentration:concentration~1", "concentration:velocity"),
            sub_batch={"velocity": (_CELLS,), "concentration~1": (_CELLS,)},
        ),
        Case(
            "seed_elasticity",
            SEED / "elasticity.i",
            _seed_elasticity,
            ("stress:strain", "stress:T"),
        ),
        Case(
            "seed_energy_normality",
            SEED / "energy_normality.i",
            _seed_energy,
            ("stress:strain", "stress:temperature", "entropy:strain", "entropy:temperature"),
        ),
        Case(
            "seed_parameters",
            SEED / "parameters.i",
            _seed_parameters,
            ("y:x", "y:z", "y:shift"),
        ),
        Case("seed_submodule", SEED / "submodule.i", _seed_x, ("y:x",)),
        Case("seed_priorities", SEED / "priorities.i", _seed_x, ("y:x", "w:x")),
    )
}
