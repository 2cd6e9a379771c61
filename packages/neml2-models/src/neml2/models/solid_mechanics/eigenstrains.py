"""Isotropic eigenstrains (thermal, volume change, phase transformation) and the
volumetric deformation Jacobians of thermal expansion and swelling/phase change.

Eigenstrains are cumulative (measured from the stress-free reference), output
``eigenstrain`` ``(*B, 6)`` Mandel, a multiple of the identity; an
``SR2LinearCombination`` subtracts them from the total strain. The Jacobians are
Scalars ``J = det F`` ``(*B,)`` of the corresponding volume change.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import SR2, Scalar

_EIGENSTRAIN = output("eigenstrain", SR2, doc="eigenstrain ε_g")
_T = input("temperature", Scalar, doc="temperature T")
_T0 = parameter("reference_temperature", Scalar, doc="reference (stress-free) temperature T₀")
_CTE = parameter("CTE", Scalar, doc="coefficient of thermal expansion α")


def _isotropic(s: Scalar) -> SR2:
    """``s I`` for a Scalar *s*."""
    return s * SR2.identity(dtype=s.dtype, device=s.device)


@register()
class ThermalEigenstrain(Model):
    """Linear isotropic thermal eigenstrain ``ε_g = α (T - T₀) I``.

    ``α`` the coefficient of thermal expansion, ``T₀`` the stress-free
    temperature. Shapes: ``T`` ``(*B,)``, ``ε_g`` ``(*B, 6)`` Mandel.
    """

    fields = (_T, _EIGENSTRAIN, _T0, _CTE)

    def forward(self, T: Scalar) -> SR2:
        return _isotropic(self.param("CTE") * (T - self.param("reference_temperature")))


@register()
class VolumeChangeEigenstrain(Model):
    """Isotropic eigenstrain of a volume change ``ε_g = ((V / V₀)^(1/3) - 1) I``.

    ``V`` the current and ``V₀`` the reference volume. Shapes: ``V`` ``(*B,)``,
    ``ε_g`` ``(*B, 6)`` Mandel.
    """

    fields = (
        input("volume", Scalar, doc="current volume V"),
        _EIGENSTRAIN,
        parameter(
            "reference_volume", Scalar, bounds="(0, inf)", doc="reference (initial) volume V₀"
        ),
    )

    def forward(self, V: Scalar) -> SR2:
        return _isotropic((V / self.param("reference_volume")) ** (1.0 / 3.0) - 1.0)


@register()
class PhaseTransformationEigenstrain(Model):
    """Isotropic eigenstrain of a phase transformation A → B: ``ε_g = ΔV f I``.

    ``f`` the phase fraction (0: all A, 1: all B), ``ΔV`` the volume fraction
    change from A to B. Shapes: ``f``, ``ΔV`` ``(*B,)``; ``ε_g`` ``(*B, 6)`` Mandel.
    """

    fields = (
        input("phase_fraction", Scalar, doc="phase fraction f"),
        input("volume_fraction_change", Scalar, doc="volume fraction change ΔV from A to B"),
        _EIGENSTRAIN,
    )

    def forward(self, f: Scalar, dv: Scalar) -> SR2:
        return _isotropic(f * dv)


@register()
class ThermalDeformationJacobian(Model):
    """Linear isotropic thermal deformation Jacobian ``J = 1 + α (T - T₀)``.

    Shapes: ``T``, ``J`` ``(*B,)`` Scalars.
    """

    fields = (
        _T,
        output("jacobian", Scalar, doc="thermal deformation Jacobian J"),
        _T0,
        _CTE,
    )

    def forward(self, T: Scalar) -> Scalar:
        return 1.0 + self.param("CTE") * (T - self.param("reference_temperature"))


@register()
class SwellingAndPhaseChangeDeformationJacobian(Model):
    """Deformation Jacobian of a freezing liquid or melting solid with swelling.

    ``J = 1 + α c φᶠ + (1 - c) φᶠ ΔΩ``: ``φᶠ`` the fluid fraction that swells,
    ``c`` the phase fraction (0: all solid, 1: all liquid), ``α`` the swelling
    coefficient, ``ΔΩ`` the relative difference of the two phases' reference
    volumes. Shapes: ``(*B,)`` Scalars.
    """

    fields = (
        input("fluid_fraction", Scalar, doc="volume fraction φᶠ of the fluid phase"),
        output("jacobian", Scalar, doc="phase change deformation Jacobian J"),
        parameter(
            "phase_fraction",
            Scalar,
            bounds="[0, 1]",
            doc="phase fraction c (0: all solid, 1: all liquid)",
        ),
        parameter("swelling_coefficient", Scalar, doc="swelling coefficient α"),
        parameter(
            "reference_volume_difference",
            Scalar,
            doc="relative difference ΔΩ of the two phases' reference volumes",
        ),
    )

    def forward(self, phi: Scalar) -> Scalar:
        c = self.param("phase_fraction")
        swell = self.param("swelling_coefficient") * c
        return 1.0 + swell * phi + (1.0 - c) * phi * self.param("reference_volume_difference")
