"""Linear elasticity: isotropic (two coefficients) and general (a full stiffness tensor)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from neml2.models._model import Model
from neml2.models._naming import RATE
from neml2.models._registry import register
from neml2.models._schema import (
    Bounds,
    NonlinearParameter,
    derived,
    input,
    option,
    output,
    parameter,
)
from neml2.tensors import MRP, SR2, SSR4, FatalError, Scalar, TensorWrapper
from neml2.tensors._broadcast import _tracing

#: coefficient type -> parameter name
COEFFICIENTS = {
    "YOUNGS_MODULUS": "E",
    "POISSONS_RATIO": "nu",
    "BULK_MODULUS": "K",
    "SHEAR_MODULUS": "G",
    "LAME_LAMBDA": "lambda_",
}


def bulk_shear(c: dict[str, Scalar]) -> tuple[Scalar, Scalar]:
    """``(K, G)`` from any two isotropic coefficients keyed by COEFFICIENTS names."""
    have = frozenset(c)
    if have == {"E", "nu"}:
        E, nu = c["E"], c["nu"]
        return E / (3.0 * (1.0 - 2.0 * nu)), E / (2.0 * (1.0 + nu))
    if have == {"K", "G"}:
        return c["K"], c["G"]
    if have == {"E", "G"}:
        E, G = c["E"], c["G"]
        return E * G / (3.0 * (3.0 * G - E)), G
    if have == {"K", "nu"}:
        K, nu = c["K"], c["nu"]
        return K, 3.0 * K * (1.0 - 2.0 * nu) / (2.0 * (1.0 + nu))
    if have == {"E", "K"}:
        E, K = c["E"], c["K"]
        return K, 3.0 * K * E / (9.0 * K - E)
    if have == {"G", "nu"}:
        G, nu = c["G"], c["nu"]
        return 2.0 * G * (1.0 + nu) / (3.0 * (1.0 - 2.0 * nu)), G
    if have == {"lambda_", "G"}:
        lam, G = c["lambda_"], c["G"]
        return lam + 2.0 / 3.0 * G, G
    raise ValueError(f"unsupported coefficient pair {sorted(have)}")


#: coefficient type -> (its valid values, what the range is): the schema's
#: :class:`~neml2.models._schema.Bounds` per coefficient type (the meaning of each value
#: of ``coefficients`` depends on ``coefficient_types``, so one ``bounds=`` cannot say it)
PHYSICAL_RANGE: dict[str, tuple[Bounds, str]] = {
    "YOUNGS_MODULUS": (Bounds.parse("(0, inf)"), "must be positive"),
    "BULK_MODULUS": (Bounds.parse("(0, inf)"), "must be positive"),
    "SHEAR_MODULUS": (Bounds.parse("(0, inf)"), "must be positive (it is Lamé's mu)"),
    "POISSONS_RATIO": (
        Bounds.parse("(-1, 0.5)"),
        "must lie in (-1, 0.5) (0.5 is incompressible: the bulk modulus would be infinite)",
    ),
    # Lamé's lambda may be negative (auxetic materials); only K = lambda + 2G/3 > 0 binds it
    "LAME_LAMBDA": (Bounds.parse("(-inf, inf)"), "must be finite"),
}


def _constant(value: Any) -> torch.Tensor | None:
    """The values of a constant coefficient, or None for a variable (checked at run time
    by no one: a model input or another model's output is not known at load)."""
    if isinstance(value, NonlinearParameter | str) or value is None:
        return None
    if isinstance(value, TensorWrapper):
        return value.data.detach()
    return torch.as_tensor(value, dtype=torch.float64).detach()


def _first_bad(x: torch.Tensor, ok: torch.Tensor) -> str:
    """``"0.5"`` or ``"0.5 (at batch index 3)"``: the first value of *x* where not *ok*."""
    flat_ok = ok.expand(x.shape).reshape(-1)
    i = int((~flat_ok).nonzero()[0, 0])
    value = float(x.reshape(-1)[i])
    return f"{value:g}" if x.numel() == 1 else f"{value:g} (at batch index {i})"


def check_elastic_constants(
    kinds: Sequence[str], values: Sequence[Any], error: Callable[[str], FatalError]
) -> None:
    """Raise ``error(message)`` when a constant coefficient is outside its physical range.

    *kinds*: coefficient types (keys of :data:`COEFFICIENTS`); *values*: their values
    (typed tensors, tensors, numbers; a :class:`NonlinearParameter` or a variable name
    is skipped). Every value must be finite and in :data:`PHYSICAL_RANGE` (checked at
    every batch point of a ``[Tensors]`` value); when both of a pair are constants, the
    bulk and shear moduli they give must be positive (for ``E, G``: ``E < 3G``; for
    ``lambda, G``: ``lambda > -2G/3``). Every comparison fails on NaN.
    """
    consts: dict[str, Scalar] = {}
    for kind, value in zip(kinds, values, strict=True):
        x = _constant(value)
        if x is None:
            continue
        in_range, what = PHYSICAL_RANGE[kind]
        ok = in_range.mask(x)
        if not bool(ok.all()):
            raise error(f"coefficient {kind} = {_first_bad(x, ok)} {what}")
        consts[COEFFICIENTS[kind]] = Scalar(x)
    if len(consts) != 2 or len(kinds) != 2:
        return
    K, G = bulk_shear(consts)
    for name, m in (("bulk modulus K", K.data), ("shear modulus G", G.data)):
        ok = torch.isfinite(m) & (m > 0)
        if not bool(ok.all()):
            raise error(
                f"coefficients {' and '.join(kinds)} give a {name} of {_first_bad(m, ok)}; "
                "it must be positive and finite (Poisson's ratio in (-1, 0.5))"
            )


def declare_isotropic_coefficients(model) -> list[str]:
    """Check and declare a model's two isotropic elastic constants as parameters.

    Reads the options ``coefficients`` (2 values) and ``coefficient_types`` (2 keys of
    :data:`COEFFICIENTS`, a pair :func:`bulk_shear` converts); constant values must be
    physical (:func:`check_elastic_constants`). Errors name the option. Returns the
    parameter names, in the order of the types.
    """
    coefs, types = model.opts["coefficients"], model.opts["coefficient_types"]
    if len(coefs) != 2 or len(types) != 2:
        raise model.error(
            f"needs exactly two coefficients and two coefficient_types, got "
            f"{len(coefs)} and {len(types)}",
            "coefficients",
        )
    names = [COEFFICIENTS[t] for t in types]
    if len(set(names)) != 2:
        raise model.error(
            f"coefficient_types repeat a type: {' '.join(types)}", "coefficient_types"
        )
    try:
        bulk_shear(dict.fromkeys(names, Scalar(1.0)))
    except ValueError as e:
        raise model.error(str(e), "coefficient_types") from e
    check_elastic_constants(
        types,
        coefs,
        lambda message: model.error(f"option 'coefficients': {message}", "coefficients"),
    )
    for n, c in zip(names, coefs, strict=True):
        model.declare_parameter(n, Scalar, c)
    return names


@register()
class LinearIsotropicElasticity(Model):
    """Linear isotropic elasticity.

    ``σ = 3K vol(ε) + 2G dev(ε)`` (or the inverse, ``ε = vol(σ)/(3K) + dev(σ)/(2G)``,
    with ``compliance = true``), where ``K, G`` follow from any two of Young's
    modulus, Poisson's ratio, bulk modulus, shear modulus and Lamé's λ given in
    ``coefficients`` / ``coefficient_types``. With ``rate_form = true`` the same
    map relates the rates. Shapes: strain, stress ``(*B, 6)`` Mandel.
    """

    fields = (
        input("strain", SR2, doc="(elastic) strain"),
        output("stress", SR2, doc="Cauchy stress"),
        parameter("coefficients", Scalar, many=True, doc="the two elastic coefficients"),
        option(
            "coefficient_types",
            str,
            many=True,
            choices=tuple(COEFFICIENTS),
            doc="what each coefficient is",
        ),
        option("compliance", bool, False, doc="map stress to strain instead"),
        option("rate_form", bool, False, doc="relate rates instead of values"),
    )
    derives = (
        derived(RATE, "strain", replaces=True, when="rate_form = true"),
        derived(RATE, "stress", replaces=True, when="rate_form = true"),
    )

    def setup(self) -> None:
        self._coef_names = declare_isotropic_coefficients(self)
        if self.opts["compliance"]:
            # swap the roles: the input is the stress, the output the strain
            self._structural.clear()
            self.output_spec.clear()
            self.declare_input(self.var["stress"], SR2)
            self.declare_output(self.var["strain"], SR2)
        if self.opts["rate_form"]:
            option_of = {self.var[o]: o for o in ("strain", "stress")}
            ins = {self.derived_name(RATE, option_of[k]): t for k, t in self._structural.items()}
            outs = {self.derived_name(RATE, option_of[k]): t for k, t in self.output_spec.items()}
            self._structural.clear()
            self.output_spec.clear()
            for k, t in ins.items():
                self.declare_input(k, t)
            for k, t in outs.items():
                self.declare_output(k, t)

    def forward(self, x: SR2) -> SR2:
        return x.isotropic_map(*self._map_coefficients())

    def _map_coefficients(self) -> tuple[Scalar, Scalar]:
        """``(3K, 2G)`` (``(1/3K, 1/2G)`` with ``compliance``), each ``(*B,)``.

        Eagerly, constant coefficients give the same pair at every call: it is computed
        once and kept while the coefficients are the same tensors at the same version (a
        new value or an in-place update recomputes it). Neither kept nor reused when a
        coefficient carries tangents, needs its gradient (autograd wants a fresh graph
        per call), or the call is traced (the graph must hold the computation)."""
        coefs = [self.param(n) for n in self._coef_names]
        fresh = (
            _tracing()
            or any(c.tangents for c in coefs)
            or (torch.is_grad_enabled() and any(c.data.requires_grad for c in coefs))
        )
        if fresh:
            return self._coefficient_pair(coefs)
        state = [(c.data, c.data._version) for c in coefs]
        kept = self.__dict__.get("_kept_map")
        if kept is not None and all(
            a is b and u == v for (a, u), (b, v) in zip(kept[0], state, strict=True)
        ):
            return kept[1]
        pair = self._coefficient_pair(coefs)
        self.__dict__["_kept_map"] = (state, pair)
        return pair

    def _coefficient_pair(self, coefs: list[Scalar]) -> tuple[Scalar, Scalar]:
        K, G = bulk_shear(dict(zip(self._coef_names, coefs, strict=True)))
        if self.opts["compliance"]:
            return 1.0 / (3.0 * K), 1.0 / (2.0 * G)
        return 3.0 * K, 2.0 * G


@register()
class GeneralElasticity(Model):
    """Linear elasticity with a general stiffness: ``σ = R(q) C R(q)ᵀ : ε``.

    ``C`` is a 6×6 Mandel stiffness in the crystal frame, rotated into the
    sample frame by the orientation ``q`` (modified Rodrigues parameters).
    """

    fields = (
        input("strain", SR2, doc="(elastic) strain"),
        input("orientation", MRP, doc="rotation from the crystal to the sample frame"),
        output("stress", SR2, doc="Cauchy stress"),
        parameter("elastic_stiffness_tensor", SSR4, doc="stiffness in the crystal frame"),
    )

    def forward(self, strain: SR2, orientation: MRP) -> SR2:
        # (R C Rᵀ) : ε = R (C : (Rᵀ ε R)) Rᵀ: the strain goes into the crystal frame and the
        # stress comes back, two 3x3 rotations instead of rotating the 81 entries of C four
        # times (Taylor at 1e3 points: the rotation of C was a quarter of an eager step)
        R = orientation.to_R2()
        crystal = self.param("elastic_stiffness_tensor").matmul(strain.rotate(R.transpose()))
        return crystal.rotate(R)  # not `@` above: Dynamo cannot trace it on wrappers
