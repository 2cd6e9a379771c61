"""Traction-separation laws of cohesive interfaces, and their mixed-mode ingredients.

The displacement jump ``δ = (δ_n, δ_s1, δ_s2)`` (normal first) is split into
Scalars upstream (``VecComponents``, ``MacaulaySplit``: ``δ_n⁺`` the opening,
``δ_n⁻`` the penetration, ``ScalarPNorm``: ``δ_s = √(δ_s1² + δ_s2²)``); these
models take the Scalars and give the traction ``T = (T_n, T_s1, T_s2)`` (a Vec,
``(*B, 3)``) or a mixed-mode separation (a Scalar, ``(*B,)``). Branch masks
(opening vs. compression, damage regimes) carry no derivative.
"""

from __future__ import annotations

import math

import torch

from neml2.models._model import Model
from neml2.models._naming import HISTORY
from neml2.models._registry import register
from neml2.models._schema import derived, input, option, output, parameter
from neml2.tensors import Scalar, Vec, exp, sqrt, where


def _eps(x: Scalar) -> float:
    """Machine epsilon of *x*'s dtype: keeps ``sqrt`` / ``pow`` smooth at ``β = 0``."""
    return torch.finfo(x.dtype).eps


def _safe(x: Scalar, ok: Scalar) -> Scalar:
    """*x* where *ok*, else 1: a divisor that stays finite on the masked-off branch."""
    return where(ok, x, 1.0)


_OPENING = input(
    "normal_separation",
    Scalar,
    doc="normal separation δ_n⁺ (the opening part of the normal jump; it picks the branch)",
)
_BETA = parameter("mode_mixity", Scalar, doc="mode-mixity ratio β (e.g. a ModeMixity output)")
_PENETRATION = option(
    "normal_penetration",
    str,
    "",
    doc="optional input: the normal penetration δ_n⁻ (the closing part of the normal jump), "
    "resisted by a penalty term on T_n; empty: none",
)
_TANGENTIAL = (
    input("tangential_separation_1", Scalar, doc="first tangential separation δ_s1"),
    input("tangential_separation_2", Scalar, doc="second tangential separation δ_s2"),
)


class _FullSeparation(Model):
    """Shared fields of the mixed-mode full-separation criteria."""

    fields = (
        _OPENING,
        output("full_separation", Scalar, doc="full (failure) separation δ_f"),
        _BETA,
        parameter(
            "critical_separation",
            Scalar,
            bounds="(0, inf)",
            doc="critical (damage-onset) separation δ_c (e.g. CamanhoDavilaCriticalSeparation)",
        ),
        parameter("penalty_stiffness", Scalar, bounds="(0, inf)", doc="penalty stiffness K"),
        parameter(
            "mode_I_fracture_toughness",
            Scalar,
            bounds="(0, inf)",
            doc="mode I critical energy release G_Ic",
        ),
        parameter(
            "mode_II_fracture_toughness",
            Scalar,
            bounds="(0, inf)",
            doc="mode II critical energy release G_IIc",
        ),
        parameter(
            "shear_strength", Scalar, bounds="(0, inf)", doc="shear strength S (compression branch)"
        ),
        parameter("eta", Scalar, doc="criterion exponent η"),
    )

    def opening(self, beta: Scalar, eps: float) -> Scalar:
        raise NotImplementedError

    def forward(self, dn: Scalar) -> Scalar:
        beta = self.param("mode_mixity")
        open_ = self.opening(beta, _eps(dn))
        closed = 2.0 * self.param("mode_II_fracture_toughness") / self.param("shear_strength")
        return where(dn > 0.0, open_, closed)


@register()
class ModeMixity(Model):
    """Mode-mixity ratio ``β = δ_s / δ_n⁺`` while opening (``δ_n⁺ > 0``), ``β = 0`` otherwise.

    Shapes: all ``(*B,)`` Scalars.
    """

    fields = (
        _OPENING,
        input("tangential_separation", Scalar, doc="tangential separation magnitude δ_s"),
        output("mode_mixity", Scalar, doc="mode-mixity ratio β"),
    )

    def forward(self, dn: Scalar, ds: Scalar) -> Scalar:
        opening = dn > 0.0
        return where(opening, ds / _safe(dn, opening), 0.0)


