"""Elastic strain energy density split into the part that drives fracture (active)
and the part that does not (inactive)."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.models.solid_mechanics.elasticity import (
    COEFFICIENTS,
    bulk_shear,
    declare_isotropic_coefficients,
)
from neml2.tensors import SR2, Scalar, macaulay

#: decomposition -> what it does
DECOMPOSITIONS = {
    "NONE": "the whole energy is active",
    "VOLDEV": "compressive volumetric energy is inactive",
}


@register()
class LinearIsotropicStrainEnergyDensity(Model):
    """Isotropic strain energy ``ψ = ½ K tr(ε)² + G dev(ε):dev(ε)`` split as ``ψ⁺ + ψ⁻``.

    The active part ``ψ⁺`` is degraded by the phase field, the inactive part ``ψ⁻``
    is not:

    * ``decomposition = NONE``: ``ψ⁺ = ψ``, ``ψ⁻ = 0``;
    * ``decomposition = VOLDEV``: ``ψ⁺ = ½ K ⟨tr ε⟩₊² + G dev(ε):dev(ε)``,
      ``ψ⁻ = ½ K ⟨-tr ε⟩₊²`` (compression does not drive fracture).

    ``K, G`` follow from any two of Young's modulus, Poisson's ratio, bulk modulus,
    shear modulus and Lamé's λ (``coefficients`` / ``coefficient_types``).
    Shapes: strain ``(*B, 6)`` Mandel; ``ψ⁺, ψ⁻`` Scalars ``(*B,)``.
    """

    fields = (
        input("strain", SR2, doc="(elastic) strain ε"),
        output("active_strain_energy_density", Scalar, doc="active part ψ⁺"),
        output("inactive_strain_energy_density", Scalar, doc="inactive part ψ⁻"),
        parameter("coefficients", Scalar, many=True, doc="the two elastic coefficients"),
        option(
            "coefficient_types",
            str,
            many=True,
            choices=tuple(COEFFICIENTS),
            doc="what each coefficient is",
        ),
        option(
            "decomposition",
            str,
            "NONE",
            doc="energy split: NONE (all active) or VOLDEV (volumetric compression inactive)",
        ),
    )

    def setup(self) -> None:
        kind = self.opts["decomposition"]
        if kind not in DECOMPOSITIONS:
            extra = " (SPECTRAL is not implemented)" if kind == "SPECTRAL" else ""
            raise self.error(
                f"decomposition = '{kind}' is not one of {', '.join(DECOMPOSITIONS)}{extra}",
                "decomposition",
            )
        self._coef_names = declare_isotropic_coefficients(self)

    def forward(self, strain: SR2) -> tuple[Scalar, Scalar]:
        K, G = bulk_shear({n: self.param(n) for n in self._coef_names})
        e = strain.dev()
        shear = G * e.inner(e)
        t = strain.tr()
        if self.opts["decomposition"] == "NONE":
            return 0.5 * K * t * t + shear, 0.0 * t
        tp, tn = macaulay(t), macaulay(-t)
        return 0.5 * K * tp * tp + shear, 0.5 * K * tn * tn
