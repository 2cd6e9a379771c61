"""Linear hardening of a slip strength shared by every slip system."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar


@register()
class LinearSingleSlipHardeningRule(Model):
    """Linear hardening of the shared slip strength: ``τ̄̇ = θ Σ_i |γ̇_i|``.

    ``θ`` is the hardening slope and ``Σ_i |γ̇_i|`` the total slip rate
    (``SumSlipRates``). The rate does not depend on the current hardening ``τ̄``
    (an input for the common interface of the single-slip rules). Scalars ``(*B)``.
    """

    fields = (
        input("slip_hardening", Scalar, doc="the shared slip hardening τ̄"),
        input("sum_slip_rates", Scalar, doc="total slip rate Σ|γ̇_i|"),
        output("slip_hardening_rate", Scalar, doc="rate of the shared slip hardening"),
        parameter("hardening_slope", Scalar, doc="hardening slope θ"),
    )

    def forward(self, slip_hardening: Scalar, sum_slip_rates: Scalar) -> Scalar:
        del slip_hardening
        return self.param("hardening_slope") * sum_slip_rates
