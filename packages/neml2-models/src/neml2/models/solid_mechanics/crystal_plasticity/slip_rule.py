"""Slip rules: slip rate per system from the resolved shear and the slip strength."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import GEOMETRY_NAME_COMPAT
from neml2.tensors import Scalar, abs, exp, log, where


@register()
class PowerLawSlipRule(Model):
    """Power-law slip rule ``γ̇_i = γ̇_0 |τ_i / τ̂_i|^(n-1) τ_i / τ̂_i``.

    ``τ_i`` the resolved shear, ``τ̂_i`` the slip strength of system ``i``, ``γ̇_0`` a
    reference slip rate and ``n`` the rate-sensitivity exponent (``n > 1``; at
    ``τ_i = 0`` the rate and its derivative are 0). Per-slip inputs broadcast by
    their sub-batch axes.
    """

    fields = (
        output("slip_rates", Scalar, doc="per-slip slip rates"),
        input("resolved_shears", Scalar, doc="per-slip resolved shears"),
        input("slip_strengths", Scalar, doc="per-slip slip strengths"),
        parameter("gamma0", Scalar, bounds="(0, inf)", doc="reference slip rate"),
        parameter("n", Scalar, bounds="(0, inf)", doc="rate-sensitivity exponent"),
        GEOMETRY_NAME_COMPAT,
    )

    def forward(self, resolved_shears: Scalar, slip_strengths: Scalar) -> Scalar:
        gamma0, n = self.param("gamma0"), self.param("n")
        ratio = resolved_shears / slip_strengths
        mag = abs(ratio)
        nonzero = mag > 0.0
        # |r|^(n-1) = exp((n-1) log|r|), guarded so that r = 0 gives 0 with a finite tangent
        safe = where(nonzero, mag, 1.0)
        power = where(nonzero, exp((n - 1.0) * log(safe)), 0.0)
        return gamma0 * power * ratio
