"""Associative flow rules: map the flow rate onto the rates of the internal variables.

With a yield function ``f(M, h, X)`` and the flow rate (consistency parameter) ``γ̇``,
associativity gives the rates from the derivatives of ``f`` (computed by
:class:`~neml2.models.solid_mechanics.plasticity.normality.Normality`):
``ε̇p = γ̇ ∂f/∂M``, ``ε̄̇p = -γ̇ ∂f/∂h``, ``K̇p = -γ̇ ∂f/∂X``.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.tensors import SR2, Scalar

_FLOW_RATE = input("flow_rate", Scalar, doc="flow rate γ̇ (consistency parameter)")


@register()
class AssociativePlasticFlow(Model):
    """Plastic strain rate of associative flow, ``ε̇p = γ̇ N_M`` with ``N_M = ∂f/∂M``.

    Shapes: ``flow_rate`` ``(*B)``; ``flow_direction``, ``plastic_strain_rate`` ``(*B, 6)``.
    """

    fields = (
        _FLOW_RATE,
        input("flow_direction", SR2, doc="flow direction ∂f/∂M (see Normality)"),
        output("plastic_strain_rate", SR2, doc="plastic strain rate ε̇p"),
    )

    def forward(self, flow_rate: Scalar, flow_direction: SR2) -> SR2:
        return flow_rate * flow_direction


@register()
class AssociativeIsotropicPlasticHardening(Model):
    """Equivalent plastic strain rate of associative hardening, ``ε̄̇p = -γ̇ N_h``, ``N_h = ∂f/∂h``.

    All variables are Scalars ``(*B)``.
    """

    fields = (
        _FLOW_RATE,
        input(
            "isotropic_hardening_direction",
            Scalar,
            doc="isotropic hardening direction ∂f/∂h (see Normality)",
        ),
        output("equivalent_plastic_strain_rate", Scalar, doc="equivalent plastic strain rate"),
    )

    def forward(self, flow_rate: Scalar, isotropic_hardening_direction: Scalar) -> Scalar:
        # the rate negated, then one product: the same bits as -(γ̇ N_h), one pass fewer
        # over the tangents on py-eager
        return (-flow_rate) * isotropic_hardening_direction


@register()
class AssociativeKinematicPlasticHardening(Model):
    """Kinematic plastic strain rate of associative hardening, ``K̇p = -γ̇ N_X``, ``N_X = ∂f/∂X``.

    Shapes: ``flow_rate`` ``(*B)``; ``kinematic_hardening_direction``,
    ``kinematic_plastic_strain_rate`` ``(*B, 6)``.
    """

    fields = (
        _FLOW_RATE,
        input(
            "kinematic_hardening_direction",
            SR2,
            doc="kinematic hardening direction ∂f/∂X (see Normality)",
        ),
        output("kinematic_plastic_strain_rate", SR2, doc="kinematic plastic strain rate K̇p"),
    )

    def forward(self, flow_rate: Scalar, kinematic_hardening_direction: SR2) -> SR2:
        # (-γ̇) N_X: the same bits as -(γ̇ N_X), without a negation pass over the SR2
        # tangents on py-eager
        return (-flow_rate) * kinematic_hardening_direction
