"""Time integration of a variable from its rate: backward Euler residuals, forward Euler
updates, and the implicit exponential residual of a rotation.

Names follow the reference library: for ``variable = 'x'`` and ``time = 't'`` the
previous step is ``x~1`` / ``t~1``, the rate ``x_rate`` and the residual ``x_residual``.
"""

from __future__ import annotations

from typing import ClassVar

import torch

from neml2.models._model import Model
from neml2.models._naming import HISTORY, RATE, RESIDUAL
from neml2.models._registry import register
from neml2.models._schema import derived, option
from neml2.models.common._fields import TIME, variable
from neml2.tensors import (
    MRP,
    R2,
    SR2,
    WR2,
    Scalar,
    TensorWrapper,
    Vec,
    constant,
    cos,
    norm_sq,
    tan,
    where,
)


class _Integration(Model):
    """Shared declarations: ``s, s~1, s_rate, t, t~1`` in this order."""

    TYPE: ClassVar[type] = Scalar
    RATE_TYPE: ClassVar[type | None] = None  # defaults to TYPE

    def _declare_history_inputs(self, *, with_current: bool) -> None:
        s, t = self.var["variable"], self.var["time"]
        # declare in the reference order, whatever the field order was
        self._structural.clear()
        if with_current:
            self.declare_input(s, self.TYPE)
        self.declare_input(self.derived_name(HISTORY, "variable"), self.TYPE)
        self.declare_input(self.derived_name(RATE, "variable"), self.RATE_TYPE or self.TYPE)
        self.declare_input(t, Scalar)
        self.declare_input(self.derived_name(HISTORY, "time"), Scalar)


class BackwardEulerTimeIntegration(_Integration):
    """Backward Euler residual ``r = s - s_n - (t - t_n) ṡ``.

    Inputs ``s`` (``variable``), ``s~1``, ``s_rate``, ``t`` (``time``), ``t~1``;
    output ``s_residual``.
    """

    derives = (
        derived(HISTORY, "variable"),
        derived(RATE, "variable", renamed_by="rate"),
        derived(HISTORY, "time"),
        derived(RESIDUAL, "variable", output=True),
    )

    def setup(self) -> None:
        self._declare_history_inputs(with_current=True)
        self.declare_output(self.derived_name(RESIDUAL, "variable"), self.TYPE)

    def forward(self, s, s_n, s_rate, t, t_n) -> TensorWrapper:
        # (t_n - t) ṡ added: the same bits as subtracting (t - t_n) ṡ, and a tangent of ṡ
        # on a seed that s lacks is taken over as it is, not negated in a second pass
        # over the whole tangent stack (py-eager)
        return s - s_n + (t_n - t) * s_rate


class ForwardEulerTimeIntegration(_Integration):
    """Forward Euler update ``s = s_n + (t - t_n) ṡ``.

    Inputs ``s~1`` (``old_variable``), ``s_rate`` (``rate``), ``t`` (``time``), ``t~1``;
    output ``s`` (``variable``).
    """

    derives = (
        derived(HISTORY, "variable", renamed_by="old_variable"),
        derived(RATE, "variable", renamed_by="rate"),
        derived(HISTORY, "time"),
    )

    def setup(self) -> None:
        self._declare_history_inputs(with_current=False)

    def forward(self, s_n, s_rate, t, t_n) -> TensorWrapper:
        return s_n + (t - t_n) * s_rate


def _variable(typ: type, *, output: bool = False):
    what = "integrated" if not output else "updated"
    return variable("variable", typ, output=output, doc=f"the {typ.__name__} being {what}")


#: Renames the rate input (default ``<variable>_rate``).
RATE_OPTION = option("rate", str, "", doc="name of the rate input (default: <variable>_rate)")
#: Renames the previous-step input of a forward update (default ``<variable>~1``), so a
#: provisional quantity can start from another variable's previous value.
OLD = option("old_variable", str, "", doc="name of the previous value (default: <variable>~1)")


def _backward(typ: type) -> tuple:
    return (_variable(typ), TIME, RATE_OPTION)


@register()
class ScalarBackwardEulerTimeIntegration(BackwardEulerTimeIntegration):
    __doc__ = BackwardEulerTimeIntegration.__doc__
    TYPE = Scalar
    fields = _backward(Scalar)


@register()
class VecBackwardEulerTimeIntegration(BackwardEulerTimeIntegration):
    __doc__ = BackwardEulerTimeIntegration.__doc__
    TYPE = Vec
    fields = _backward(Vec)


@register()
class SR2BackwardEulerTimeIntegration(BackwardEulerTimeIntegration):
    __doc__ = BackwardEulerTimeIntegration.__doc__
    TYPE = SR2
    fields = _backward(SR2)


