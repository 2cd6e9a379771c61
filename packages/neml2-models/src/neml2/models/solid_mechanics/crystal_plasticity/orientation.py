"""Keeping a modified-Rodrigues orientation away from its singularity."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output
from neml2.tensors import MRP, where


@register()
class FixOrientation(Model):
    """Switch an MRP to its shadow set when ``‖r‖² ≥ t``: ``r* = -r / ‖r‖²``.

    ``r`` and ``r*`` describe the same rotation; the shadow set has the norm
    ``1/‖r‖``, so with the default threshold ``t = 1`` the output stays in the unit
    ball, away from the ``2π`` singularity of the parameters (Banks, "Switching
    Methods for Three-Dimensional Rotational Dynamics Using Modified Rodrigues
    Parameters", 2023). MRP ``(*B, 3)``.
    """

    fields = (
        input("input", MRP, doc="orientation r"),
        output("output", MRP, doc="orientation, in the shadow set where ‖r‖² ≥ threshold"),
        option(
            "threshold",
            float,
            1.0,
            bounds="(0, inf)",
            doc="switch to the shadow set where ‖r‖² ≥ threshold",
        ),
    )

    def forward(self, r: MRP) -> MRP:
        ns = r.norm_sq()
        return where(ns < self.opts["threshold"], r, -r / ns)