@register()
class CamanhoDavilaCriticalSeparation(Model):
    """Camanho-Dávila mixed-mode damage-onset separation.

    With ``δ_n0 = N/K`` and ``δ_s0 = S/K``: while opening (``δ_n⁺ > 0``)
    ``δ_c = δ_n0 δ_s0 √(1 + β²) / √(δ_s0² + β² δ_n0² + ε)`` (``ε`` the machine
    epsilon), in compression ``δ_c = δ_s0``. Shapes: ``(*B,)`` Scalars.
    """

    fields = (
        _OPENING,
        output("critical_separation", Scalar, doc="critical (damage-onset) separation δ_c"),
        _BETA,
        parameter("penalty_stiffness", Scalar, bounds="(0, inf)", doc="penalty stiffness K"),
        parameter("normal_strength", Scalar, bounds="(0, inf)", doc="tensile (normal) strength N"),
        parameter("shear_strength", Scalar, bounds="(0, inf)", doc="shear strength S"),
    )

    def forward(self, dn: Scalar) -> Scalar:
        K = self.param("penalty_stiffness")
        dn0 = self.param("normal_strength") / K
        ds0 = self.param("shear_strength") / K
        b2 = self.param("mode_mixity") ** 2
        open_ = dn0 * ds0 * sqrt(1.0 + b2) / sqrt(ds0 * ds0 + b2 * dn0 * dn0 + _eps(dn))
        return where(dn > 0.0, open_, ds0)


@register()
class BenzeggaghKenaneFullSeparation(_FullSeparation):
    """Mixed-mode full separation under the Benzeggagh-Kenane criterion.

    While opening (``δ_n⁺ > 0``):
    ``δ_f = 2 / (K δ_c) [G_Ic + (G_IIc - G_Ic) (β² / (1 + β²) + ε)^η]``
    (``ε`` the machine epsilon); in compression ``δ_f = 2 G_IIc / S``.
    Shapes: ``(*B,)`` Scalars.
    """

    def opening(self, beta: Scalar, eps: float) -> Scalar:
        K, dc = self.param("penalty_stiffness"), self.param("critical_separation")
        g1 = self.param("mode_I_fracture_toughness")
        g2 = self.param("mode_II_fracture_toughness")
        b2 = beta * beta
        mix = (b2 / (1.0 + b2) + eps) ** self.param("eta")
        return 2.0 / (K * dc) * (g1 + (g2 - g1) * mix)


@register()
class PowerLawFullSeparation(_FullSeparation):
    """Mixed-mode full separation under the Alfano-Crisfield power-law criterion.

    While opening (``δ_n⁺ > 0``):
    ``δ_f = 2 (1 + β²) / (K δ_c) [(1/G_Ic)^η + (β²/G_IIc + ε)^η]^(-1/η)``
    (``ε`` the machine epsilon); in compression ``δ_f = 2 G_IIc / S``.
    Shapes: ``(*B,)`` Scalars.
    """

    def opening(self, beta: Scalar, eps: float) -> Scalar:
        K, dc = self.param("penalty_stiffness"), self.param("critical_separation")
        g1 = self.param("mode_I_fracture_toughness")
        g2 = self.param("mode_II_fracture_toughness")
        eta = self.param("eta")
        b2 = beta * beta
        mixed = (1.0 / g1) ** eta + (b2 / g2 + eps) ** eta
        return 2.0 * (1.0 + b2) / (K * dc) * mixed ** (-1.0 / eta)


