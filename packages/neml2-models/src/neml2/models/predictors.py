"""Predictors: initial guesses of an implicit update's unknowns.

A predictor is an ordinary model whose outputs are named after the unknowns it
predicts; its inputs (old values, times, ...) become inputs of the update.
The guess only sets Newton's starting point, never the converged answer.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import MRP, R2, SR2, WR2, Scalar, Vec, where

TYPES = {"Scalar": Scalar, "Vec": Vec, "SR2": SR2, "R2": R2, "WR2": WR2, "MRP": MRP}


def _unknown_fields():
    return tuple(
        option(f"unknowns_{t}", str, (), many=True, doc=f"{t} unknowns to predict") for t in TYPES
    )


class _ListedUnknowns(Model):
    fields = _unknown_fields()

    def _listed(self):
        out = []
        for t, typ in TYPES.items():
            out += [(n, typ) for n in self.opts[f"unknowns_{t}"]]
        if not out:
            raise self.error("lists no unknowns (unknowns_SR2 = '...', unknowns_Scalar = ...)")
        return out


@register()
class ConstantExtrapolationPredictor(_ListedUnknowns):
    """``u = u~1``: the value at the previous step."""

    def setup(self) -> None:
        for n, typ in self._listed():
            self.declare_input(f"{n}~1", typ)
            self.declare_output(n, typ)

    def forward(self, *old):
        out = tuple(o * 1.0 for o in old)
        return out if len(out) != 1 else out[0]


@register()
class LinearExtrapolationPredictor(_ListedUnknowns):
    """``u = u~1 + (u~1 - u~2) (t - t~1) / (t~1 - t~2)`` (constant when ``t~1 = t~2``)."""

    fields = (
        input("time", Scalar, "t", doc="current time"),
        input("time_old", Scalar, "t~1", doc="previous time"),
        input("time_older", Scalar, "t~2", doc="time before the previous one"),
    )

    def setup(self) -> None:
        self._names = self._listed()
        for n, typ in self._names:
            self.declare_input(f"{n}~1", typ)
            self.declare_input(f"{n}~2", typ)
            self.declare_output(n, typ)

    def forward(self, t, t1, t2, *old):
        dt_old = t1 - t2
        safe = where(dt_old.data != 0, dt_old, dt_old * 0.0 + 1.0)
        ratio = where(dt_old.data != 0, (t - t1) / safe, (t - t) * 0.0)
        out = tuple(u1 + (u1 - u2) * ratio for u1, u2 in zip(old[0::2], old[1::2], strict=True))
        return out if len(out) != 1 else out[0]


@register()
class CrystalPlasticityStrainPredictor(Model):
    """Elastic-strain guess for crystal plasticity: ``ε_e = s · D · (t - t~1)``.

    ``D`` is the prescribed deformation rate and ``s`` (``scale``) the fraction
    of the strain increment taken as elastic (the reference library's warm-up
    predictor; its guess does not depend on the previous elastic strain).
    """

    fields = (
        input("deformation_rate", SR2, doc="deformation rate D"),
        input("time", Scalar, "t", doc="current time"),
        input("time_old", Scalar, "t~1", doc="previous time"),
        output("elastic_strain", SR2, doc="predicted elastic strain"),
        parameter("scale", Scalar, doc="scale factor applied to the strain increment"),
    )

    def forward(self, d, t, t1):
        return d * self.param("scale") * (t - t1)
