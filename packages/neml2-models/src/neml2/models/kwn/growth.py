"""KWN precipitation: the size distribution's growth rates and volume fraction.

The precipitate size distribution is discretised in size bins; the bin axis is
the last sub-batch axis of the per-bin Scalars (radius ``R``, number density
``n``, growth rate ``Ṙ``): shapes ``(*B, n_bin)`` with ``sub_batch_ndim = 1``.
Per-point quantities (``(*B,)``, no sub-batch axis) broadcast over the bins.
"""

from __future__ import annotations

import math

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar


@register()
class PrecipitateVolumeFraction(Model):
    """Precipitate volume fraction of a binned size distribution ``f = Σ_i (4/3) π R_i³ n_i``.

    ``R_i`` the bin radii (a parameter: usually a per-bin ``[Tensors]`` Scalar
    ``(n_bin,)`` with ``sub_batch_ndim = 1``) and ``n_i`` the number densities
    per bin (input, ``(*B, n_bin)``, ``sub_batch_ndim = 1``); the sum runs over
    the last sub-batch (bin) axis, so ``f`` is ``(*B,)`` with one sub-batch axis
    fewer.
    """

    fields = (
        parameter("radius", Scalar, bounds="(0, inf)", doc="R_i, the radius of each size bin"),
        input("number_density", Scalar, doc="n_i, the number density of each size bin"),
        output("volume_fraction", Scalar, doc="f"),
    )

    def forward(self, n: Scalar) -> Scalar:
        R = self.param("radius")
        volume = (4.0 / 3.0 * math.pi) * R**3 * n
        if volume.sub_batch_ndim < 1:
            raise self.error(
                "neither the radius nor the number density has a sub-batch (size bin) axis "
                "to sum over; give them as per-bin Scalars (sub_batch_ndim >= 1)",
                "number_density",
            )
        return volume.sub_batch.sum(-1)


@register()
class RateLimitedPrecipitateGrowthRate(Model):
    """Diffusion-limited growth rate of a single-species precipitate per size bin.

    ``Ṙ_i = D (x - x^eq) / (R_i Δx)`` with ``R_i`` the bin radii, ``x`` the
    current matrix concentration (input, ``(*B,)`` or per bin), ``x^eq`` the
    equilibrium matrix concentration, ``Δx`` the concentration difference
    across the interface (precipitate minus equilibrium matrix) and ``D`` the
    diffusivity. ``Ṙ`` has the bin axis of ``R`` (``(*B, n_bin)``,
    ``sub_batch_ndim = 1``).
    """

    fields = (
        parameter("radius", Scalar, bounds="(0, inf)", doc="R_i, the radius of each size bin"),
        input("current_concentration", Scalar, doc="x, the current matrix concentration"),
        parameter("equilibrium_concentration", Scalar, doc="x^eq"),
        parameter("concentration_difference", Scalar, doc="Δx = x^p - x^eq"),
        parameter("diffusivity", Scalar, bounds="(0, inf)", doc="D"),
        output("growth_rate", Scalar, doc="Ṙ_i"),
    )

    def forward(self, x: Scalar) -> Scalar:
        R = self.param("radius")
        D = self.param("diffusivity")
        supersaturation = (x - self.param("equilibrium_concentration")) / self.param(
            "concentration_difference"
        )
        return D / R * supersaturation


@register()
class SFFKPrecipitationGrowthRate(Model):
    """Multi-component growth rate per size bin of the SFFK model (Svoboda, Fischer,
    Fratzl, Kozeschnik) ``Ṙ_i = Δg / (R_i R_g T S)``.

    ``R_i`` the bin radii, ``Δg`` the Gibbs free energy difference, ``T`` the
    temperature and ``S`` the projected diffusivity sum (inputs, ``(*B,)``),
    ``R_g`` the gas constant. ``Ṙ`` has the bin axis of ``R`` (``(*B, n_bin)``,
    ``sub_batch_ndim = 1``).
    """

    fields = (
        parameter("radius", Scalar, bounds="(0, inf)", doc="R_i, the radius of each size bin"),
        input("projected_diffusivity_sum", Scalar, doc="S"),
        parameter("gibbs_free_energy_difference", Scalar, doc="Δg"),
        input("temperature", Scalar, doc="T"),
        parameter("gas_constant", Scalar, bounds="(0, inf)", doc="R_g"),
        output("growth_rate", Scalar, doc="Ṙ_i"),
    )

    def forward(self, S: Scalar, T: Scalar) -> Scalar:
        require(self, f"input '{self.var['temperature']}' (the temperature T)", T, "(0, inf)")
        denom = self.param("radius") * self.param("gas_constant") * T * S
        return self.param("gibbs_free_energy_difference") / denom
