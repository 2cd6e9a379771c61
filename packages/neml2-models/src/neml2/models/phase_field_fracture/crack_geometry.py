"""Crack geometric functions ``α(d)`` of the Ambrosio-Tortorelli (AT) functionals.

The regularized crack surface energy density is ``Gc / (c0 l) α(d)``; the constant
``c0`` (``8/3`` for AT-1, ``2`` for AT-2) is the user's to fold into the weight.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.tensors import Scalar

_FIELDS = (
    input("phase", Scalar, doc="phase-field variable d"),
    output("crack", Scalar, doc="value α of the crack geometric function"),
)


@register()
class CrackGeometricFunctionAT1(Model):
    """AT-1 crack geometric function ``α = d``.

    ``c0 = 8/3``: an elastic stage before damage starts. ``d`` (``phase``) and ``α``
    (``crack``) are Scalars ``(*B,)``.
    """

    fields = _FIELDS

    def forward(self, d: Scalar) -> Scalar:
        return d


@register()
class CrackGeometricFunctionAT2(Model):
    """AT-2 crack geometric function ``α = d²``.

    ``c0 = 2``: damage from the onset of loading. ``d`` (``phase``) and ``α``
    (``crack``) are Scalars ``(*B,)``.
    """

    fields = _FIELDS

    def forward(self, d: Scalar) -> Scalar:
        return d * d
