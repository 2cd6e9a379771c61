"""Phase-field fracture: degradation functions, crack geometric functions and the
strain energy density split that drives the phase field."""

from neml2.models.phase_field_fracture import (
    crack_geometry,
    degradation,
    strain_energy,
)

__all__ = ["crack_geometry", "degradation", "strain_energy"]