class _Traction(Model):
    """Shared plumbing: the optional ``normal_penetration`` input, and the damage history."""

    #: does the model carry an irreversible damage (output ``damage``, input ``damage~1``)?
    DAMAGE = False

    def setup(self) -> None:
        pen = self.opts["normal_penetration"].strip()
        if len(pen.split()) > 1:
            raise self.error(
                f"option 'normal_penetration' takes one variable name, got '{pen}'",
                "normal_penetration",
            )
        names = list(self._structural)
        if pen in names:
            raise self.error(
                f"option 'normal_penetration': '{pen}' is already an input of this model",
                "normal_penetration",
            )
        # input order: the normal separations, then the tangential ones, then damage~1
        typed = dict(self._structural)
        self._structural.clear()
        for n in names:
            if n == self.var["tangential_separation_1"] and pen:
                self.declare_input(pen, Scalar)
            self.declare_input(n, typed[n])
        self._has_pen = bool(pen)
        if self.DAMAGE:
            self.declare_input(self.derived_name(HISTORY, "damage"), Scalar)

    def split(self, args: tuple[Scalar, ...]) -> tuple[Scalar | None, tuple[Scalar, ...]]:
        """``(penetration or None, the other inputs in field order)``."""
        if not self._has_pen:
            return None, args
        i = list(self._structural).index(self.opts["normal_penetration"].strip())
        return args[i], args[:i] + args[i + 1 :]


#: The traction output of every law, ``(*B, 3)`` Vec (normal, then the two shear directions).
_TRACTION = output("traction", Vec, doc="traction (T_n, T_s1, T_s2)")
#: The damage output of the laws with damage (``damage~1`` is then an input).
_DAMAGE = output("damage", Scalar, doc="damage d (its previous value damage~1 is an input)")
#: The optional penalty against interpenetration (used with ``normal_penetration``).
_PENETRATION_PENALTY = parameter(
    "penalty_stiffness",
    Scalar,
    0.0,
    bounds="[0, inf)",
    doc="penalty stiffness K_pen against interpenetration (with normal_penetration)",
)


def _irreversible(trial: Scalar, old: Scalar) -> Scalar:
    """``max(trial, old)``: damage never heals."""
    return where(trial > old, trial, old)


@register()
class OrthotropicLinearTraction(_Traction):
    """Linear interface traction: ``T_n = K_n δ_n⁺ (+ K_pen δ_n⁻)``, ``T_si = K_t δ_si``.

    The penetration term is present when ``normal_penetration`` names an input;
    without it a closing interface carries no normal traction. Shapes:
    separations ``(*B,)`` Scalars, traction ``(*B, 3)`` Vec.
    """

    fields = (
        _OPENING,
        _PENETRATION,
        *_TANGENTIAL,
        _TRACTION,
        parameter("normal_stiffness", Scalar, bounds="(0, inf)", doc="normal stiffness K_n"),
        parameter(
            "tangential_stiffness", Scalar, bounds="(0, inf)", doc="tangential stiffness K_t"
        ),
        _PENETRATION_PENALTY,
    )

    def forward(self, *args: Scalar) -> Vec:
        pen, (dn, ds1, ds2) = self.split(args)
        kt = self.param("tangential_stiffness")
        tn = self.param("normal_stiffness") * dn
        if pen is not None:
            tn = tn + self.param("penalty_stiffness") * pen
        return Vec.fill(tn, kt * ds1, kt * ds2)