@register()
class R2BackwardEulerTimeIntegration(BackwardEulerTimeIntegration):
    __doc__ = BackwardEulerTimeIntegration.__doc__
    TYPE = R2
    fields = _backward(R2)


def _forward(typ: type) -> tuple:
    return (_variable(typ, output=True), TIME, RATE_OPTION, OLD)


@register()
class ScalarForwardEulerTimeIntegration(ForwardEulerTimeIntegration):
    __doc__ = ForwardEulerTimeIntegration.__doc__
    TYPE = Scalar
    fields = _forward(Scalar)


@register()
class VecForwardEulerTimeIntegration(ForwardEulerTimeIntegration):
    __doc__ = ForwardEulerTimeIntegration.__doc__
    TYPE = Vec
    fields = _forward(Vec)


@register()
class SR2ForwardEulerTimeIntegration(ForwardEulerTimeIntegration):
    __doc__ = ForwardEulerTimeIntegration.__doc__
    TYPE = SR2
    fields = _forward(SR2)


@register()
class R2ForwardEulerTimeIntegration(ForwardEulerTimeIntegration):
    __doc__ = ForwardEulerTimeIntegration.__doc__
    TYPE = R2
    fields = _forward(R2)


def rotation_increment(w: WR2) -> MRP:
    """The rotation increment of a spin ``w`` (WR2), as the reference library defines it.

    ``q = w tan(x/2) / (2 x cos(x/2))`` with ``x = |w|²`` (series
    ``w (1/4 + 5 x²/96)`` for ``x ≤ ε^(1/3)``). This agrees with the exact
    exponential map (``WR2.exp``: ``w tan(|w|/4)/|w|``) to first order in ``|w|``
    only; it is what the reference's crystal-plasticity gold values follow, so
    the integrator uses it to reproduce them.
    """
    x = norm_sq(w)
    small = x <= torch.finfo(x.dtype).eps ** (1.0 / 3.0)  # a bool Scalar: keeps sub-batch axes
    one = constant(Scalar, 1.0, like=x)
    safe = where(small, one, x)
    exact = tan(safe * 0.5) / (safe * 2.0 * cos(safe * 0.5))
    series = x * x * (5.0 / 96.0) + 0.25
    return MRP(w * where(small, series, exact))


@register()
class WR2ImplicitExponentialTimeIntegration(_Integration):
    """Implicit exponential residual of a rotation ``r = s - exp((t - t_n) w) ∘ s_n``.

    ``s`` is an MRP rotation, ``w`` (``s_rate``) a WR2 spin; ``exp`` maps the
    skew tensor to a rotation and ``∘`` applies it after ``s_n``. The residual
    is the difference of the two MRP vectors. Inputs ``s``, ``s~1``, ``s_rate``,
    ``t``, ``t~1``; output ``s_residual``.
    """

    TYPE = MRP
    RATE_TYPE = WR2
    fields = (variable("variable", MRP, doc="the rotation being integrated"), TIME)
    derives = (
        derived(HISTORY, "variable"),
        derived(RATE, "variable", type=WR2, doc="the spin w (a WR2) of <variable>"),
        derived(HISTORY, "time"),
        derived(RESIDUAL, "variable", output=True),
    )

    def setup(self) -> None:
        self._declare_history_inputs(with_current=True)
        self.declare_output(self.derived_name(RESIDUAL, "variable"), MRP)

    def forward(self, s: MRP, s_n: MRP, w: WR2, t: Scalar, t_n: Scalar) -> MRP:
        inc = rotation_increment((t - t_n) * w)
        return s - s_n.rotate(inc)


@register()
class WR2ExplicitExponentialTimeIntegration(_Integration):
    """Explicit exponential update of a rotation ``s = exp((t - t_n) w) ∘ s_n``.

    ``s`` (``variable``, an output) and ``s_n`` (``s~1``) are MRP rotations, ``w``
    (``s_rate``) a WR2 spin; ``exp`` maps the spin increment to a rotation (as
    :func:`rotation_increment`) and ``∘`` applies it after ``s_n``. Inputs ``s~1``,
    ``s_rate``, ``t``, ``t~1``; output ``s``.
    """

    TYPE = MRP
    RATE_TYPE = WR2
    fields = (variable("variable", MRP, output=True, doc="the rotation being updated"), TIME)
    derives = (
        derived(HISTORY, "variable"),
        derived(RATE, "variable", type=WR2, doc="the spin w (a WR2) of <variable>"),
        derived(HISTORY, "time"),
    )

    def setup(self) -> None:
        self._declare_history_inputs(with_current=False)

    def forward(self, s_n: MRP, w: WR2, t: Scalar, t_n: Scalar) -> MRP:
        return s_n.rotate(rotation_increment((t - t_n) * w))
