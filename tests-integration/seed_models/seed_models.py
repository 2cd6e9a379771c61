"""Models written exactly as the seed's authoring contract documents them
(``neml2.models.model``): a class-level ``hit = HitSchema(...)``, ``forward(self,
*inputs, *nl_params, v=None, v2=None, vh=None)`` with its own chain rule through
``propagate_tangents``, typed parameters and buffers, a submodule, output priorities,
registration by ``register_neml2_object``.

Importing this module registers them (types ``Seed*``). The input files next to it
configure them; the route matrix (``../routes``) and the generic derivative check
(``../test_model_derivatives.py``) run them.
"""

from __future__ import annotations

from neml2.models import register_neml2_object
from neml2.models.model import (
    HitSchema,
    Model,
    NLParam,
    input,
    option,
    output,
    parameter,
    register_submodule,
)
from neml2.tensors import SR2, Scalar, dev, exp, inner, vol


@register_neml2_object
class SeedLinearElasticity(Model):
    """Isotropic linear elasticity, ``sigma = 3K vol(eps) + 2G dev(eps)``, from Young's
    modulus and Poisson's ratio; an explicit leaf (linear: no second-order action)."""

    hit = HitSchema(
        input("strain", SR2, "the small strain"),
        output("stress", SR2, "the Cauchy stress"),
        parameter("E", Scalar, "Young's modulus", allow_nonlinear=True),
        parameter("nu", Scalar, "Poisson's ratio"),
    )
    SUPPORTS_SECOND_ORDER = True

    def forward(self, strain, *nl_params, v=None, v2=None, vh=None):
        E, nu = self._get_param("E", nl_params), self._get_param("nu", nl_params)
        K = E / (3.0 * (1.0 - 2.0 * nu))
        G = E / (2.0 * (1.0 + nu))
        stress = 3.0 * K * vol(strain) + 2.0 * G * dev(strain)
        if v is None:
            return stress
        actions = {"strain": lambda d: 3.0 * K * vol(d) + 2.0 * G * dev(d)}
        actions_2 = {}
        nl = NLParam.of(self)
        if "E" in nl:  # a promoted modulus: stress is linear in E and in the strain
            e = nl["E"].input_name
            actions[e] = lambda d: d * (stress / E)
            per_E = lambda de: (3.0 * K * vol(de) + 2.0 * G * dev(de)) / E  # noqa: E731
            actions_2[("strain", e)] = lambda de, dE: dE * per_E(de)
            actions_2[(e, "strain")] = lambda dE, de: dE * per_E(de)
        return stress, *self.propagate_tangents(
            v, "stress", actions, output=stress, v2=v2, actions_2=actions_2, vh=vh
        )


@register_neml2_object
class SeedThermalEnergy(Model):
    """Free energy ``psi = c/2 exp(a T) (eps : eps)``: a nonlinear explicit leaf with
    second-order actions, so it may sit inside a ``Normality``."""

    hit = HitSchema(
        input("strain", SR2, "the small strain"),
        input("temperature", Scalar, "the temperature"),
        output("energy", Scalar, "the free energy density"),
        parameter("c", Scalar, "the stiffness"),
        parameter("a", Scalar, "the thermal softening rate"),
    )
    SUPPORTS_SECOND_ORDER = True

    def forward(self, strain, temperature, *nl_params, v=None, v2=None, vh=None):
        c, a = self._get_param("c", nl_params), self._get_param("a", nl_params)
        w = c * exp(a * temperature)  # (*B,)
        ee = inner(strain, strain)
        energy = 0.5 * w * ee
        if v is None:
            return energy
        actions_1 = {
            "strain": lambda d: w * inner(strain, d),
            "temperature": lambda d: d * (0.5 * a * w * ee),
        }
        actions_2 = {
            ("strain", "strain"): lambda da, db: w * inner(da, db),
            ("strain", "temperature"): lambda da, db: db * (a * w * inner(strain, da)),
            ("temperature", "strain"): lambda da, db: da * (a * w * inner(strain, db)),
            ("temperature", "temperature"): lambda da, db: da * db * (0.5 * a * a * w * ee),
        }
        return energy, *self.propagate_tangents(
            v, "energy", actions_1, output=energy, v2=v2, actions_2=actions_2, vh=vh
        )


