"""``NortonCreepRate``: Norton power-law creep with an Arrhenius temperature factor.

Importing this module registers the type; the package's entry point
(``[project.entry-points."neml2.models"]`` in pyproject.toml) names it, so neml2
imports it on its own the first time an input says ``type = NortonCreepRate``.
"""

from __future__ import annotations

from neml2.models import register_neml2_object
from neml2.models.model import HitSchema, Model, input, option, output, parameter
from neml2.tensors import SR2, FatalError, Scalar, clamp, dev, exp, inner, sqrt

#: A floor on the von Mises stress (in stress units): keeps the tangent finite at
#: zero stress, where the rate is zero anyway.
SEQ_FLOOR = 1e-12


@register_neml2_object  # HIT: type = NortonCreepRate
class NortonCreepRate(Model):
    r"""Norton creep rate, J2 flow direction, Arrhenius temperature dependence.

        rate = 3/2 A exp(-Q / (R T)) seq^(n-1) s,   s = dev(stress),
        seq  = sqrt(3/2 s:s)                       (the von Mises stress)

    so the equivalent creep rate sqrt(2/3 rate:rate) is A exp(-Q / (R T)) seq^n.
    Shapes: stress and rate are SR2 (*B, 6), temperature a Scalar (*B,).
    """

    hit = HitSchema(
        input("stress", SR2, "the Cauchy stress"),
        input("temperature", Scalar, "the absolute temperature T"),
        output("creep_strain_rate", SR2, "the creep strain rate"),
        parameter("A", Scalar, "the Norton prefactor (1/time per stress^n)"),
        parameter("n", Scalar, "the Norton exponent"),
        parameter("Q", Scalar, "the activation energy (energy per mole)"),
        option("R", float, "the gas constant, in units of Q per kelvin", default=8.314462618),
    )
    # forward propagates first-order tangents only: enough for Jacobians, implicit
    # updates and calibration (a Normality, which needs second order, refuses it)
    SUPPORTS_SECOND_ORDER = False

    def forward(self, stress, temperature, *nl_params, v=None, v2=None, vh=None):
        if v2 is not None or vh is not None:
            raise FatalError(f"{self._label()}: second derivatives are not implemented")
        A, n, Q = (self._get_param(p, nl_params) for p in ("A", "n", "Q"))
        R = self.opts["R"]
        k = A * exp(-Q / (R * temperature))  # the Arrhenius-scaled prefactor
        s = dev(stress)
        seq = clamp(sqrt(1.5 * inner(s, s)), SEQ_FLOOR)
        f = 1.5 * k * seq ** (n - 1.0)
        rate = f * s
        if v is None:
            return rate
        # d rate / d stress . d = f dev(d) + 9/4 k (n - 1) seq^(n-3) (s:d) s
        g = 2.25 * k * (n - 1.0) * seq ** (n - 3.0)
        # d rate / d T . dT = Q / (R T^2) rate dT
        h = Q / (R * temperature * temperature)
        return rate, *self.propagate_tangents(
            v,
            "creep_strain_rate",
            {
                "stress": lambda d: f * dev(d) + g * inner(s, d) * s,
                "temperature": lambda d: d * (h * rate),
            },
            output=rate,
        )
