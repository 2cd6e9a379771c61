"""Viscoplastic flow rates: the flow rate as a function of the yield function."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, constant, where


@register()
class PerzynaPlasticFlowRate(Model):
    """Perzyna's power-law viscous flow rate ``γ̇ = (⟨f⟩ / η)^n``.

    ``f`` is the yield function, ``⟨·⟩`` the Macaulay bracket, ``η`` the reference
    stress and ``n`` the exponent. The rate and all its derivatives are exactly
    zero where ``f ≤ 0``. All variables are Scalars ``(*B)``.
    """

    fields = (
        input("yield_function", Scalar, doc="yield function f"),
        output("flow_rate", Scalar, doc="flow rate γ̇"),
        parameter("reference_stress", Scalar, doc="reference stress η"),
        parameter("exponent", Scalar, doc="power-law exponent n"),
    )

    def forward(self, yield_function: Scalar) -> Scalar:
        eta = self.param("reference_stress")
        n = self.param("exponent")
        active = yield_function > 0.0
        # evaluate the power only on the active side: log(0) never enters the tangents
        ratio = where(active, yield_function / eta, constant(Scalar, 1.0, like=yield_function))
        return where(active, ratio**n, constant(Scalar, 0.0, like=yield_function))