@register_neml2_object
class SeedAffine(Model):
    """``y = a x + b + c x^2 + d + offset``: the parameters take every accepted spec
    (HIT literal, ``[Tensors]`` name, another model's output, a free variable), the
    constant ``offset`` is a typed buffer declared from a string option."""

    hit = HitSchema(
        input("x", Scalar, "the argument"),
        output("y", Scalar, "the value"),
        parameter("a", Scalar, "the slope", allow_nonlinear=True),
        parameter("b", Scalar, "the intercept", allow_nonlinear=True),
        parameter("c", Scalar, "the curvature", allow_nonlinear=True),
        parameter("d", Scalar, "the shift", allow_nonlinear=True),
        option("offset", str, "a constant added to y (numbers)", default="0"),
    )
    SUPPORTS_SECOND_ORDER = True

    def __init__(self, **hit_values):
        super().__init__(**hit_values)
        self.declare_typed_buffer("offset_value", self.opts["offset"], Scalar)

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        p = {n: self._get_param(n, nl_params) for n in "abcd"}
        y = p["a"] * x + p["b"] + p["c"] * x * x + p["d"] + self.param("offset_value")
        if v is None:
            return y
        actions = {"x": lambda t: t * (p["a"] + 2.0 * p["c"] * x)}
        scale = {"a": x, "b": None, "c": x * x, "d": None}
        for name, nlp in NLParam.of(self).items():
            s = scale[name]
            actions[nlp.input_name] = (lambda t: t) if s is None else (lambda t, s=s: t * s)
        actions_2 = {("x", "x"): lambda ta, tb: 2.0 * p["c"] * ta * tb}
        for name, nlp in NLParam.of(self).items():
            if name in ("a", "c"):  # d2y/dx da = 1, d2y/dx dc = 2x
                k = 1.0 if name == "a" else None
                i = nlp.input_name
                f = (lambda ta, tb: ta * tb) if k else (lambda ta, tb: 2.0 * x * ta * tb)
                actions_2[("x", i)] = f
                actions_2[(i, "x")] = f
        return y, *self.propagate_tangents(
            v, "y", actions, output=y, v2=v2, actions_2=actions_2, vh=vh
        )


@register_neml2_object
class SeedScaled(Model):
    """``y = factor * inner(x)``: wraps another [Models] block (a Scalar -> Scalar
    model named by ``model``) registered as a submodule under its block name."""

    hit = HitSchema(
        input("x", Scalar, "the argument of the wrapped model"),
        output("y", Scalar, "the scaled value"),
        option("model", str, "the [Models] block to wrap"),
        option("factor", float, "the scale factor", default=2.0),
    )
    SUPPORTS_SECOND_ORDER = True

    @classmethod
    def from_hit(cls, node, factory):
        m = super().from_hit(node, factory)
        inner_model = factory.model(m.opts["model"], node.location)
        if list(inner_model.input_spec) != ["x"] or len(inner_model.output_spec) != 1:
            raise m.error("the wrapped model must map input 'x' to one output", "model")
        m._inner_name = register_submodule(m, inner_model, "inner")
        return m

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        inner_model = getattr(self, self._inner_name)
        k = self.opts["factor"]
        if v is None:
            return k * inner_model(x)
        res = inner_model(x, v=v, v2=v2, vh=vh)
        out = k * res[0]
        (name,) = inner_model.output_spec
        scaled = [{"y": _scale_nested(d.get(name, {}), k)} for d in res[1:]]
        return (out, *scaled)


def _scale_nested(d, k):
    return {a: (_scale_nested(t, k) if isinstance(t, dict) else k * t) for a, t in d.items()}


@register_neml2_object
class SeedLowGuess(Model):
    """``y = x``: a first guess of ``y``, claimed with priority "low"."""

    hit = HitSchema(
        input("x", Scalar, "the argument"),
        output("y", Scalar, "the guess", priority="low"),
    )
    SUPPORTS_SECOND_ORDER = True

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        if v is None:
            return x
        return x, *self.propagate_tangents(v, "y", {"x": lambda t: t}, output=x, v2=v2, vh=vh)


@register_neml2_object
class SeedHighCorrection(Model):
    """``y = x + x^3 / 3``: the corrected value, claimed with priority "high" (it wins
    over a low-priority provider of ``y`` in the same ComposedModel)."""

    hit = HitSchema(
        input("x", Scalar, "the argument"),
        output("y", Scalar, "the corrected value", priority="high"),
    )
    SUPPORTS_SECOND_ORDER = True

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        y = x + x * x * x / 3.0
        if v is None:
            return y
        return y, *self.propagate_tangents(
            v,
            "y",
            {"x": lambda t: t * (1.0 + x * x)},
            output=y,
            v2=v2,
            actions_2={("x", "x"): lambda ta, tb: 2.0 * x * ta * tb},
            vh=vh,
        )
