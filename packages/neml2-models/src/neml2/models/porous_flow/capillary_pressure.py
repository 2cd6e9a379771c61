"""Capillary pressure ``Pc(S)`` as a function of the effective saturation ``S``."""

from __future__ import annotations

import torch

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import Scalar, clamp, exp, where


class CapillaryPressure(Model):
    """Base: ``Pc = P(S)``, optionally extended below a transition saturation ``Sp``.

    With ``log_extension = true``, below ``Sp`` (``transition_saturation``) ``log Pc``
    continues linearly, matching the value and slope of ``P`` at ``Sp``:
    ``Pc = P(Sp) exp(P'(Sp) / P(Sp) (S - Sp))`` for ``S < Sp``, which keeps ``Pc``
    finite as ``S → 0``. Without it, ``S`` must be positive: an eager call with
    ``S <= 0`` is an error naming the points (:mod:`neml2.models._domain`). Subclasses
    give ``P`` (:meth:`pressure`) and ``P'`` (:meth:`slope`).
    """

    fields = (
        input("effective_saturation", Scalar, doc="effective saturation S"),
        output("capillary_pressure", Scalar, doc="capillary pressure Pc"),
        option("log_extension", bool, False, doc="extend log(Pc) linearly below Sp"),
        option(
            "transition_saturation",
            float,
            0.0,
            bounds="[0, 1]",
            doc="saturation Sp below which the logarithmic extension applies",
        ),
    )

    def setup(self) -> None:
        sp = self.opts["transition_saturation"]
        if self.opts["log_extension"] and not sp > 0.0:
            raise self.error(
                "log_extension = true needs a positive transition_saturation",
                "transition_saturation",
            )

    def pressure(self, S: Scalar) -> Scalar:
        raise NotImplementedError

    def slope(self, S: Scalar) -> Scalar:
        """``dP/dS``."""
        raise NotImplementedError

    def forward(self, S: Scalar) -> Scalar:
        if not self.opts["log_extension"]:
            require(
                self,
                f"input '{self.var['effective_saturation']}' (the effective saturation S)",
                S,
                "(0, inf)",
                "Pc(S) is infinite or undefined at S <= 0 (log_extension = true extends it)",
            )
        pc = self.pressure(S)
        if not self.opts["log_extension"]:
            return pc
        sp = self.opts["transition_saturation"]
        at = Scalar(torch.full((), sp, dtype=S.dtype, device=S.device))
        p_sp = self.pressure(at)
        extension = p_sp * exp(self.slope(at) / p_sp * (S - sp))
        return where(S < sp, extension, pc)


@register()
class BrooksCoreyCapillaryPressure(CapillaryPressure):
    """Brooks-Corey correlation ``Pc = Pt S^(-1/p)``.

    ``S`` (``effective_saturation``), ``Pc``, the threshold pressure ``Pt`` and
    the shape parameter ``p`` (``exponent``) are Scalars ``(*B,)``. With
    ``log_extension = true``, ``Pc = P(Sp) exp(P'(Sp)/P(Sp) (S - Sp))`` below the
    ``transition_saturation`` ``Sp``.
    """

    fields = (
        parameter(
            "threshold_pressure", Scalar, bounds="[0, inf)", doc="threshold entry pressure Pt"
        ),
        parameter("exponent", Scalar, bounds="(0, inf)", doc="shape parameter p"),
    )

    def pressure(self, S: Scalar) -> Scalar:
        return self.param("threshold_pressure") * S ** (-1.0 / self.param("exponent"))

    def slope(self, S: Scalar) -> Scalar:
        p = self.param("exponent")
        return -self.param("threshold_pressure") / p * S ** (-1.0 / p - 1.0)


@register()
class VanGenuchtenCapillaryPressure(CapillaryPressure):
    """van Genuchten correlation ``Pc = a (S^(-1/m) - 1)^(1-m)``.

    ``S`` (``effective_saturation``, capped at ``1 - ε`` so that the base stays
    positive), ``Pc`` and the shape parameters ``a``, ``m`` are Scalars ``(*B,)``.
    With ``log_extension = true``, ``Pc = P(Sp) exp(P'(Sp)/P(Sp) (S - Sp))`` below
    the ``transition_saturation`` ``Sp``.
    """

    fields = (
        parameter("a", Scalar, doc="shape parameter a"),
        parameter("m", Scalar, doc="shape parameter m"),
    )

    def _capped(self, S: Scalar) -> Scalar:
        return clamp(S, None, 1.0 - torch.finfo(S.dtype).eps)

    def pressure(self, S: Scalar) -> Scalar:
        m = self.param("m")
        return self.param("a") * (self._capped(S) ** (-1.0 / m) - 1.0) ** (1.0 - m)

    def slope(self, S: Scalar) -> Scalar:
        a, m = self.param("a"), self.param("m")
        s = self._capped(S)
        base = s ** (-1.0 / m) - 1.0
        return -a * (1.0 - m) / m * base ** (-m) * s ** (-1.0 / m - 1.0)
