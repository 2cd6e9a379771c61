"""Split of a Scalar into its positive (Macaulay) and negative parts."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, macaulay


@register()
class MacaulaySplit(Model):
    """``x₊ = ⟨x⟩ = max(x, 0)`` and ``x₋ = x - ⟨x⟩ = min(x, 0)``, so ``x = x₊ + x₋``.

    ``x`` (``from``), ``x₊`` (``to_positive``) and ``x₋`` (``to_negative``) are
    Scalars. The derivatives are ``H(x)`` and ``1 - H(x)`` (``H(0) = 0``).
    """

    fields = (
        variable("from", Scalar, doc="the Scalar x to split"),
        variable("to_positive", Scalar, output=True, doc="the positive part <x>"),
        variable("to_negative", Scalar, output=True, doc="the negative part x - <x>"),
    )

    def forward(self, x: Scalar) -> tuple[Scalar, Scalar]:
        pos = macaulay(x)
        return pos, x - pos
