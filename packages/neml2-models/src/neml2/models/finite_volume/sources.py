"""Source terms on a 1-D cell grid."""

from __future__ import annotations

import math

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import output, parameter
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, exp


@register()
class SmearedDeltaSource(Model):
    """A point source ``m δ(x - x0)`` smeared over the cells as a Gaussian.

    ``S_i = m / (w √(2π)) exp(-½ ((x_i - x0) / w)²)``: ``m`` (``magnitude``) and ``x0``
    (``location``) Scalar inputs, ``w`` (``width``) a Scalar parameter, ``x_i``
    (``cell_centers``) a Scalar with the cell axis as its last sub-batch axis; the
    output ``S`` (``smeared_source``) has the cell axis (shapes broadcast).
    """

    fields = (
        variable("magnitude", Scalar, doc="the source magnitude m"),
        variable("location", Scalar, doc="the source location x0"),
        parameter("width", Scalar, bounds="(0, inf)", doc="the Gaussian width w"),
        parameter("cell_centers", Scalar, doc="the cell-center positions x_i"),
        output("smeared_source", Scalar, doc="the smeared source S (one per cell)"),
    )

    def forward(self, m: Scalar, x0: Scalar) -> Scalar:
        w = self.param("width")
        z = (self.param("cell_centers") - x0) / w
        return m / (w * math.sqrt(2.0 * math.pi)) * exp(-0.5 * z * z)
