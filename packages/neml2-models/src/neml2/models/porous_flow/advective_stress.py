"""Advective stress of a swelling / expanding porous solid."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import R2, Scalar


@register()
class AdvectiveStress(Model):
    """Advective stress ``ps = -c / (3 Js^(5/3) Jt^(2/3)) P:F``.

    ``F`` (``deformation_gradient``) and the first Piola-Kirchhoff stress ``P``
    (``pk1_stress``) are R2 ``(*B, 3, 3)``; ``ps`` (``advective_stress``), the
    coefficient ``c`` and the Jacobians ``Js`` (swelling and phase change, ``js``)
    and ``Jt`` (thermal and volume expansion, ``jt``) are Scalars ``(*B,)``.
    ``js`` / ``jt`` are optional inputs: left out, the Jacobian is 1.
    """

    fields = (
        option("js", str, "", doc="name of the swelling Jacobian Js (optional; default 1)"),
        option("jt", str, "", doc="name of the thermal Jacobian Jt (optional; default 1)"),
        input("deformation_gradient", R2, doc="deformation gradient F"),
        input("pk1_stress", R2, doc="first Piola-Kirchhoff stress P"),
        output("advective_stress", Scalar, doc="the average advective stress ps"),
        parameter("coefficient", Scalar, doc="volume-change coefficient c"),
    )

    def setup(self) -> None:
        #: exponents of the optional Jacobians present, in input order
        self._powers: list[float] = []
        for opt, power in (("js", -5.0 / 3.0), ("jt", -2.0 / 3.0)):
            name = self.opts[opt]
            if name:
                self.declare_input(name, Scalar)
                self._powers.append(power)

    def forward(self, F: R2, P: R2, *jacobians: Scalar) -> Scalar:
        out = (self.param("coefficient") * (-1.0 / 3.0)) * P.inner(F)
        for J, power in zip(jacobians, self._powers, strict=True):
            out = out * J**power
        return out
