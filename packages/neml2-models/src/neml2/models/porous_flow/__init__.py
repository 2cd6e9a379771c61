"""Porous flow: permeability laws, capillary pressure, effective saturation and the
advective stress coupling the flow to a finite-deformation solid."""

from neml2.models.porous_flow import (
    advective_stress,
    capillary_pressure,
    permeability,
    saturation,
)

__all__ = ["advective_stress", "capillary_pressure", "permeability", "saturation"]
