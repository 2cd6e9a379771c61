"""Rotation matrix of an MRP rotation."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models.common._fields import variable
from neml2.tensors import MRP, R2


@register()
class RotationMatrix(Model):
    """The rotation matrix ``R(r)`` of modified Rodrigues parameters ``r``.

    ``R = I + (8 W² + 4 (1 - r·r) W) / (1 + r·r)²`` with ``W = skew(r)``
    (Euler–Rodrigues). Input ``from`` (MRP), output ``to`` (R2).
    """

    fields = (
        variable("from", MRP, doc="the rotation (MRP)"),
        variable("to", R2, output=True, doc="its rotation matrix"),
    )

    def forward(self, r: MRP) -> R2:
        return r.to_R2()
