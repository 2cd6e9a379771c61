"""Linear viscoelasticity: the dashpot leaf and the canned spring-dashpot networks.

Springs (``σ = E ε``) and Newtonian dashpots (``σ = η ε̇``) act component-wise on
the Mandel vectors of stress and strain, so one modulus serves both the
deviatoric and the volumetric response. Every internal strain of a network
is an input; the model gives its rate ``<name>_rate``, which a
``SR2BackwardEulerTimeIntegration`` turns into a residual for an
``ImplicitUpdate``. Arbitrary networks are composed from ``LinearDashpot``
and ``SR2LinearCombination`` springs.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._naming import RATE
from neml2.models._registry import register
from neml2.models._schema import derived, input, output, parameter
from neml2.tensors import SR2, Scalar


@register()
class LinearDashpot(Model):
    """Newtonian dashpot: ``ε̇ᵥ = σ / η``.

    Shapes: stress and viscous strain rate ``(*B, 6)`` Mandel, viscosity ``η``
    ``(*B,)`` Scalar. The leaf of any custom rheological network.
    """

    fields = (
        input("stress", SR2, doc="stress acting across the dashpot"),
        output(
            "viscous_strain_rate",
            SR2,
            doc="rate of the dashpot strain (name it after the integrated variable's rate)",
        ),
        parameter("viscosity", Scalar, bounds="(0, inf)", doc="dashpot viscosity η"),
    )

    def forward(self, stress: SR2) -> SR2:
        return stress / self.param("viscosity")


@register()
class KelvinVoigtElement(Model):
    """Kelvin-Voigt element (spring and dashpot in parallel): ``σ = E ε + η ε̇``.

    Inputs: ``strain`` ``ε`` and its rate ``<strain>_rate`` ``ε̇`` (e.g. from an
    ``SR2VariableRate``); output ``stress``. Shapes ``(*B, 6)`` Mandel; ``E``,
    ``η`` Scalars.
    """

    fields = (
        input(
            "strain",
            SR2,
            doc="strain shared by the spring and the dashpot (its rate is <strain>_rate)",
        ),
        output("stress", SR2, doc="stress of the element"),
        parameter("modulus", Scalar, bounds="[0, inf)", doc="spring modulus E"),
        parameter("viscosity", Scalar, bounds="(0, inf)", doc="dashpot viscosity η"),
    )

    derives = (derived(RATE, "strain", doc="the strain rate ε̇ read by the dashpot"),)

    def setup(self) -> None:
        self.declare_input(self.derived_name(RATE, "strain"), SR2)

    def forward(self, strain: SR2, strain_rate: SR2) -> SR2:
        return self.param("modulus") * strain + self.param("viscosity") * strain_rate


@register()
class ZenerElement(Model):
    """Zener element (standard linear solid): a spring ``E∞`` in parallel with a
    Maxwell branch (spring ``E_M`` in series with a dashpot ``η_M``).

    ``σ = E∞ ε + E_M (ε - εᵥ)``, ``ε̇ᵥ = E_M (ε - εᵥ) / η_M``.

    Inputs ``strain`` ``ε`` and ``viscous_strain`` ``εᵥ``; outputs ``stress`` and
    ``<viscous_strain>_rate``. Shapes ``(*B, 6)`` Mandel; moduli and viscosity Scalars.
    """

    fields = (
        input("strain", SR2, doc="total strain"),
        input("viscous_strain", SR2, doc="dashpot strain of the Maxwell branch"),
        output("stress", SR2, doc="total stress"),
        parameter(
            "equilibrium_modulus", Scalar, bounds="[0, inf)", doc="equilibrium spring modulus E∞"
        ),
        parameter(
            "maxwell_modulus", Scalar, bounds="[0, inf)", doc="Maxwell branch spring modulus E_M"
        ),
        parameter(
            "maxwell_viscosity",
            Scalar,
            bounds="(0, inf)",
            doc="Maxwell branch dashpot viscosity η_M",
        ),
    )

    derives = (derived(RATE, "viscous_strain", output=True),)

    def setup(self) -> None:
        self.declare_output(self.derived_name(RATE, "viscous_strain"), SR2)

    def forward(self, strain: SR2, viscous_strain: SR2) -> tuple[SR2, SR2]:
        branch = self.param("maxwell_modulus") * (strain - viscous_strain)
        stress = self.param("equilibrium_modulus") * strain + branch
        return stress, branch / self.param("maxwell_viscosity")


@register()
class WiechertElement(Model):
    """Wiechert element (generalized Maxwell): a spring ``E∞`` in parallel with two
    Maxwell branches ``(E_i, η_i)``.

    ``σ = E∞ ε + Σᵢ E_i (ε - εᵥ,ᵢ)``, ``ε̇ᵥ,ᵢ = E_i (ε - εᵥ,ᵢ) / η_i`` (i = 1, 2).

    Inputs ``strain``, ``viscous_strain_1``, ``viscous_strain_2``; outputs
    ``stress``, ``<viscous_strain_1>_rate``, ``<viscous_strain_2>_rate``.
    Shapes ``(*B, 6)`` Mandel; moduli and viscosities Scalars.
    """

    fields = (
        input("strain", SR2, doc="total strain"),
        input("viscous_strain_1", SR2, doc="dashpot strain of the first Maxwell branch"),
        input("viscous_strain_2", SR2, doc="dashpot strain of the second Maxwell branch"),
        output("stress", SR2, doc="total stress"),
        parameter(
            "equilibrium_modulus", Scalar, bounds="[0, inf)", doc="equilibrium spring modulus E∞"
        ),
        parameter(
            "modulus_1", Scalar, bounds="[0, inf)", doc="spring modulus E_1 of the first branch"
        ),
        parameter(
            "viscosity_1",
            Scalar,
            bounds="(0, inf)",
            doc="dashpot viscosity η_1 of the first branch",
        ),
        parameter(
            "modulus_2", Scalar, bounds="[0, inf)", doc="spring modulus E_2 of the second branch"
        ),
        parameter(
            "viscosity_2",
            Scalar,
            bounds="(0, inf)",
            doc="dashpot viscosity η_2 of the second branch",
        ),
    )

    derives = (
        derived(RATE, "viscous_strain_1", output=True),
        derived(RATE, "viscous_strain_2", output=True),
    )

    def setup(self) -> None:
        self.declare_output(self.derived_name(RATE, "viscous_strain_1"), SR2)
        self.declare_output(self.derived_name(RATE, "viscous_strain_2"), SR2)

    def forward(self, strain: SR2, ev1: SR2, ev2: SR2) -> tuple[SR2, SR2, SR2]:
        s1 = self.param("modulus_1") * (strain - ev1)
        s2 = self.param("modulus_2") * (strain - ev2)
        stress = self.param("equilibrium_modulus") * strain + s1 + s2
        return stress, s1 / self.param("viscosity_1"), s2 / self.param("viscosity_2")


@register()
class BurgersElement(Model):
    """Burgers element: a Maxwell element ``(E_M, η_M)`` in series with a
    Kelvin-Voigt block ``(E_K, η_K)``, all under one stress.

    ``σ = E_M (ε - εᵥᴹ - εᴷ)``, ``ε̇ᵥᴹ = σ / η_M``, ``ε̇ᴷ = (σ - E_K εᴷ) / η_K``.

    Inputs ``strain``, ``maxwell_viscous_strain`` ``εᵥᴹ``, ``kelvin_voigt_strain``
    ``εᴷ``; outputs ``stress`` and the rates ``<maxwell_viscous_strain>_rate``,
    ``<kelvin_voigt_strain>_rate``. Shapes ``(*B, 6)`` Mandel; moduli and
    viscosities Scalars.
    """

    fields = (
        input("strain", SR2, doc="total strain"),
        input("maxwell_viscous_strain", SR2, doc="dashpot strain of the Maxwell element"),
        input("kelvin_voigt_strain", SR2, doc="strain of the Kelvin-Voigt block"),
        output("stress", SR2, doc="stress shared by the Maxwell and Kelvin-Voigt parts"),
        parameter("maxwell_modulus", Scalar, bounds="[0, inf)", doc="Maxwell spring modulus E_M"),
        parameter(
            "maxwell_viscosity", Scalar, bounds="(0, inf)", doc="Maxwell dashpot viscosity η_M"
        ),
        parameter(
            "kelvin_modulus", Scalar, bounds="[0, inf)", doc="Kelvin-Voigt spring modulus E_K"
        ),
        parameter(
            "kelvin_viscosity", Scalar, bounds="(0, inf)", doc="Kelvin-Voigt dashpot viscosity η_K"
        ),
    )

    derives = (
        derived(RATE, "maxwell_viscous_strain", output=True),
        derived(RATE, "kelvin_voigt_strain", output=True),
    )

    def setup(self) -> None:
        self.declare_output(self.derived_name(RATE, "maxwell_viscous_strain"), SR2)
        self.declare_output(self.derived_name(RATE, "kelvin_voigt_strain"), SR2)

    def forward(self, strain: SR2, evm: SR2, ek: SR2) -> tuple[SR2, SR2, SR2]:
        stress = self.param("maxwell_modulus") * (strain - evm - ek)
        evm_rate = stress / self.param("maxwell_viscosity")
        ek_rate = (stress - self.param("kelvin_modulus") * ek) / self.param("kelvin_viscosity")
        return stress, evm_rate, ek_rate
