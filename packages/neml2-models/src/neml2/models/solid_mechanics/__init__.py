"""Solid-mechanics models: elasticity, plasticity, crystal plasticity."""

from neml2.models.solid_mechanics import crystal_plasticity, elasticity, plasticity

__all__ = ["crystal_plasticity", "elasticity", "plasticity"]
