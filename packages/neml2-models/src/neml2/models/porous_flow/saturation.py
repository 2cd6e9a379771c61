"""Effective saturation of a flowing fluid."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar


@register()
class EffectiveSaturation(Model):
    """Effective saturation ``S = (φ / φmax - Sr) / (1 - Sr)``.

    ``φ`` (``fluid_fraction``) is the volume fraction of the flowing fluid,
    ``φmax`` (``max_fraction``) its largest possible value, in ``(0, 1]``, and ``Sr``
    (``residual_saturation``) the residual saturation, in ``[0, 1)``; all Scalars
    ``(*B,)``. A ``φmax`` or ``Sr`` given by a variable is checked per point at an eager
    call (:mod:`neml2.models._domain`).
    """

    fields = (
        input("fluid_fraction", Scalar, doc="volume fraction φ of the fluid"),
        output("effective_saturation", Scalar, doc="effective saturation S"),
        parameter("residual_saturation", Scalar, bounds="[0, 1)", doc="residual saturation Sr"),
        parameter(
            "max_fraction",
            Scalar,
            bounds="(0, 1]",
            doc="maximum volume fraction φmax of the fluid",
        ),
    )

    def forward(self, phi: Scalar) -> Scalar:
        sr = self.param("residual_saturation")
        phimax = self.param("max_fraction")
        require(self, "parameter 'max_fraction' (φmax)", phimax, "(0, 1]", "S divides by φmax")
        require(self, "parameter 'residual_saturation' (Sr)", sr, "[0, 1)", "S divides by 1 - Sr")
        return (phi / phimax - sr) / (1.0 - sr)
