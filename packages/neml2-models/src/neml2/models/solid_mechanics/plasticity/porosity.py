"""Porous plasticity: the Gurson-Tvergaard-Needleman yield surface, void growth and the
sintering stress."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import SR2, Scalar, cosh, tr


@register()
class GTNYieldFunction(Model):
    """Gurson-Tvergaard-Needleman yield function.

    ``f = (s̄ / σ_f)² + 2 q₁ φ cosh(q₂ p / (2 σ_f)) - (1 + q₃ φ²)``, ``σ_f = σ_y + h``

    with ``s̄`` the invariant driving plastic flow (``flow_invariant``, e.g. the von
    Mises stress), ``p`` the one driving porous flow (``poro_invariant``, e.g. the
    first invariant of the stress), ``φ`` the void fraction, ``σ_y`` the yield stress
    and ``h`` the isotropic hardening (without the ``isotropic_hardening`` option,
    ``σ_f = σ_y``). ``q₁``, ``q₂``, ``q₃`` weigh the void mechanisms. All Scalars
    ``(*B)``.
    """

    fields = (
        input("flow_invariant", Scalar, doc="effective stress driving plastic flow s̄"),
        input("poro_invariant", Scalar, doc="effective stress driving porous flow p"),
        input("void_fraction", Scalar, doc="void fraction (porosity) φ"),
        output("yield_function", Scalar, doc="yield function f"),
        parameter("yield_stress", Scalar, bounds="(0, inf)", doc="yield stress σ_y"),
        parameter("q1", Scalar, doc="balance between plastic flow and void evolution q₁"),
        parameter("q2", Scalar, doc="void evolution rate q₂"),
        parameter("q3", Scalar, doc="pore pressure q₃"),
        option(
            "isotropic_hardening",
            str,
            "",
            doc="name of the isotropic hardening input h; leave out for no hardening",
        ),
    )

    def setup(self) -> None:
        h = self.opts["isotropic_hardening"].strip()
        if len(h.split()) > 1:
            raise self.error(f"takes one variable name, got '{h}'", "isotropic_hardening")
        if h:
            self.declare_input(h, Scalar)

    def forward(self, s: Scalar, p: Scalar, phi: Scalar, *h: Scalar) -> Scalar:
        sf = self.param("yield_stress")
        if h:
            sf = sf + h[0]
        q1, q2, q3 = self.param("q1"), self.param("q2"), self.param("q3")
        return (s / sf) ** 2 + 2.0 * q1 * phi * cosh(q2 * p / (2.0 * sf)) - (1.0 + q3 * phi**2)


@register()
class GursonCavitation(Model):
    """Void growth by mass balance, ``φ̇ = (1 - φ) tr(ε̇ᵖ)``.

    ``φ`` is the void fraction (Scalar ``(*B)``), ``ε̇ᵖ`` the plastic strain rate
    (SR2 ``(*B, 6)``); the output is the void fraction rate (Scalar).
    """

    fields = (
        input("plastic_strain_rate", SR2, doc="plastic strain rate ε̇ᵖ"),
        input("void_fraction", Scalar, doc="void fraction φ"),
        output("void_fraction_rate", Scalar, doc="void fraction rate φ̇"),
    )

    def forward(self, plastic_strain_rate: SR2, void_fraction: Scalar) -> Scalar:
        return (1.0 - void_fraction) * tr(plastic_strain_rate)


@register()
class OlevskySinteringStress(Model):
    """Olevsky-Skorohod sintering stress ``σ_s = 3 γ φ² / r``.

    ``γ`` is the surface tension, ``r`` the particle radius and ``φ`` the void
    fraction; used with porous yield functions such as ``GTNYieldFunction``. Scalars
    ``(*B)``.
    """

    fields = (
        input("void_fraction", Scalar, doc="void fraction φ"),
        output("sintering_stress", Scalar, doc="sintering stress σ_s"),
        parameter("surface_tension", Scalar, doc="surface tension γ"),
        parameter("particle_radius", Scalar, bounds="(0, inf)", doc="particle radius r"),
    )

    def forward(self, void_fraction: Scalar) -> Scalar:
        gamma, r = self.param("surface_tension"), self.param("particle_radius")
        return 3.0 * gamma * void_fraction**2 / r
