"""The J2-type yield function of macroscale plasticity."""

from __future__ import annotations

import math

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import Scalar

_SQRT_2_3 = math.sqrt(2.0 / 3.0)


@register()
class YieldFunction(Model):
    """Classical yield function ``f = sqrt(2/3) (s̄ - σ_y - h)``.

    ``s̄`` is the effective stress (e.g. the von Mises invariant of the Mandel
    stress, or of the overstress ``M - X`` when kinematic hardening is present),
    ``σ_y`` the yield stress and ``h`` the isotropic hardening. Without the
    ``isotropic_hardening`` option the model has no ``h`` input and
    ``f = sqrt(2/3) (s̄ - σ_y)``. All variables are Scalars ``(*B)``.
    """

    fields = (
        input("effective_stress", Scalar, doc="effective stress s̄"),
        output("yield_function", Scalar, doc="yield function f"),
        parameter("yield_stress", Scalar, bounds="[0, inf)", doc="yield stress σ_y"),
        option(
            "isotropic_hardening",
            str,
            "",
            doc="name of the isotropic hardening input h; leave out for no hardening",
        ),
    )

    def setup(self) -> None:
        h = self.opts["isotropic_hardening"].strip()
        if len(h.split()) > 1:
            raise self.error(f"takes one variable name, got '{h}'", "isotropic_hardening")
        self._h = self.declare_input(h, Scalar) if h else None

    def forward(self, effective_stress: Scalar, *h: Scalar) -> Scalar:
        over = effective_stress - self.param("yield_stress")
        if h:
            over = over - h[0]
        return _SQRT_2_3 * over
