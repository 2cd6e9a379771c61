"""Test-only models that the reference suite's regression inputs name.

The reference library registers these in its own test harness (they are not part of
its model catalogue): ``SurrogateFlowRate`` (a stand-in for a trained flow-rate
network) and ``TabulatedPolynomialModel`` (a tiled polynomial rate model). They are
written here on the typed algebra, so their derivatives come from it like any
model's. Importing this module registers them.
"""

from __future__ import annotations

import math

from neml2.models import Model, input, option, output, parameter, register
from neml2.tensors import Scalar, exp, tanh, where


@register()
class SurrogateFlowRate(Model):
    """A closed-form viscoplastic law standing in for a trained flow-rate network.

    ``ε̇ = exp(-Q/(R T)) (exp(-G/G₀) + exp(-C/C₀)) ⟨(s - s_y)/η⟩ⁿ`` with the
    grain size ``G = 0.1``, stoichiometry ``C = 0.2``, ``s_y = 1000``, ``η = 10``,
    ``n = 3``, ``G₀ = 0.003``, ``C₀ = 0.004``, ``Q = 50000``, ``R = 8.3145``.
    Scalars ``(*B)``.
    """

    SY, ETA, N, G0, C0, Q, R, G, C = 1000.0, 10.0, 3.0, 0.003, 0.004, 5e4, 8.3145, 0.1, 0.2

    fields = (
        input("von_mises_stress", Scalar, doc="von Mises stress s"),
        input("temperature", Scalar, doc="temperature T"),
        output("equivalent_plastic_strain_rate", Scalar, doc="equivalent plastic strain rate"),
    )

    def forward(self, s: Scalar, T: Scalar) -> Scalar:
        over = (s - self.SY) / self.ETA
        active = over > 0.0
        power = where(active, where(active, over, 1.0) ** self.N, 0.0)
        scale = math.exp(-self.G / self.G0) + math.exp(-self.C / self.C0)
        return exp(-self.Q / self.R / T) * scale * power


def _sigmoid(x: Scalar) -> Scalar:
    return 0.5 * (tanh(0.5 * x) + 1.0)


@register()
class TabulatedPolynomialModel(Model):
    """Rates from quadratic polynomials on smoothly blended (stress, temperature) tiles.

    With ``x = (s, T, s₁, s₂)``: ``y_k = Σ_ij I_i(s) J_j(T) (A0_ijk + Σ_l A1_ijkl x_l +
    Σ_l A2_ijkl x_l²)``, where the tile weights are
    ``I_i(s) = (σ(a (s - s_lb,i)) - σ(a (s - s_ub,i))) / 2`` (likewise ``J_j`` in
    ``T``), ``σ`` the logistic function and ``a`` the ``index_sharpness``. ``A0``
    ``(ns, nT, 3)``, ``A1``/``A2`` ``(ns, nT, 3, 4)`` and the tile bounds are
    ``[Tensors]`` names; ``y`` = (equivalent plastic strain rate, s₁ rate, s₂ rate).
    """

    fields = (
        input("von_mises_stress", Scalar, doc="von Mises stress s"),
        input("temperature", Scalar, doc="temperature T"),
        input("internal_state_1", Scalar, doc="internal state s₁"),
        input("internal_state_2", Scalar, doc="internal state s₂"),
        output("equivalent_plastic_strain_rate", Scalar, doc="equivalent plastic strain rate"),
        output("internal_state_1_rate", Scalar, doc="rate of s₁"),
        output("internal_state_2_rate", Scalar, doc="rate of s₂"),
        *(
            parameter(name, Scalar, doc=doc, allow_nonlinear=False, buffer=True)
            for name, doc in (
                ("A0", "constant coefficients (ns, nT, 3)"),
                ("A1", "linear coefficients (ns, nT, 3, 4)"),
                ("A2", "quadratic coefficients (ns, nT, 3, 4)"),
                ("stress_tile_lower_bounds", "lower stress bound of each tile (ns,)"),
                ("stress_tile_upper_bounds", "upper stress bound of each tile (ns,)"),
                ("temperature_tile_lower_bounds", "lower temperature bound of each tile (nT,)"),
                ("temperature_tile_upper_bounds", "upper temperature bound of each tile (nT,)"),
            )
        ),
        option("index_sharpness", float, 1.0, doc="sharpness a of the tile weights"),
    )

    def _raw(self, name: str):
        return getattr(self, name)

    def _weights(self, x: Scalar, which: str) -> Scalar:
        """``(σ(a(x - lb)) - σ(a(x - ub))) / 2`` with the tiles on one sub-batch axis."""
        a = self.opts["index_sharpness"]
        lb = Scalar(self._raw(f"{which}_tile_lower_bounds"), 1)
        ub = Scalar(self._raw(f"{which}_tile_upper_bounds"), 1)
        x = x.sub_batch.unsqueeze(-1)  # the tile axis after any sub-batch axes of x
        return 0.5 * (_sigmoid(a * (x - lb)) - _sigmoid(a * (x - ub)))

    def forward(self, s: Scalar, T: Scalar, s1: Scalar, s2: Scalar):
        tiles = self._weights(s, "stress").sub_batch.unsqueeze(-1) * self._weights(
            T, "temperature"
        ).sub_batch.unsqueeze(-2)
        A0, A1, A2 = self._raw("A0"), self._raw("A1"), self._raw("A2")
        # the two tile axes after any sub-batch axes of the inputs
        xs = [x.sub_batch.unsqueeze(-1).sub_batch.unsqueeze(-1) for x in (s, T, s1, s2)]
        out = []
        for k in range(A0.shape[-1]):
            cell = Scalar(A0[..., k], 2)
            for j, x in enumerate(xs):
                cell = cell + Scalar(A1[..., k, j], 2) * x + Scalar(A2[..., k, j], 2) * (x * x)
            out.append((tiles * cell).sub_batch.sum(-1).sub_batch.sum(-1))
        return tuple(out)
