"""Mixed stress/strain control: pick each Mandel component from one of two variables."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output
from neml2.tensors import SR2, Tensor


@register()
class MixedControlSetup(Model):
    """Per-component selection by a control signal ``c`` (an SR2 of flags).

    For each Mandel component ``i``: ``y_i = x_above_i`` where ``c_i > threshold``,
    else ``x_below_i``; ``z`` gets the other pick. The control has no
    derivative; ``y`` and ``z`` pass each selected component's derivative through.
    """

    fields = (
        input("control", SR2, doc="the control signal (per component)"),
        input("x_above", SR2, doc="selected where the control exceeds the threshold"),
        input("x_below", SR2, doc="selected where the control is at most the threshold"),
        output("y", SR2, doc="the selected values"),
        output("z", SR2, doc="the values not selected"),
        option("threshold", float, 0.5, doc="the switch between the two controls"),
    )

    def forward(self, control: SR2, x_above: SR2, x_below: SR2) -> tuple[SR2, SR2]:
        above = control.data > self.opts["threshold"]
        dtype = x_above.dtype
        m = Tensor(above.to(dtype), 1, control.sub_batch_ndim)
        mc = Tensor((~above).to(dtype), 1, control.sub_batch_ndim)
        a, b = Tensor(x_above), Tensor(x_below)
        y = m * a + mc * b
        z = m * b + mc * a
        return SR2(y), SR2(z)
