"""Isotropic hardening: the hardening ``h`` from the equivalent plastic strain, or its rate."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._naming import RATE
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, constant, exp, where
from neml2.tensors import abs as abs_

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


@register()
class SlopeSaturationVoceIsotropicHardening(Model):
    """Voce hardening in rate form, ``ḣ = sign(R) θ₀ (1 - h/R) γ̇``.

    ``R`` is the saturated hardening and ``θ₀`` the initial hardening rate. Unlike
    :class:`VoceIsotropicHardening` the rate is non-associative (driven by the
    flow rate ``γ̇``), which makes it easy to add static recovery. The output name
    defaults to the hardening name with ``_rate`` appended. Scalars ``(*B)``.
    """

    fields = (
        input("flow_rate", Scalar, doc="flow rate γ̇"),
        input("isotropic_hardening", Scalar, doc="isotropic hardening h"),
        output(
            "isotropic_hardening_rate",
            Scalar,
            RATE.template("isotropic_hardening"),
            doc="isotropic hardening rate (default: <isotropic_hardening>_rate)",
        ),
        parameter("saturated_hardening", Scalar, doc="saturated isotropic hardening R"),
        parameter("initial_hardening_rate", Scalar, doc="initial hardening rate θ₀"),
    )

    def forward(self, flow_rate: Scalar, isotropic_hardening: Scalar) -> Scalar:
        R = self.param("saturated_hardening")
        theta0 = self.param("initial_hardening_rate")
        sign = Scalar(torch.sign(R.data), R.sub_batch_ndim)  # piecewise constant: no tangent
        return sign * theta0 * (1.0 - isotropic_hardening / R) * flow_rate


@register()
class PowerLawIsotropicHardeningStaticRecovery(Model):
    """Power-law static recovery of isotropic hardening, ``ḣ = -(|h|/τ)^(n-1) h/τ``.

    ``τ`` is the recovery rate and ``n`` the recovery exponent. At ``h = 0`` the
    rate and its derivatives are zero (the limit for ``n > 1``). The output name
    defaults to the hardening name with ``_rate`` appended. Scalars ``(*B)``.
    """

    fields = (
        input("isotropic_hardening", Scalar, doc="isotropic hardening h"),
        output(
            "isotropic_hardening_rate",
            Scalar,
            RATE.template("isotropic_hardening"),
            doc="recovery rate (default: <isotropic_hardening>_rate)",
        ),
        parameter("tau", Scalar, doc="recovery rate τ"),
        parameter("n", Scalar, doc="recovery exponent n"),
    )

    def forward(self, isotropic_hardening: Scalar) -> Scalar:
        tau, n = self.param("tau"), self.param("n")
        h = isotropic_hardening
        nonzero = abs_(h) > 0.0
        ratio = where(
            nonzero, abs_(h) / tau, constant(Scalar, 1.0, like=h)
        )  # keep log(0) out of the tangents
        return where(nonzero, -(ratio ** (n - 1.0)) * h / tau, constant(Scalar, 0.0, like=h))
