"""Predictors: initial guesses of an implicit update's unknowns.

A predictor is an ordinary model whose outputs are named after the unknowns it
predicts; its inputs (old values, times, ...) become inputs of the update.
The guess only sets Newton's starting point, never the converged answer.
"""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._naming import HISTORY, HISTORY_2, NamingRule
from neml2.models._registry import register
from neml2.models._schema import derived, input, option, output, parameter
from neml2.models._spellings import former_type_tokens
from neml2.tensors import MRP, R2, SR2, WR2, Scalar, Vec, constant, where
from neml2.tensors import abs as abs_

TYPES = {"Scalar": Scalar, "Vec": Vec, "SR2": SR2, "R2": R2, "WR2": WR2, "MRP": MRP}


def _unknown_fields():
    return (
        *(
            option(
                f"unknowns_{t}",
                str,
                (),
                many=True,
                doc=f"{t} unknowns to predict",
                formerly=tuple(f"unknowns_{old}" for old in former_type_tokens(t)),
            )
            for t in TYPES
        ),
        option(
            "cold",
            str,
            (),
            many=True,
            doc="'unknown:variable' pairs: on a step without history (|t~1 - t~2| <= eps, "
            "the first) the unknown takes that variable's value instead of its history",
        ),
    )


def _unknown_histories(*rules: NamingRule) -> tuple:
    """The history inputs (``u~1``, ``u~2``) of every listed unknown ``u``."""
    return tuple(
        derived(rule, f"unknowns_{t}", type=typ, doc=rule.describe("the unknown"))
        for t, typ in TYPES.items()
        for rule in rules
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

    def _cold_pairs(self, listed) -> dict[str, str]:
        """``unknown -> variable`` from the ``cold`` option (checked)."""
        names = {n for n, _ in listed}
        cold: dict[str, str] = {}
        for entry in self.opts["cold"]:
            u, sep, var = entry.partition(":")
            if not sep or not u or not var:
                raise self.error(f"entry '{entry}' is not 'unknown:variable'", "cold")
            if u not in names:
                raise self.error(
                    f"entry '{entry}' names '{u}', which is not an unknown "
                    f"(the unknowns: {', '.join(sorted(names))})",
                    "cold",
                )
            if u in cold:
                raise self.error(f"unknown '{u}' is given a cold value twice", "cold")
            cold[u] = var
        return cold

    def _declare_cold(self, listed) -> None:
        """Declare the cold variables (after the other inputs), one per distinct name."""
        self._cold = self._cold_pairs(listed)
        types = dict(listed)
        for u, var in self._cold.items():
            if var in self.input_spec:
                if self.input_spec[var] is not types[u]:
                    raise self.error(
                        f"cold variable '{var}' is used for unknowns of different types", "cold"
                    )
                continue
            self.declare_input(var, types[u])

    def _select_cold(self, warm, outs, values):
        """Each unknown with a cold variable: its guess where *warm*, else the cold value."""
        return tuple(
            where(warm, o, values[self._cold[u]]) if u in self._cold else o
            for (u, _), o in zip(self._names, outs, strict=True)
        )


def _warm(t1: Scalar, t2: Scalar) -> Scalar:
    """A bool Scalar: there is a history to extrapolate from (``|t~1 - t~2| > eps``)."""
    return abs_(t1 - t2) > torch.finfo(t1.dtype).eps


@register()
class ConstantExtrapolationPredictor(_ListedUnknowns):
    """``u = u~1``: the value at the previous step.

    With ``cold = 'u:v ...'`` an unknown ``u`` takes the variable ``v`` instead on a
    step without history (``|t~1 - t~2| <= ε``, the first step: a physics-based guess
    for the cold start); the model then also reads ``t``, ``t~1`` and ``t~2`` (names
    from ``time``) and each cold variable. Shapes follow the unknowns' types.
    """

    fields = (option("time", str, "t", doc="time variable (read only with 'cold')"),)
    derives = (
        *_unknown_histories(HISTORY),
        derived(HISTORY, "time", type=Scalar, when="cold is set"),
        derived(HISTORY_2, "time", type=Scalar, when="cold is set"),
    )

    def setup(self) -> None:
        self._names = self._listed()
        for n, typ in self._names:
            self.declare_input(self.derived_name(HISTORY, f"unknowns_{typ.__name__}", n), typ)
            self.declare_output(n, typ)
        if self.opts["cold"]:
            self._times = (
                self.opts["time"],
                self.derived_name(HISTORY, "time"),
                self.derived_name(HISTORY_2, "time"),
            )
            for name in self._times:
                self.declare_input(name, Scalar)
            self._declare_cold(self._names)
        else:
            self._cold = {}

    def forward(self, *args):
        n = len(self._names)
        out = tuple(o * 1.0 for o in args[:n])
        if self._cold:
            values = dict(zip(self.input_spec, args, strict=True))
            _, t1, t2 = self._times
            out = self._select_cold(_warm(values[t1], values[t2]), out, values)
        return out if len(out) != 1 else out[0]


@register()
class LinearExtrapolationPredictor(_ListedUnknowns):
    """``u = u~1 + (u~1 - u~2) (t - t~1) / (t~1 - t~2)``.

    Without a history (``|t~1 - t~2| <= ε``, the first step) ``u = u~1``, or the
    variable named for ``u`` in ``cold = 'u:v ...'``. Shapes follow the unknowns' types.
    """

    fields = (
        input("time", Scalar, "t", doc="current time"),
        input("time_old", Scalar, "t~1", doc="previous time"),
        input("time_older", Scalar, "t~2", doc="time before the previous one"),
    )
    derives = _unknown_histories(HISTORY, HISTORY_2)

    def setup(self) -> None:
        self._names = self._listed()
        for n, typ in self._names:
            source = f"unknowns_{typ.__name__}"
            self.declare_input(self.derived_name(HISTORY, source, n), typ)
            self.declare_input(self.derived_name(HISTORY_2, source, n), typ)
            self.declare_output(n, typ)
        self._declare_cold(self._names)

    def forward(self, t, t1, t2, *rest):
        n = len(self._names)
        old = rest[: 2 * n]
        warm = _warm(t1, t2)
        dt_old = t1 - t2
        safe = where(warm, dt_old, constant(Scalar, 1.0, like=dt_old))
        ratio = where(warm, (t - t1) / safe, constant(Scalar, 0.0, like=dt_old))
        out = tuple(u1 + (u1 - u2) * ratio for u1, u2 in zip(old[0::2], old[1::2], strict=True))
        if self._cold:
            values = dict(zip(self.input_spec, (t, t1, t2, *rest), strict=True))
            out = self._select_cold(warm, out, values)
        return out if len(out) != 1 else out[0]


@register()
class CrystalPlasticityStrainPredictor(Model):
    """Elastic-strain guess for crystal plasticity (the reference library's warm-up).

    ``ε_e = ε_e~1 + s · D · (t - t~1)`` where ``‖ε_e~1‖ < threshold`` (the start of a
    load history, an elastic strain still small), else ``ε_e~1``: the previous step's
    elastic strain, which later steps of a history converge from in few iterations.
    ``D`` is the prescribed deformation rate and ``s`` (``scale``) the fraction of the
    strain increment taken as elastic. Shapes: every input and the output ``(*B, 6)``
    (``SR2``) or ``(*B)`` (``Scalar``).
    """

    fields = (
        input("deformation_rate", SR2, doc="deformation rate D"),
        input("time", Scalar, "t", doc="current time"),
        input("time_old", Scalar, "t~1", doc="previous time"),
        output("elastic_strain", SR2, doc="predicted elastic strain"),
        parameter("scale", Scalar, doc="scale factor applied to the strain increment"),
        parameter(
            "threshold",
            Scalar,
            1e-3,
            doc="the increment is added only where the previous elastic strain's norm is "
            "below this",
        ),
    )
    derives = (derived(HISTORY, "elastic_strain", doc="the previous elastic strain"),)

    def setup(self) -> None:
        self.declare_input(self.derived_name(HISTORY, "elastic_strain"), SR2)

    def forward(self, d, t, t1, ee1):
        small = ee1.norm() < self.param("threshold")
        return where(small, ee1 + d * self.param("scale") * (t - t1), ee1)


@register()
class CrystalPlasticityDeformationGradientPredictor(Model):
    """Plastic-deformation-gradient guess for multiplicative crystal plasticity.

    The reference library's warm-up for an ``F = Fₑ Fₚ`` formulation, the counterpart of
    :class:`CrystalPlasticityStrainPredictor`. Holding ``Fₚ`` at its old value gives the
    elastic trial ``Fₑ^trial = F (Fₚ~1)⁻¹``, which over-stresses when a step is large;
    the guess keeps only the fraction ``s`` (``scale``) of the trial elastic stretch and
    puts the rest into ``Fₚ``: ``Fₑ^pred = I + s (Fₑ^trial - I)`` and
    ``Fₚ = (Fₑ^pred)⁻¹ F`` where ``‖sym(Fₑ^trial) - I‖ > threshold`` (the trial's
    linearized elastic strain, Mandel norm), else ``Fₚ = Fₚ~1``. With ``s = 1`` the
    guess is ``Fₚ~1`` everywhere.

    Only ``Fₚ`` is guessed: an update's other unknowns start from their defaults, or
    from another predictor composed beside this one (a ``ComposedModel`` of this and a
    ``ConstantExtrapolationPredictor`` of the hardening). Shapes: ``F``, ``Fₚ~1`` and
    the output ``(*B, 3, 3)`` (``R2``); ``scale`` and ``threshold`` ``(*B)``
    (``Scalar``). The tangents are those of the formula (zero through the gate); an
    implicit update never differentiates its guess.
    """

    fields = (
        input("deformation_gradient", R2, doc="deformation gradient F"),
        output("plastic_deformation_gradient", R2, doc="predicted plastic deformation gradient Fₚ"),
        parameter(
            "scale",
            Scalar,
            0.1,
            doc="fraction s of the trial elastic stretch Fₑ^trial - I kept in the guess",
        ),
        parameter(
            "threshold",
            Scalar,
            1e-3,
            doc="the guess replaces Fₚ~1 only where the trial elastic strain's norm exceeds this",
        ),
    )
    derives = (derived(HISTORY, "plastic_deformation_gradient", doc="the previous Fₚ"),)

    def setup(self) -> None:
        self.declare_input(self.derived_name(HISTORY, "plastic_deformation_gradient"), R2)

    def forward(self, F: R2, Fp1: R2) -> R2:
        eye = constant(R2, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], like=F)
        Fe_trial = F.matmul(Fp1.inv())
        # the gate is piecewise constant: its argument needs no tangents
        strain = (Fe_trial.primal().sym() - eye.sym()).norm()
        over = strain > self.param("threshold")
        Fe_pred = eye + self.param("scale") * (Fe_trial - eye)
        return where(over, Fe_pred.inv().matmul(F), Fp1)
