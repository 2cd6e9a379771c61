"""Isotropic hardening: the equivalent plastic strain mapped to the hardening ``h``."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, exp

_EP = input("equivalent_plastic_strain", Scalar, doc="equivalent plastic strain ε̄p")
_H = output("isotropic_hardening", Scalar, doc="isotropic hardening h")


@register()
class LinearIsotropicHardening(Model):
    """Linear isotropic hardening ``h = K ε̄p``. All variables are Scalars ``(*B)``."""

    fields = (_EP, _H, parameter("hardening_modulus", Scalar, doc="hardening modulus K"))

    def forward(self, equivalent_plastic_strain: Scalar) -> Scalar:
        return self.param("hardening_modulus") * equivalent_plastic_strain


@register()
class VoceIsotropicHardening(Model):
    """Voce isotropic hardening ``h = R (1 - exp(-d ε̄p))``.

    ``R`` is the hardening at saturation, ``d`` the saturation rate. All variables
    are Scalars ``(*B)``.
    """

    fields = (
        _EP,
        _H,
        parameter("saturated_hardening", Scalar, doc="saturated isotropic hardening R"),
        parameter("saturation_rate", Scalar, doc="hardening saturation rate d"),
    )

    def forward(self, equivalent_plastic_strain: Scalar) -> Scalar:
        R = self.param("saturated_hardening")
        d = self.param("saturation_rate")
        return R * (1.0 - exp(-(d * equivalent_plastic_strain)))
