"""Geometry of a cylindrical channel lined by a reaction product."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.tensors import Scalar, clamp, sqrt


@register()
class CylindricalChannelGeometry(Model):
    """Channel radii ``ri = sqrt(1 - φs - φp)``, ``ro = sqrt(1 - φs)``.

    Dimensionless radii of a cylindrical channel through a solid, lined by a product.

    ``φs`` (``solid_fraction``) and ``φp`` (``product_fraction``) are the volume
    fractions of the solid and of the product; ``ri`` (``inner_radius``) bounds the
    open channel, ``ro`` (``outer_radius``) the product layer. ``1 - φs - φp`` is
    clamped to ``[ε, 1 - ε]`` (``ε`` the machine epsilon; zero derivative there).
    All Scalars ``(*B,)``.
    """

    fields = (
        input("solid_fraction", Scalar, doc="volume fraction φs of the solid"),
        input("product_fraction", Scalar, doc="volume fraction φp of the product"),
        output("inner_radius", Scalar, doc="dimensionless inner radius ri of the product"),
        output("outer_radius", Scalar, doc="dimensionless outer radius ro of the product"),
    )

    def forward(self, phi_s: Scalar, phi_p: Scalar) -> tuple[Scalar, Scalar]:
        eps = torch.finfo(phi_s.dtype).eps
        open_fraction = clamp(1.0 - phi_s - phi_p, eps, 1.0 - eps)
        return sqrt(open_fraction), sqrt(1.0 - phi_s)
