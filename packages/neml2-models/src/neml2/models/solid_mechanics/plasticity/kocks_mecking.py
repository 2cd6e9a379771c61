"""Kocks-Mecking: temperature- and rate-dependent flow from a normalized activation energy.

The Kocks-Mecking diagram plots the flow stress normalized by the shear modulus
``μ`` against the normalized activation energy ``g = kT/(μb³) log(ε̇₀/ε̇)``. Its
linear (rate-dependent) branch, slope ``A`` and intercept ``B``, gives a Perzyna
viscosity and rate sensitivity; its horizontal branch, at height ``C``, a
rate-independent yield stress; the branches meet at ``g₀ = (C - B)/A``. ``k`` is
the Boltzmann constant, ``b`` the Burgers vector length, ``T`` the absolute
temperature and ``ε̇₀`` a reference strain rate. All variables and parameters are
Scalars ``(*B,)``; ``k``, ``b`` and ``eps0`` are plain numbers.
"""

from __future__ import annotations

import math

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.models.common._block_output import BlockNamedOutput
from neml2.tensors import Scalar, exp, log, tanh

_K = option("k", float, bounds="(0, inf)", doc="the Boltzmann constant k")
_BURGERS = option("b", float, bounds="(0, inf)", doc="the Burgers vector length b")
_EPS0 = option("eps0", float, bounds="(0, inf)", doc="the reference strain rate ε̇₀")
_MU = parameter("shear_modulus", Scalar, bounds="(0, inf)", doc="the shear modulus μ")
_T = input("temperature", Scalar, doc="absolute temperature T")


class _KocksMecking(Model):
    """Base of the Kocks-Mecking models (their plain-number options are positive: the
    schema's ``bounds``)."""

    @property
    def _b3(self) -> float:
        return self.opts["b"] ** 3


@register()
class KocksMeckingActivationEnergy(_KocksMecking):
    """Normalized activation energy ``g = kT / (μ b³) · log(ε̇₀ / ε̇)``.

    ``ε̇`` is the current (effective) strain rate (> 0).
    """

    fields = (
        _T,
        input("strain_rate", Scalar, doc="effective strain rate ε̇"),
        output("activation_energy", Scalar, doc="normalized activation energy g"),
        _MU,
        _EPS0,
        _K,
        _BURGERS,
    )

    def forward(self, temperature: Scalar, strain_rate: Scalar) -> Scalar:
        mu = self.param("shear_modulus")
        return self.opts["k"] * temperature / (mu * self._b3) * log(self.opts["eps0"] / strain_rate)


@register()
class KocksMeckingFlowSwitch(Model):
    """Soft switch between a rate-independent and a rate-dependent flow rate.

    ``γ̇ = s γ̇_rd + (1 - s) γ̇_ri`` with ``s = (1 + tanh(a (g - g₀))) / 2``: below the
    critical activation energy ``g₀`` the rate-independent rate ``γ̇_ri`` dominates,
    above it the rate-dependent ``γ̇_rd``; ``a`` (``sharpness``) sets the width of the
    transition.
    """

    fields = (
        input("activation_energy", Scalar, doc="normalized activation energy g"),
        input("rate_independent_flow_rate", Scalar, doc="rate-independent flow rate γ̇_ri"),
        input("rate_dependent_flow_rate", Scalar, doc="rate-dependent flow rate γ̇_rd"),
        output("flow_rate", Scalar, doc="the mixed flow rate γ̇"),
        parameter("g0", Scalar, doc="critical activation energy g₀"),
        option("sharpness", float, 1.0, doc="steepness a of the tanh switch"),
    )

    def forward(self, g: Scalar, rate_ri: Scalar, rate_rd: Scalar) -> Scalar:
        s = (tanh(self.opts["sharpness"] * (g - self.param("g0"))) + 1.0) * 0.5
        return s * rate_rd + (1.0 - s) * rate_ri


@register()
class KocksMeckingFlowViscosity(BlockNamedOutput, _KocksMecking):
    """Perzyna flow viscosity ``η = exp(B) μ ε̇₀^(k T A / (μ b³))``.

    ``A`` and ``B`` are the slope and intercept of the rate-dependent branch. The
    output (``viscosity``) is named after the ``[Models]`` block by default.
    """

    OUTPUT_OPTION = "viscosity"
    fields = (
        _T,
        output("viscosity", Scalar, doc="flow viscosity η (default: the block name)"),
        parameter("A", Scalar, doc="Kocks-Mecking slope A"),
        parameter("B", Scalar, doc="Kocks-Mecking intercept B"),
        _MU,
        _EPS0,
        _K,
        _BURGERS,
    )

    def forward(self, temperature: Scalar) -> Scalar:
        A, B, mu = self.param("A"), self.param("B"), self.param("shear_modulus")
        power = self.opts["k"] * temperature * A / (mu * self._b3)
        return exp(B + power * math.log(self.opts["eps0"])) * mu


@register()
class KocksMeckingIntercept(Model):
    """Critical activation energy ``g₀ = (C - B) / A`` where the two branches meet."""

    fields = (
        output("intercept", Scalar, doc="critical activation energy g₀"),
        parameter("A", Scalar, doc="Kocks-Mecking slope A"),
        parameter("B", Scalar, doc="Kocks-Mecking intercept B"),
        parameter("C", Scalar, doc="Kocks-Mecking horizontal value C"),
    )

    def forward(self) -> Scalar:
        return (self.param("C") - self.param("B")) / self.param("A")


@register()
class KocksMeckingRateSensitivity(_KocksMecking):
    """Perzyna rate sensitivity ``n = -μ b³ / (k T A)`` (positive for a slope ``A < 0``)."""

    fields = (
        _T,
        output("rate_sensitivity", Scalar, doc="rate sensitivity n"),
        parameter("A", Scalar, doc="Kocks-Mecking slope A"),
        _MU,
        _K,
        _BURGERS,
    )

    def forward(self, temperature: Scalar) -> Scalar:
        A, mu = self.param("A"), self.param("shear_modulus")
        return -mu * self._b3 / (self.opts["k"] * temperature * A)


@register()
class KocksMeckingYieldStress(Model):
    """Rate-independent yield stress ``σ_y = exp(C) μ`` (horizontal branch at ``C``)."""

    fields = (
        output("yield_stress", Scalar, doc="yield stress σ_y"),
        parameter("C", Scalar, doc="Kocks-Mecking horizontal value C"),
        _MU,
    )

    def forward(self) -> Scalar:
        return exp(self.param("C")) * self.param("shear_modulus")
