"""Conversions between tensor types: symmetric / skew parts, full forms, components."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option
from neml2.models.common._fields import variable
from neml2.tensors import R2, SR2, WR2, Scalar, Vec


@register()
class R2ToSR2(Model):
    """``output = sym(A) = (A + Aᵀ)/2`` of an R2 ``(*B, 3, 3)``, as an SR2 ``(*B, 6)`` (Mandel)."""

    fields = (
        variable("input", R2, doc="the full tensor A"),
        variable("output", SR2, output=True, doc="its symmetric part"),
    )

    def forward(self, a: R2) -> SR2:
        return a.sym()


@register()
class SR2ToR2(Model):
    """``output = A`` of an SR2 ``(*B, 6)`` (Mandel) as the full symmetric R2 ``(*B, 3, 3)``."""

    fields = (
        variable("input", SR2, doc="the symmetric tensor A"),
        variable("output", R2, output=True, doc="its full 3x3 form"),
    )

    def forward(self, a: SR2) -> R2:
        return a.to_R2()


@register()
class R2ToWR2(Model):
    """``output = skew(A) = (A - Aᵀ)/2`` of an R2 ``(*B, 3, 3)`` as a WR2 ``(*B, 3)``.

    The axial vector is ``w = (W₃₂, W₁₃, W₂₁)`` of ``W = skew(A)``.
    """

    fields = (
        variable("input", R2, doc="the full tensor A"),
        variable("output", WR2, output=True, doc="its skew part"),
    )

    def forward(self, a: R2) -> WR2:
        return a.skew()


@register()
class ScalarToDiagonalSR2(Model):
    """``output = s I``: the diagonal SR2 ``(*B, 6)`` of a Scalar ``s`` ``(*B,)``."""

    fields = (
        variable("input", Scalar, doc="the Scalar s"),
        variable("output", SR2, output=True, doc="s times the identity"),
    )

    def forward(self, s: Scalar) -> SR2:
        return s * SR2.identity(dtype=s.dtype, device=s.device)


@register()
class VecComponents(Model):
    """``(to₀, to₁, to₂) = (v₀, v₁, v₂)``: the three Scalar components ``(*B,)`` of a Vec."""

    fields = (
        variable("from", Vec, doc="the Vec v"),
        option("to", str, many=True, doc="the names of the three component outputs, in order"),
    )

    def setup(self) -> None:
        names = list(self.opts["to"])
        if len(names) != 3:
            raise self.error(f"needs exactly 3 output names, got {len(names)}", "to")
        for n in names:
            self.declare_output(n, Scalar)

    def forward(self, v: Vec) -> tuple[Scalar, Scalar, Scalar]:
        return v[0], v[1], v[2]
