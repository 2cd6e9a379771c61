"""Smooth steps and bumps built from cubic Hermite polynomials of a rescaled argument.

Both rescale the argument to ``c = (x - x_l) / (x_h - x_l)`` and clamp it to
``[ε, 1 - ε]`` (``ε`` the machine epsilon of the dtype), so the output is constant,
with a zero derivative, outside the bounds.
"""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, clamp, where


def _rescaled(model: Model, x: Scalar) -> tuple[Scalar, Scalar]:
    """``(c, x_h - x_l)`` with ``c`` clamped to ``[ε, 1 - ε]``."""
    lo, hi = model.param("lower_bound"), model.param("upper_bound")
    width = hi - lo
    eps = torch.finfo(x.dtype).eps
    return clamp((x - lo) / width, eps, 1.0 - eps), width


def _bounds() -> tuple:
    return (
        parameter("lower_bound", Scalar, doc="lower bound x_l of the argument"),
        parameter("upper_bound", Scalar, doc="upper bound x_h of the argument"),
    )


@register()
class HermiteSmoothStep(Model):
    """Cubic smooth step ``y = 3c² - 2c³``, ``c = clamp((x - x_l)/(x_h - x_l), ε, 1 - ε)``.

    ``y`` rises from 0 (``x <= x_l``) to 1 (``x >= x_h``) with zero slope at both
    ends; ``complement = true`` gives ``1 - y``. ``x`` (``argument``), ``y``
    (``value``), ``x_l``/``x_h`` (``lower_bound``/``upper_bound``): Scalars.
    """

    fields = (
        variable("argument", Scalar, doc="argument x of the smooth step"),
        variable("value", Scalar, output=True, doc="value y of the smooth step"),
        *_bounds(),
        option("complement", bool, False, doc="output 1 - y instead of y"),
    )

    def forward(self, x: Scalar) -> Scalar:
        c, _ = _rescaled(self, x)
        y = c * c * (3.0 - 2.0 * c)
        return 1.0 - y if self.opts["complement"] else y


@register()
class SymmetricHermiteInterpolation(Model):
    """Symmetric Hermite bump of unit area over ``[x_l, x_h]``.

    ``y = (24c² - 32c³)/(x_h - x_l)`` for ``c < 1/2`` and
    ``y = (24(1-c)² - 32(1-c)³)/(x_h - x_l)`` otherwise, with
    ``c = clamp((x - x_l)/(x_h - x_l), ε, 1 - ε)``; ``y`` peaks at ``2/(x_h - x_l)`` at
    the midpoint and vanishes (to round-off) outside the bounds. ``x`` (``argument``),
    ``y`` (``output``), ``x_l``/``x_h`` (``lower_bound``/``upper_bound``): Scalars.
    """

    fields = (
        variable("argument", Scalar, doc="argument x"),
        variable("output", Scalar, output=True, doc="value y of the bump"),
        *_bounds(),
    )

    def forward(self, x: Scalar) -> Scalar:
        c, width = _rescaled(self, x)
        s = where(c < 0.5, c, 1.0 - c)
        return s * s * (24.0 - 32.0 * s) / width
