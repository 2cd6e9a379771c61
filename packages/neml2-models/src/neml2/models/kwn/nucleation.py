"""KWN precipitation: classical nucleation theory (barrier, critical radius, Zeldovich and
kinetic factors, nucleation flux)."""

from __future__ import annotations

import math

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, exp, sqrt


@register()
class NucleationBarrierAndCriticalRadius(Model):
    """Critical radius and Gibbs free energy barrier of a spherical nucleus.

    ``R* = 2 γ V_m / Δg`` and ``ΔG* = (16/3) π γ³ V_m² / Δg²`` with ``γ`` the
    surface energy, ``Δg`` the total (molar) Gibbs free energy difference
    driving nucleation and ``V_m`` the molar volume of the precipitate. All
    ``(*B,)`` Scalars; ``γ`` and ``Δg`` are parameters that may be promoted to
    inputs (a variable name) or come from other models.
    """

    fields = (
        parameter("surface_energy", Scalar, bounds="(0, inf)", doc="γ"),
        parameter("total_gibbs_free_energy_difference", Scalar, doc="Δg"),
        parameter("molar_volume", Scalar, bounds="(0, inf)", doc="V_m"),
        output("nucleation_barrier", Scalar, doc="ΔG*"),
        output("critical_radius", Scalar, doc="R*"),
    )

    def forward(self) -> tuple[Scalar, Scalar]:
        gamma = self.param("surface_energy")
        dg = self.param("total_gibbs_free_energy_difference")
        V_m = self.param("molar_volume")
        barrier = (16.0 / 3.0 * math.pi) * gamma**3 * V_m**2 / (dg * dg)
        return barrier, 2.0 * gamma * V_m / dg


@register()
class ZeldovichFactor(Model):
    """Zeldovich factor ``Z = V_m / (2 π N_A R*²) sqrt(γ / (k T))``.

    ``R*`` the critical radius (input), ``γ`` the surface energy, ``T`` the
    temperature (a parameter here, as in the reference library; give a
    variable name to make it an input), ``V_m`` the molar volume, ``N_A``
    Avogadro's number and ``k`` the Boltzmann constant. All ``(*B,)`` Scalars.
    """

    fields = (
        input("critical_radius", Scalar, doc="R*"),
        parameter("surface_energy", Scalar, bounds="(0, inf)", doc="γ"),
        parameter("temperature", Scalar, bounds="(0, inf)", doc="T"),
        parameter("molar_volume", Scalar, bounds="(0, inf)", doc="V_m"),
        parameter("avogadro_number", Scalar, bounds="(0, inf)", doc="N_A"),
        parameter("boltzmann_constant", Scalar, bounds="(0, inf)", doc="k"),
        output("zeldovich_factor", Scalar, doc="Z"),
    )

    def forward(self, R: Scalar) -> Scalar:
        coef = self.param("molar_volume") / (2.0 * math.pi * self.param("avogadro_number") * R * R)
        T = self.param("temperature")
        require(self, "parameter 'temperature' (T)", T, "(0, inf)", "Z takes sqrt(γ / (k T))")
        kT = self.param("boltzmann_constant") * T
        return coef * sqrt(self.param("surface_energy") / kT)


@register()
class KineticFactor(Model):
    """Nucleation kinetic factor ``β = 4 π R*² (N_A / V_m)^(4/3) / S``.

    ``R*`` the critical radius and ``S`` the projected diffusivity sum
    (inputs), ``V_m`` the molar volume and ``N_A`` Avogadro's number. All
    ``(*B,)`` Scalars.
    """

    fields = (
        input("critical_radius", Scalar, doc="R*"),
        input("projected_diffusivity_sum", Scalar, doc="S"),
        parameter("molar_volume", Scalar, bounds="(0, inf)", doc="V_m"),
        parameter("avogadro_number", Scalar, bounds="(0, inf)", doc="N_A"),
        output("kinetic_factor", Scalar, doc="β"),
    )

    def forward(self, R: Scalar, S: Scalar) -> Scalar:
        density = (self.param("avogadro_number") / self.param("molar_volume")) ** (4.0 / 3.0)
        return 4.0 * math.pi * density * R * R / S


@register()
class NucleationFluxMagnitude(Model):
    """Nucleation rate (without the Dirac delta at the critical radius).

    ``J = Z β N_0 exp(-ΔG* / (k T))`` with ``Z`` the Zeldovich factor, ``β``
    the kinetic factor, ``ΔG*`` the nucleation barrier, ``T`` the temperature
    (inputs), ``N_0`` the nucleation site density and ``k`` the Boltzmann
    constant. All ``(*B,)`` Scalars.
    """

    fields = (
        input("zeldovich_factor", Scalar, doc="Z"),
        input("kinetic_factor", Scalar, doc="β"),
        input("nucleation_barrier", Scalar, doc="ΔG*"),
        input("temperature", Scalar, doc="T"),
        parameter("nucleation_site_density", Scalar, bounds="[0, inf)", doc="N_0"),
        parameter("boltzmann_constant", Scalar, bounds="(0, inf)", doc="k"),
        output("nucleation_flux_magnitude", Scalar, doc="J"),
    )

    def forward(self, Z: Scalar, beta: Scalar, barrier: Scalar, T: Scalar) -> Scalar:
        require(self, f"input '{self.var['temperature']}' (the temperature T)", T, "(0, inf)")
        arg = -barrier / (self.param("boltzmann_constant") * T)
        return Z * beta * self.param("nucleation_site_density") * exp(arg)
