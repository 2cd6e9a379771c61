"""Slip hardening rules and the total slip rate they are driven by."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import GEOMETRY_NAME_COMPAT
from neml2.tensors import Scalar, abs


@register()
class SumSlipRates(Model):
    """Total slip rate ``Σ_i |γ̇_i|`` (a sum over the last sub-batch axis, the slip axis).

    The input must be per-slip (``sub_batch_ndim >= 1``); the output has one sub-batch
    axis fewer.
    """

    fields = (
        output("sum_slip_rates", Scalar, doc="sum of the absolute slip rates"),
        input("slip_rates", Scalar, doc="per-slip slip rates"),
        GEOMETRY_NAME_COMPAT,
    )

    def forward(self, slip_rates: Scalar) -> Scalar:
        if slip_rates.sub_batch_ndim < 1:
            raise self.error(
                f"input '{self.var['slip_rates']}' has no sub-batch (slip) axis to sum over; "
                "give it as a per-slip Scalar (sub_batch_ndim >= 1)"
            )
        return abs(slip_rates).sub_batch.sum(-1)


@register()
class VoceSingleSlipHardeningRule(Model):
    """Voce hardening of the shared slip strength: ``τ̄̇ = θ_0 (1 - τ̄ / τ_f) Σ_i |γ̇_i|``.

    ``θ_0`` the initial hardening slope, ``τ_f`` the saturated hardening and
    ``Σ_i |γ̇_i|`` the total slip rate (``SumSlipRates``).
    """

    fields = (
        output("slip_hardening_rate", Scalar, doc="rate of the shared slip hardening"),
        input("slip_hardening", Scalar, doc="the shared slip hardening τ̄"),
        input("sum_slip_rates", Scalar, doc="total slip rate Σ|γ̇_i|"),
        parameter("initial_slope", Scalar, doc="initial hardening slope θ_0"),
        parameter("saturated_hardening", Scalar, doc="saturated hardening τ_f"),
    )

    def forward(self, slip_hardening: Scalar, sum_slip_rates: Scalar) -> Scalar:
        theta0 = self.param("initial_slope")
        tau_f = self.param("saturated_hardening")
        return theta0 * (1.0 - slip_hardening / tau_f) * sum_slip_rates
