"""Mandel stress: the stress measure conjugate to the plastic deformation rate."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.tensors import SR2


@register()
class IsotropicMandelStress(Model):
    """Mandel stress of an isotropic material under small strains: ``M = σ``.

    Shapes: ``cauchy_stress``, ``mandel_stress`` ``(*B, 6)`` Mandel.
    """

    fields = (
        input("cauchy_stress", SR2, doc="Cauchy stress σ"),
        output("mandel_stress", SR2, doc="Mandel stress M"),
    )

    def forward(self, cauchy_stress: SR2) -> SR2:
        # a copy: an output must not alias an input (export keeps them apart)
        return cauchy_stress.clone()
