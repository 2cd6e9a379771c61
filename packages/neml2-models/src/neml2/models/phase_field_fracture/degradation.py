"""Degradation functions ``g(d)`` multiplying the active strain energy density."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import Bounds, input, option, output, parameter
from neml2.tensors import Scalar

#: the phase-field variable's domain: intact (0) to fully broken (1)
_PHASE = Bounds.parse("[0, 1]")


class DegradationFunction(Model):
    """Base: ``g = ĝ(d) (1 - η) + η`` with the residual stiffness ``η`` (option ``eta``).

    Defined for ``0 <= d <= 1``: an eager call with ``d`` outside is an error naming the
    points (not inside an implicit solve, nor traced: :mod:`neml2.models._domain`).
    """

    fields = (
        input("phase", Scalar, doc="phase-field variable d"),
        output("degradation", Scalar, doc="value g of the degradation function"),
        parameter("power", Scalar, bounds="(0, inf)", doc="power p of (1 - d)"),
        option(
            "eta",
            float,
            0.0,
            bounds="[0, 1)",
            doc="residual degradation η, the value of g at d = 1",
        ),
    )

    def profile(self, d: Scalar) -> Scalar:
        """``ĝ(d)``, equal to 1 at d = 0 and 0 at d = 1."""
        raise NotImplementedError

    def forward(self, d: Scalar) -> Scalar:
        require(
            self,
            f"input '{self.var['phase']}' (the phase-field d)",
            d,
            _PHASE,
            "a degradation function g(d) is defined for 0 <= d <= 1 (intact to broken)",
        )
        eta = self.opts["eta"]
        g = self.profile(d)
        return g if eta == 0.0 else g * (1.0 - eta) + eta


@register()
class PowerDegradationFunction(DegradationFunction):
    """Power degradation ``g = (1 - d)ᵖ (1 - η) + η``.

    ``d`` (``phase``), ``g`` (``degradation``) and the power ``p`` are Scalars
    ``(*B,)``; ``η`` (``eta``, default 0) is the residual degradation at ``d = 1``.
    """

    def profile(self, d: Scalar) -> Scalar:
        return (1.0 - d) ** self.param("power")


@register()
class RationalDegradationFunction(DegradationFunction):
    """Rational degradation ``g = f / (f + Q(d)) (1 - η) + η`` with ``f = (1 - d)ᵖ``.

    ``Q(d) = b₁ d (1 + b₂ d + b₂ b₃ d²)``.

    ``d`` (``phase``), ``g`` (``degradation``), the power ``p`` and the fitting
    parameters ``b₁, b₂, b₃`` are Scalars ``(*B,)``; ``η`` (``eta``, default 0) is
    the residual degradation at ``d = 1``.
    """

    fields = (
        parameter("b1", Scalar, doc="fitting parameter b₁"),
        parameter("b2", Scalar, doc="fitting parameter b₂"),
        parameter("b3", Scalar, doc="fitting parameter b₃"),
    )

    def profile(self, d: Scalar) -> Scalar:
        b2 = self.param("b2")
        q = self.param("b1") * d * (1.0 + b2 * d * (1.0 + self.param("b3") * d))
        f = (1.0 - d) ** self.param("power")
        return f / (f + q)
