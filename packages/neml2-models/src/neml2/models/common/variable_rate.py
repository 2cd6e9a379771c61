"""Discrete rates ``ṡ = (s - s_n) / (t - t_n)`` of Scalar, Vec, SR2 and R2 variables."""

from __future__ import annotations

from typing import ClassVar

from neml2.models._model import Model
from neml2.models._naming import HISTORY, RATE
from neml2.models._registry import register
from neml2.models._schema import derived
from neml2.models.common._fields import TIME, variable
from neml2.tensors import R2, SR2, Scalar, TensorWrapper, Vec


class VariableRate(Model):
    """First-order discrete rate ``ṡ = (s - s_n) / (t - t_n)``.

    Inputs ``s`` (``variable``), ``s~1``, ``t`` (``time``, default ``t``), ``t~1``;
    output ``s_rate``.
    """

    TYPE: ClassVar[type] = Scalar
    derives = (
        derived(HISTORY, "variable"),
        derived(HISTORY, "time"),
        derived(RATE, "variable", output=True),
    )

    def setup(self) -> None:
        s, t = self.var["variable"], self.var["time"]
        self._structural.clear()  # reference order: s, s~1, t, t~1
        self.declare_input(s, self.TYPE)
        self.declare_input(self.derived_name(HISTORY, "variable"), self.TYPE)
        self.declare_input(t, Scalar)
        self.declare_input(self.derived_name(HISTORY, "time"), Scalar)
        self.declare_output(self.derived_name(RATE, "variable"), self.TYPE)

    def forward(self, s, s_n, t, t_n) -> TensorWrapper:
        return (s - s_n) / (t - t_n)


def _fields(typ: type) -> tuple:
    return (variable("variable", typ, doc=f"the {typ.__name__} to differentiate"), TIME)


@register()
class ScalarVariableRate(VariableRate):
    __doc__ = VariableRate.__doc__
    TYPE = Scalar
    fields = _fields(Scalar)


@register()
class VecVariableRate(VariableRate):
    __doc__ = VariableRate.__doc__
    TYPE = Vec
    fields = _fields(Vec)


@register()
class SR2VariableRate(VariableRate):
    __doc__ = VariableRate.__doc__
    TYPE = SR2
    fields = _fields(SR2)


@register()
class R2VariableRate(VariableRate):
    __doc__ = VariableRate.__doc__
    TYPE = R2
    fields = _fields(R2)
