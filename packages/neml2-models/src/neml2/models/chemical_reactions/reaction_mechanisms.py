"""Reaction mechanisms: the reaction rate ``α̇`` of a single reacting phase."""

from __future__ import annotations

import torch

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import Scalar, clamp, log


class ReactionMechanism(Model):
    """Base: conversion degree ``α`` in, reaction rate ``α̇`` out, with coefficient
    ``k`` (``coef``) and order ``n`` (``order``); all Scalars ``(*B,)``."""

    fields = (
        input("conversion_degree", Scalar, doc="degree of conversion α"),
        output("reaction_rate", Scalar, doc="reaction rate α̇"),
        parameter("coef", Scalar, doc="reaction coefficient k (e.g. an ArrheniusParameter)"),
        parameter("order", Scalar, doc="reaction order n"),
    )


@register()
class ContractingGeometry(ReactionMechanism):
    """Contracting-geometry mechanism ``α̇ = k (1 - α)ⁿ``.

    ``1 - α`` is clamped to ``[ε, 1 - ε]`` (``ε`` the machine epsilon), so that
    the power stays defined at complete and at zero conversion. ``α``
    (``conversion_degree``), ``α̇`` (``reaction_rate``), ``k`` (``coef``) and ``n``
    (``order``) are Scalars ``(*B,)``.
    """

    def forward(self, alpha: Scalar) -> Scalar:
        eps = torch.finfo(alpha.dtype).eps
        remaining = clamp(1.0 - alpha, eps, 1.0 - eps)
        return self.param("coef") * remaining ** self.param("order")


@register()
class AvramiErofeevNucleation(ReactionMechanism):
    """Avrami-Erofeev nucleation mechanism ``α̇ = k (1 - α) (-ln(1 - α))ⁿ``.

    ``α`` (``conversion_degree``), ``α̇`` (``reaction_rate``), ``k`` (``coef``) and
    ``n`` (``order``) are Scalars ``(*B,)``; defined for ``0 <= α < 1``: an eager call
    with ``α`` outside is an error naming the points (not inside an implicit solve,
    nor traced: :mod:`neml2.models._domain`).
    """

    def forward(self, alpha: Scalar) -> Scalar:
        require(
            self,
            f"input '{self.var['conversion_degree']}' (the conversion degree α)",
            alpha,
            "[0, 1)",
            "(-ln(1 - α))ⁿ is defined for 0 <= α < 1",
        )
        remaining = 1.0 - alpha
        return self.param("coef") * remaining * (-log(remaining)) ** self.param("order")


@register()
class DiffusionLimitedReaction(Model):
    """Diffusion-limited reaction rate ``α̇ = 2 D Rl Rs / ω · ro / (ro - ri + δ)``.

    The product of a cylindrical shrinking core grows by diffusion through it.

    ``ri`` (``product_inner_radius``) and ``ro`` (``solid_inner_radius``) are the
    dimensionless radii bounding the product layer, ``Rl``, ``Rs`` the reactivities
    of the liquid and of the solid (in ``[0, 1]``), ``D`` the diffusion coefficient
    of the rate-limiting species in the product, ``ω`` its molar volume and ``δ``
    (``product_dummy_thickness``) a small thickness keeping the rate finite when
    the product layer is empty. All variables are Scalars ``(*B,)``.
    """

    fields = (
        input("product_inner_radius", Scalar, doc="inner radius ri of the product phase"),
        input("solid_inner_radius", Scalar, doc="inner radius ro of the solid phase"),
        input("liquid_reactivity", Scalar, doc="reactivity Rl of the liquid, in [0, 1]"),
        input("solid_reactivity", Scalar, doc="reactivity Rs of the solid, in [0, 1]"),
        output("reaction_rate", Scalar, doc="volumetric rate of change α̇ of the product"),
        parameter(
            "diffusion_coefficient",
            Scalar,
            doc="diffusion coefficient D of the rate-limiting species in the product",
        ),
        option(
            "molar_volume",
            float,
            bounds="(0, inf)",
            doc="molar volume ω of the rate-limiting species",
        ),
        option(
            "product_dummy_thickness",
            float,
            0.01,
            bounds="[0, inf)",
            doc="thickness δ added to the product layer (avoids a division by zero)",
        ),
    )

    def forward(self, ri: Scalar, ro: Scalar, rl: Scalar, rs: Scalar) -> Scalar:
        scale = 2.0 / self.opts["molar_volume"]
        thickness = ro - ri + self.opts["product_dummy_thickness"]
        return (scale * self.param("diffusion_coefficient")) * rl * rs * ro / thickness
