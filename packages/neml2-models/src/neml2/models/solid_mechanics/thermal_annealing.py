"""Thermal annealing of a hardening variable in two temperature stages."""

from __future__ import annotations

from typing import ClassVar

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import SR2, Scalar, TensorWrapper, where


class TwoStageThermalAnnealing(Model):
    """Two-stage thermal annealing of a hardening rate.

    ``ḣ' = ḣ`` for ``T < T₁``, ``ḣ' = 0`` for ``T₁ ≤ T < T₂`` and ``ḣ' = -h / τ`` for
    ``T ≥ T₂``: below the first annealing temperature the hardening rate ``ḣ``
    (``base_rate``) is kept, between the two it is switched off, above the second the
    hardening variable ``h`` (``base``) recovers at the rate ``1/τ``. The rate
    derivative with respect to the temperature is zero (a step function). ``T`` is a
    Scalar ``(*B)``; ``h``, ``ḣ`` and ``ḣ'`` share the type of the variant.
    """

    TYPE: ClassVar[type] = Scalar

    def forward(self, base_rate: TensorWrapper, base: TensorWrapper, temperature: Scalar):
        T1, T2, tau = self.param("T1"), self.param("T2"), self.param("tau")
        zero = base_rate * 0.0
        kept = where(temperature < T1, base_rate, zero)
        return kept - where(temperature >= T2, base / tau, base * 0.0)


def _fields(typ: type) -> tuple:
    name = typ.__name__
    return (
        input("base_rate", typ, doc=f"the hardening rate ḣ ({name})"),
        input("base", typ, doc=f"the hardening variable h ({name})"),
        input("temperature", Scalar, doc="temperature T"),
        output("modified_rate", typ, doc=f"the annealed hardening rate ḣ' ({name})"),
        parameter("T1", Scalar, doc="first-stage annealing temperature T₁"),
        parameter("T2", Scalar, doc="second-stage annealing temperature T₂"),
        parameter("tau", Scalar, bounds="(0, inf)", doc="recovery time τ of the second stage"),
    )


@register()
class ScalarTwoStageThermalAnnealing(TwoStageThermalAnnealing):
    __doc__ = TwoStageThermalAnnealing.__doc__
    TYPE = Scalar
    fields = _fields(Scalar)


@register()
class SR2TwoStageThermalAnnealing(TwoStageThermalAnnealing):
    __doc__ = TwoStageThermalAnnealing.__doc__
    TYPE = SR2
    fields = _fields(SR2)
