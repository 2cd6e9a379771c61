"""Slip strength maps: the strength of every slip system from the hardening variables."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import (
    GEOMETRY_NAME_COMPAT,
    CrystalModel,
)
from neml2.tensors import Scalar, sqrt


@register()
class SingleSlipStrengthMap(CrystalModel):
    """One hardening variable for all systems: ``τ̂_i = τ̄ + τ_0`` for ``i = 1..nslip``.

    ``τ̄`` (``slip_hardening``) is an evolving strength shared by every slip system
    and ``τ_0`` (``constant_strength``) a constant. The output gains a trailing
    sub-batch axis of length ``nslip`` (the crystal geometry's slip count).
    """

    fields = (
        output("slip_strengths", Scalar, doc="per-slip slip strengths"),
        input("slip_hardening", Scalar, doc="the evolving strength shared by all systems"),
        parameter("constant_strength", Scalar, bounds="[0, inf)", doc="constant strength τ_0"),
    )

    def setup(self) -> None:
        super().setup()
        self.register_buffer("slip_ones", torch.ones(self.nslip, dtype=torch.float64))

    def forward(self, slip_hardening: Scalar) -> Scalar:
        per_slip = slip_hardening.sub_batch.unsqueeze(-1) + self.param("constant_strength")
        return per_slip * Scalar(self.slip_ones, 1)


@register()
class DislocationObstacleStrengthMap(Model):
    """Taylor obstacle strength ``τ̂_i = τ_0 + α μ b sqrt(ρ_i)`` per slip system.

    ``ρ_i`` the dislocation density of system ``i`` (per-slip ``Scalar``), ``τ_0`` a
    constant strength, ``α`` the interaction coefficient, ``μ`` the shear modulus and
    ``b`` the Burgers vector length.
    """

    fields = (
        output("slip_strengths", Scalar, doc="per-slip slip strengths"),
        input("dislocation_density", Scalar, doc="per-slip dislocation density ρ_i"),
        parameter("constant_strength", Scalar, bounds="[0, inf)", doc="constant strength τ_0"),
        parameter("alpha", Scalar, bounds="[0, inf)", doc="interaction coefficient α"),
        parameter("mu", Scalar, bounds="(0, inf)", doc="shear modulus μ"),
        parameter("b", Scalar, bounds="(0, inf)", doc="Burgers vector length b"),
        GEOMETRY_NAME_COMPAT,
    )

    def forward(self, dislocation_density: Scalar) -> Scalar:
        coef = self.param("alpha") * self.param("mu") * self.param("b")
        return self.param("constant_strength") + coef * sqrt(dislocation_density)