@register()
class BilinearTraction(_Traction):
    """Bilinear cohesive traction with irreversible damage (Camanho-Dávila style).

    From the effective separation ``δ_m``, the onset ``δ_c`` and failure ``δ_f``
    separations: ``d* = 0`` for ``δ_m < δ_c``,
    ``d* = δ_f (δ_m - δ_c) / (δ_m (δ_f - δ_c))`` for ``δ_c ≤ δ_m < δ_f``, ``d* = 1``
    beyond; ``d = max(d*, d_n)`` with ``d_n`` the previous ``damage~1``.
    ``T_n = K (1 - d) δ_n⁺ (+ K δ_n⁻)``, ``T_si = K (1 - d) δ_si``.
    Shapes: Scalars ``(*B,)``, traction ``(*B, 3)`` Vec.
    """

    DAMAGE = True
    derives = (derived(HISTORY, "damage", doc="the previous-step damage d_n"),)
    fields = (
        input("effective_separation", Scalar, doc="effective separation δ_m"),
        _OPENING,
        _PENETRATION,
        *_TANGENTIAL,
        _TRACTION,
        _DAMAGE,
        parameter("penalty_stiffness", Scalar, bounds="(0, inf)", doc="penalty stiffness K"),
        parameter(
            "critical_separation",
            Scalar,
            bounds="(0, inf)",
            doc="critical (damage-onset) separation δ_c",
        ),
        parameter(
            "full_separation", Scalar, bounds="(0, inf)", doc="full (failure) separation δ_f"
        ),
    )

    def forward(self, *args: Scalar) -> tuple[Vec, Scalar]:
        pen, (dm, dn, ds1, ds2, d_old) = self.split(args)
        K = self.param("penalty_stiffness")
        dc, df = self.param("critical_separation"), self.param("full_separation")
        span = df - dc
        softening = df * (dm - dc) / (_safe(dm, dm > 0.0) * _safe(span, span > 0.0))
        trial = where(dm < dc, 0.0, where(dm < df, softening, 1.0))
        d = _irreversible(trial, d_old)
        k = K * (1.0 - d)
        tn = k * dn
        if pen is not None:
            tn = tn + K * pen
        return Vec.fill(tn, k * ds1, k * ds2), d


@register()
class SalehaniIraniTraction(_Traction):
    """Coupled exponential cohesive law of Salehani & Irani (3-D), with irreversible damage.

    ``b_n = δ_n⁺ / δ_n0``, ``b_si = δ_si / (√2 δ_t0)``, ``x = b_n + b_s1² + b_s2²``;
    ``d = max(1 - exp(-x), d_n)`` with ``d_n`` the previous ``damage~1``;
    ``T_n = e T_n,max b_n (1 - d) (+ K_pen δ_n⁻)``, ``T_si = √(2e) T_t,max b_si (1 - d)``.
    Under monotonic loading ``T_i = a_i b_i exp(-x)``; unloading keeps the
    softened stiffness. Shapes: Scalars ``(*B,)``, traction ``(*B, 3)`` Vec.
    """

    DAMAGE = True
    derives = (derived(HISTORY, "damage", doc="the previous-step damage d_n"),)
    fields = (
        _OPENING,
        _PENETRATION,
        *_TANGENTIAL,
        _TRACTION,
        _DAMAGE,
        parameter("normal_characteristic_length", Scalar, doc="normal characteristic length δ_n0"),
        parameter(
            "tangential_characteristic_length",
            Scalar,
            doc="tangential characteristic length δ_t0 (used as √2 δ_t0)",
        ),
        parameter("normal_strength", Scalar, bounds="(0, inf)", doc="peak normal traction T_n,max"),
        parameter("shear_strength", Scalar, bounds="(0, inf)", doc="peak shear traction T_t,max"),
        _PENETRATION_PENALTY,
    )

    def forward(self, *args: Scalar) -> tuple[Vec, Scalar]:
        pen, (dn, ds1, ds2, d_old) = self.split(args)
        lt = math.sqrt(2.0) * self.param("tangential_characteristic_length")
        bn = dn / self.param("normal_characteristic_length")
        b1, b2 = ds1 / lt, ds2 / lt
        d = _irreversible(1.0 - exp(-(bn + b1 * b1 + b2 * b2)), d_old)
        an = math.e * self.param("normal_strength") * (1.0 - d)
        at = math.sqrt(2.0 * math.e) * self.param("shear_strength") * (1.0 - d)
        tn = an * bn
        if pen is not None:
            tn = tn + self.param("penalty_stiffness") * pen
        return Vec.fill(tn, at * b1, at * b2), d
