"""Scalar pieces of J2 plasticity: the associative flow direction and the radial-return
update of the trial stress under isotropic linear elasticity."""

from __future__ import annotations

import math

import torch

from neml2.models._model import Model
from neml2.models._naming import HISTORY
from neml2.models._registry import register
from neml2.models._schema import derived, input, option, output, parameter
from neml2.models.solid_mechanics.elasticity import (
    COEFFICIENTS,
    bulk_shear,
    declare_isotropic_coefficients,
)
from neml2.tensors import SR2, Scalar

_SQRT_3_2 = math.sqrt(1.5)


@register()
class AssociativeJ2FlowDirection(Model):
    """Associative J2 flow direction ``N = 3/2 · dev(M) / s̄``, ``s̄ = sqrt(3/2) ‖dev(M)‖``.

    ``M`` is the Mandel stress; ``‖·‖`` is regularized with the machine epsilon ``ε``
    of the dtype (``sqrt(S:S + ε)``), so ``N`` stays finite at ``dev(M) = 0``. Shapes:
    SR2 ``(*B, 6)``.
    """

    fields = (
        input("mandel_stress", SR2, doc="Mandel stress M"),
        output("flow_direction", SR2, doc="flow direction N"),
    )

    def forward(self, mandel_stress: SR2) -> SR2:
        s = mandel_stress.dev()
        vm = _SQRT_3_2 * s.norm(torch.finfo(s.dtype).eps)
        return (1.5 / vm) * s


@register()
class LinearIsotropicElasticJ2TrialStressUpdate(Model):
    """Trial stress after the current plastic increment: ``s = s_trial - 3G (ε̄ᵖ - ε̄ᵖ~1)``.

    For J2 plasticity with isotropic linear elasticity the von Mises stress of the
    elastic trial state ``s_trial`` drops by ``3G Δε̄ᵖ`` along the (fixed) radial
    direction, which makes a fully scalar return map possible. ``G`` follows from
    the two ``coefficients`` (``coefficient_types`` as for
    ``LinearIsotropicElasticity``). The previous value is ``<equivalent_plastic_strain>~1``.
    All Scalars ``(*B)``.
    """

    fields = (
        input("elastic_trial_stress", Scalar, doc="trial (effective) stress of an elastic step"),
        input("equivalent_plastic_strain", Scalar, doc="current equivalent plastic strain ε̄ᵖ"),
        output("updated_trial_stress", Scalar, doc="trial stress after the plastic increment"),
        parameter("coefficients", Scalar, many=True, doc="the two elastic coefficients"),
        option(
            "coefficient_types",
            str,
            many=True,
            choices=tuple(COEFFICIENTS),
            doc="what each coefficient is",
        ),
    )

    derives = (derived(HISTORY, "equivalent_plastic_strain"),)

    def setup(self) -> None:
        self.declare_input(self.derived_name(HISTORY, "equivalent_plastic_strain"), Scalar)
        self._coef_names = declare_isotropic_coefficients(self)

    def forward(self, trial: Scalar, ep: Scalar, ep_old: Scalar) -> Scalar:
        _, G = bulk_shear({n: self.param(n) for n in self._coef_names})
        return trial - 3.0 * G * (ep - ep_old)
