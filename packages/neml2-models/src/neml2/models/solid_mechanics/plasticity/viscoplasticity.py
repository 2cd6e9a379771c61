"""Viscoplastic flow rates: the flow rate as a function of the yield function."""

from __future__ import annotations

import torch

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
        parameter("reference_stress", Scalar, bounds="(0, inf)", doc="reference stress η"),
        parameter("exponent", Scalar, bounds="(0, inf)", doc="power-law exponent n"),
    )

    def forward(self, yield_function: Scalar) -> Scalar:
        eta = self.param("reference_stress")
        n = self.param("exponent")
        f = yield_function
        plain = f.tangents2 is None and not eta.tangents and not n.tangents
        # one value each (the common case) fits f's shape: no torch.broadcast_shapes,
        # which costs about 10 us a call in Python
        fits = eta.data.dim() == 0 and n.data.dim() == 0
        if plain and (
            fits
            or torch.broadcast_shapes(f.data.shape, eta.data.shape, n.data.shape) == f.data.shape
        ):
            return self._closed_form(f, eta.data, n.data)
        active = yield_function > 0.0
        # evaluate the power only on the active side: log(0) never enters the tangents
        ratio = where(active, yield_function / eta, constant(Scalar, 1.0, like=yield_function))
        return where(active, ratio**n, constant(Scalar, 0.0, like=yield_function))

    @staticmethod
    def _closed_form(f: Scalar, eta: torch.Tensor, n: torch.Tensor) -> Scalar:
        """The rate and its first derivatives, ``d γ̇ = n γ̇ / f df`` where ``f > 0`` (zero
        elsewhere): one power per call (the generic chain raised ``f / η`` to ``n - 1``
        once more for the derivative). Constant ``η``, ``n`` whose batch shape is
        ``f``'s or broadcasts into it; first-order tangents of ``f`` only."""
        active = f.data > 0.0
        fa = torch.where(active, f.data, 1.0)  # no 0 ** n, no division by zero
        rate = torch.where(active, (fa / eta) ** n, 0.0)
        t1 = None
        if f.tangents:
            c = torch.where(active, n * rate / fa, 0.0)
            t1 = {k: c * t for k, t in f.tangents.items()}
        return Scalar._make(rate, f.sub_batch_ndim, t1, None)
