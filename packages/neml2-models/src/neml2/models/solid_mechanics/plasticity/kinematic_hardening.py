"""Kinematic hardening: back stress from a strain-like variable, or back-stress evolution."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._naming import RATE
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import SR2, Scalar


@register()
class LinearKinematicHardening(Model):
    """Linear kinematic hardening ``X = H Kp``.

    Shapes: ``kinematic_plastic_strain``, ``back_stress`` ``(*B, 6)`` Mandel.
    """

    fields = (
        input("kinematic_plastic_strain", SR2, doc="kinematic plastic strain Kp"),
        output("back_stress", SR2, doc="back stress X"),
        parameter("hardening_modulus", Scalar, doc="kinematic hardening modulus H"),
    )

    def forward(self, kinematic_plastic_strain: SR2) -> SR2:
        return self.param("hardening_modulus") * kinematic_plastic_strain


@register()
class FredrickArmstrongPlasticHardening(Model):
    """Frederick-Armstrong back-stress evolution ``Ẋ = (2/3 C N_M - g X) γ̇``.

    The back stress ``X`` is itself an internal variable; ``N_M`` is the flow
    direction ``∂f/∂M``, ``γ̇`` the flow rate, ``C`` the kinematic hardening
    coefficient and ``g`` the dynamic recovery coefficient. The output name
    defaults to the back stress name with ``_rate`` appended.
    Shapes: ``flow_rate`` ``(*B)``; SR2s ``(*B, 6)``.
    """

    fields = (
        input("flow_rate", Scalar, doc="flow rate γ̇"),
        input("flow_direction", SR2, doc="flow direction ∂f/∂M (see Normality)"),
        input("back_stress", SR2, doc="back stress X"),
        output(
            "back_stress_rate",
            SR2,
            RATE.template("back_stress"),
            doc="back stress rate (default: <back_stress>_rate)",
        ),
        parameter("C", Scalar, doc="kinematic hardening coefficient C"),
        parameter("g", Scalar, doc="dynamic recovery coefficient g"),
    )

    def _dynamic(self, flow_rate: Scalar, flow_direction: SR2, back_stress: SR2) -> SR2:
        C, g = self.param("C"), self.param("g")
        return flow_rate * ((2.0 / 3.0) * C * flow_direction - g * back_stress)

    def forward(self, flow_rate: Scalar, flow_direction: SR2, back_stress: SR2) -> SR2:
        return self._dynamic(flow_rate, flow_direction, back_stress)


@register()
class ChabochePlasticHardening(FredrickArmstrongPlasticHardening):
    """Chaboche back-stress evolution with static recovery.

    ``Ẋ = (2/3 C N_M - g X) γ̇ - A ‖X‖^(a-1) X``: the Frederick-Armstrong terms
    (kinematic hardening and dynamic recovery) plus static recovery with
    prefactor ``A`` and exponent ``a``. ``‖X‖ = sqrt(X:X + ε)`` with the machine
    epsilon ``ε`` of the dtype, so that the term is smooth at ``X = 0``.
    """

    fields = (
        parameter("A", Scalar, doc="static recovery prefactor A"),
        parameter("a", Scalar, doc="static recovery exponent a"),
    )

    def forward(self, flow_rate: Scalar, flow_direction: SR2, back_stress: SR2) -> SR2:
        s = back_stress.norm(torch.finfo(back_stress.dtype).eps)
        A, a = self.param("A"), self.param("a")
        recovery = A * s ** (a - 1.0) * back_stress
        return self._dynamic(flow_rate, flow_direction, back_stress) - recovery


@register()
class PowerLawKinematicHardeningStaticRecovery(Model):
    """Power-law static recovery of a back stress, ``Ẋ = -(‖X‖/τ)^(n-1) X/τ``.

    ``τ`` is the recovery rate and ``n`` the recovery exponent;
    ``‖X‖ = sqrt(X:X + ε)`` with the machine epsilon ``ε`` of the dtype. The
    output name defaults to the back stress name with ``_rate``
    appended. Shapes: ``(*B, 6)``.
    """

    fields = (
        input("back_stress", SR2, doc="back stress X"),
        output(
            "back_stress_rate",
            SR2,
            RATE.template("back_stress"),
            doc="back stress recovery rate (default: <back_stress>_rate)",
        ),
        parameter("tau", Scalar, doc="static recovery rate τ"),
        parameter("n", Scalar, doc="static recovery exponent n"),
    )

    def forward(self, back_stress: SR2) -> SR2:
        tau, n = self.param("tau"), self.param("n")
        s = back_stress.norm(torch.finfo(back_stress.dtype).eps)
        return -((s / tau) ** (n - 1.0) / tau) * back_stress
