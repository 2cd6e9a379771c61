"""Coordinate maps for transport on unbounded domains."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import output, parameter
from neml2.models.common._fields import variable
from neml2.tensors import Scalar


@register()
class SemiInfiniteCoordinateTransform(Model):
    """Map a semi-infinite coordinate onto the unit interval: ``x̂ = x / (x + s)``.

    ``x`` (``coordinate``) in ``[0, ∞)`` maps to ``x̂`` (``transformed_coordinate``) in
    ``[0, 1)``; ``s`` (``shift``) sets the scale (``x = s`` maps to ``1/2``). All are
    Scalars of any batch shape (sub-batch axes broadcast); an eager call with ``x < 0``
    is an error naming the points (:mod:`neml2.models._domain`).
    """

    fields = (
        variable("coordinate", Scalar, doc="the coordinate x"),
        parameter("shift", Scalar, bounds="(0, inf)", doc="the shift s"),
        output("transformed_coordinate", Scalar, doc="x̂ = x / (x + s)"),
    )

    def forward(self, x: Scalar) -> Scalar:
        require(
            self,
            f"input '{self.var['coordinate']}' (the coordinate x)",
            x,
            "[0, inf)",
            "the transform maps x in [0, inf) onto [0, 1)",
        )
        return x / (x + self.param("shift"))
