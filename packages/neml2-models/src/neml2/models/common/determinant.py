"""Determinants of second-order tensors."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models.common._fields import variable
from neml2.tensors import R2, SR2, Scalar, TensorWrapper


class Determinant(Model):
    """``J = det(F)`` of a second-order tensor ``F`` (``(*B, 3, 3)`` R2 or ``(*B, 6)`` SR2).

    ``dJ/dF = J F⁻ᵀ``. Input ``input`` (default ``F``), output ``determinant``
    (default ``J``, a Scalar).
    """

    def forward(self, f: TensorWrapper) -> Scalar:
        return f.det()


def _fields(typ: type) -> tuple:
    return (
        variable("input", typ, default="F", doc=f"the {typ.__name__} F"),
        variable("determinant", Scalar, output=True, default="J", doc="det(F)"),
    )


@register()
class R2Determinant(Determinant):
    __doc__ = Determinant.__doc__
    fields = _fields(R2)


@register()
class SR2Determinant(Determinant):
    __doc__ = Determinant.__doc__
    fields = _fields(SR2)
