"""Solid-mechanics models: elasticity, plasticity, crystal plasticity, viscoelasticity,
cohesive interfaces, eigenstrains."""

from neml2.models.solid_mechanics import (
    crystal_plasticity,
    eigenstrains,
    elasticity,
    elasticity_tensors,
    large_deformation,
    plasticity,
    thermal_annealing,
    traction_separation,
    viscoelasticity,
)

__all__ = [
    "crystal_plasticity",
    "eigenstrains",
    "elasticity",
    "elasticity_tensors",
    "large_deformation",
    "plasticity",
    "thermal_annealing",
    "traction_separation",
    "viscoelasticity",
]
