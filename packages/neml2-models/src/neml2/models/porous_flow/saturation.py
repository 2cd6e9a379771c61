"""Effective saturation of a flowing fluid."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar


@register()
class EffectiveSaturation(Model):
    """Effective saturation ``S = (φ / φmax - Sr) / (1 - Sr)``.

    ``φ`` (``fluid_fraction``) is the volume fraction of the flowing fluid,
    ``φmax`` (``max_fraction``) its largest possible value and ``Sr``
    (``residual_saturation``) the residual saturation; all Scalars ``(*B,)``.
    """

    fields = (
        input("fluid_fraction", Scalar, doc="volume fraction φ of the fluid"),
        output("effective_saturation", Scalar, doc="effective saturation S"),
        parameter("residual_saturation", Scalar, doc="residual saturation Sr"),
        parameter("max_fraction", Scalar, doc="maximum volume fraction φmax of the fluid"),
    )

    def forward(self, phi: Scalar) -> Scalar:
        sr = self.param("residual_saturation")
        return (phi / self.param("max_fraction") - sr) / (1.0 - sr)
