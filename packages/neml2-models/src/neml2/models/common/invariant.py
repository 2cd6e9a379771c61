"""Scalar invariants of a symmetric second-order tensor."""

from __future__ import annotations

import math

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option
from neml2.models.common._fields import variable
from neml2.tensors import SR2, Scalar, sqrt
from neml2.tensors._sr2 import von_mises

INVARIANTS = ("I1", "I2", "VONMISES", "EFFECTIVE_STRAIN")


@register()
class SR2Invariant(Model):
    """An invariant of an SR2 ``A``, chosen by ``invariant_type``.

    * ``I1 = tr(A)``
    * ``I2 = (tr(A)^2 - A:A) / 2``
    * ``VONMISES = sqrt(3/2) sqrt(S:S + eps)`` with ``S = dev(A)``
    * ``EFFECTIVE_STRAIN = sqrt(2/3) sqrt(A:A + eps)``

    ``eps`` is the machine epsilon of the dtype, so that the derivative stays
    finite at ``A = 0``.
    """

    fields = (
        variable("tensor", SR2, doc="the tensor A"),
        variable("invariant", Scalar, output=True, doc="the invariant"),
        option("invariant_type", str, choices=INVARIANTS, doc="which invariant"),
    )

    def setup(self) -> None:
        kind = self.opts["invariant_type"]
        if kind not in INVARIANTS:
            raise self.error(
                f"invariant_type '{kind}' is not one of {', '.join(INVARIANTS)}",
                "invariant_type",
            )
        self._kind = kind

    def forward(self, A: SR2) -> Scalar:
        kind = self._kind
        if kind == "I1":
            return A.tr()
        if kind == "I2":
            t = A.tr()
            return (t * t - A.inner(A)) * 0.5
        eps = torch.finfo(A.dtype).eps
        if kind == "VONMISES":
            return von_mises(A, eps)
        return sqrt(A.inner(A) + eps) * math.sqrt(2.0 / 3.0)
