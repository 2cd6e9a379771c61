"""Large-deformation kinematics: the Green-Lagrange strain of a deformation gradient and
the removal of a volumetric part from it."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.tensors import R2, SR2, Scalar


@register()
class GreenLagrangeStrain(Model):
    """Green-Lagrange strain ``E = (FᵀF - I) / 2``.

    ``F`` is the deformation gradient (R2 ``(*B, 3, 3)``); ``FᵀF`` is the right
    Cauchy-Green tensor, so ``E`` is symmetric (SR2 ``(*B, 6)``, Mandel).
    """

    fields = (
        input("deformation_gradient", R2, doc="deformation gradient F"),
        output("strain", SR2, doc="Green-Lagrange strain E"),
    )

    def forward(self, F: R2) -> SR2:
        C = F.transpose().matmul(F).sym()
        return 0.5 * (C - SR2.identity(dtype=C.dtype, device=C.device))


@register()
class VolumeAdjustDeformationGradient(Model):
    """Remove a volume change from a deformation gradient: ``F' = J^(-1/3) F``.

    ``F`` (``input``) is the deformation gradient (R2 ``(*B, 3, 3)``), ``J``
    (``jacobian``, Scalar ``(*B)``, > 0) the Jacobian of the volumetric deformation
    to remove (e.g. thermal expansion, swelling), ``F'`` (``output``) the adjusted
    deformation gradient.
    """

    fields = (
        input("input", R2, doc="deformation gradient F"),
        input("jacobian", Scalar, doc="Jacobian J of the volume change to remove"),
        output("output", R2, doc="volume-adjusted deformation gradient F'"),
    )

    def forward(self, F: R2, J: Scalar) -> R2:
        return J ** (-1.0 / 3.0) * F
