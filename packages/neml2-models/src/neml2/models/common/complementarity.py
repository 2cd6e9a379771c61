"""Complementarity conditions of a constrained update (KKT conditions): min-map and
Fischer-Burmeister forms."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output
from neml2.tensors import Scalar, sqrt, where

_SIGN = {"LE": -1.0, "GE": 1.0}


def _fields(a_inequality: str, residual: str) -> tuple:
    """Inputs ``a``, ``b``, the output and the two inequality options (``b``: ``GE``)."""
    return (
        input("a", Scalar, doc="first condition"),
        input("b", Scalar, doc="second condition"),
        output("complementarity", Scalar, doc=f"the {residual} residual"),
        option("a_inequality", str, a_inequality, choices=tuple(_SIGN), doc="inequality of a"),
        option("b_inequality", str, "GE", choices=tuple(_SIGN), doc="inequality of b"),
    )


class _Complementarity(Model):
    """Reads the inequality options into the signs ``s_a``, ``s_b`` (``LE``: -1, ``GE``: +1)."""

    def setup(self) -> None:
        for opt in ("a_inequality", "b_inequality"):
            if self.opts[opt] not in _SIGN:
                raise self.error(f"{opt} = '{self.opts[opt]}' is not one of LE, GE", opt)
        self._sa = _SIGN[self.opts["a_inequality"]]
        self._sb = _SIGN[self.opts["b_inequality"]]


@register()
class MinMapComplementarity(_Complementarity):
    """Minimum-map form of the complementarity ``a ⋚ 0, b ⋚ 0, a b = 0``.

    ``r = min(s_a a, s_b b)`` with ``s = -1`` for an ``LE`` (``≤ 0``) and
    ``s = +1`` for a ``GE`` (``≥ 0``) inequality; ``r = 0`` is equivalent to the
    three conditions. A tie takes the ``b`` branch. The derivative is that of
    the selected branch.
    """

    fields = _fields("LE", "minimum-map")

    def forward(self, a: Scalar, b: Scalar) -> Scalar:
        ta, tb = a * self._sa, b * self._sb
        return where(ta < tb, ta, tb)


@register()
class FBComplementarity(_Complementarity):
    """Fischer-Burmeister form of the complementarity ``a ⋚ 0, b ⋚ 0, a b = 0``.

    ``r = s_a a + s_b b - sqrt(a² + b²)`` with ``s = -1`` for an ``LE`` (``≤ 0``) and
    ``s = +1`` for a ``GE`` (``≥ 0``) inequality (both ``GE`` by default); ``r = 0``
    is equivalent to the three conditions, and ``r`` is smooth except at
    ``a = b = 0``. The derivatives use ``sqrt(a² + b² + ε)`` (``ε`` the machine
    epsilon), finite at that point; the value is exact. All Scalars.
    """

    fields = _fields("GE", "Fischer-Burmeister")

    def forward(self, a: Scalar, b: Scalar) -> Scalar:
        eps = torch.finfo(a.dtype).eps
        smooth = sqrt(a * a + b * b + eps)  # carries the (regularised) tangents
        pa, pb = a.primal(), b.primal()
        exact = sqrt(pa * pa + pb * pb)  # the value, without tangents
        return a * self._sa + b * self._sb - smooth + (smooth.primal() - exact)
