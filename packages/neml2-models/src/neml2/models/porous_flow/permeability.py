"""Porosity-permeability relations ``K(φ)`` with reference values ``(φ0, K0)``."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar, exp


class PorosityPermeabilityRelation(Model):
    """Base: Scalar porosity ``φ`` in, Scalar permeability ``K`` out, both ``(*B,)``."""

    fields = (
        input("porosity", Scalar, doc="porosity φ"),
        output("permeability", Scalar, doc="the porosity-dependent permeability K"),
        parameter(
            "reference_permeability", Scalar, bounds="[0, inf)", doc="reference permeability K0"
        ),
        parameter("reference_porosity", Scalar, doc="reference porosity φ0"),
    )


@register()
class PowerLawPermeability(PorosityPermeabilityRelation):
    """Power law ``K = K0 (φ / φ0)ᵖ``; all Scalars ``(*B,)``."""

    fields = (parameter("exponent", Scalar, doc="power-law exponent p"),)

    def forward(self, phi: Scalar) -> Scalar:
        ratio = phi / self.param("reference_porosity")
        return self.param("reference_permeability") * ratio ** self.param("exponent")


@register()
class ExponentialLawPermeability(PorosityPermeabilityRelation):
    """Exponential law ``K = K0 exp(a (φ0 - φ))``; all Scalars ``(*B,)``."""

    fields = (parameter("scale", Scalar, doc="scaling constant a"),)

    def forward(self, phi: Scalar) -> Scalar:
        a = self.param("scale")
        return self.param("reference_permeability") * exp(
            a * (self.param("reference_porosity") - phi)
        )


@register()
class KozenyCarmanPermeability(PorosityPermeabilityRelation):
    """Kozeny-Carman law ``K = K0 (φ / (1 - φ))ⁿ / (φ0 / (1 - φ0))ᵐ``.

    All Scalars ``(*B,)``; defined for a porosity ``0 <= φ < 1`` (an eager call with
    ``φ`` outside is an error naming the points, :mod:`neml2.models._domain`).
    """

    fields = (
        parameter("n", Scalar, doc="shape parameter n (exponent of the porosity)"),
        parameter("m", Scalar, doc="shape parameter m (exponent of the reference porosity)"),
    )

    def forward(self, phi: Scalar) -> Scalar:
        require(
            self,
            f"input '{self.var['porosity']}' (the porosity φ)",
            phi,
            "[0, 1)",
            "(φ / (1 - φ))ⁿ is defined for 0 <= φ < 1",
        )
        phi0 = self.param("reference_porosity")
        current = (phi / (1.0 - phi)) ** self.param("n")
        reference = (phi0 / (1.0 - phi0)) ** self.param("m")
        return self.param("reference_permeability") * current / reference
