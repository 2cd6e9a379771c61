"""Dislocation-density evolution per slip system."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, abs, sqrt


@register()
class PerSlipForestDislocationEvolution(Model):
    """Forest hardening per slip system: ``ρ̇_i = (k_1 sqrt(ρ_i) - k_2 ρ_i) |γ̇_i|``.

    ``k_1`` the storage (hardening) coefficient, ``k_2`` the recovery coefficient;
    ``ρ_i`` and ``γ̇_i`` are per-slip ``Scalar`` values.
    """

    fields = (
        output("dislocation_density_rate", Scalar, doc="per-slip dislocation density rate"),
        input("dislocation_density", Scalar, doc="per-slip dislocation density ρ_i"),
        input("slip_rates", Scalar, doc="per-slip slip rates γ̇_i"),
        parameter("k1", Scalar, doc="hardening coefficient k_1"),
        parameter("k2", Scalar, doc="recovery coefficient k_2"),
    )

    def forward(self, dislocation_density: Scalar, slip_rates: Scalar) -> Scalar:
        rho = dislocation_density
        growth = self.param("k1") * sqrt(rho) - self.param("k2") * rho
        return growth * abs(slip_rates)
