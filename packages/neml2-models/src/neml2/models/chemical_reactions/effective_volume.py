"""Volume of a reacting control mass, for coupling to a control-volume description."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, output, parameter
from neml2.tensors import Scalar


@register()
class EffectiveVolume(Model):
    """Composite volume ``V = M / (1 - φo) Σᵢ wᵢ / ρᵢ``.

    ``wᵢ`` (``mass_fractions``, variable names) and ``ρᵢ`` (``densities``, one per
    mass fraction) are the mass fractions and densities of the components, ``M``
    (``reference_mass``) the reference mass and ``φo`` (``open_volume_fraction``,
    an optional input; left out, ``1 - φo`` is 1) the open volume fraction that
    accounts for material leaving the control mass, below 1 (an eager call with
    ``φo >= 1`` is an error naming the points, :mod:`neml2.models._domain`). All
    Scalars ``(*B,)``.
    """

    fields = (
        option("mass_fractions", str, many=True, doc="the mass fraction variables wᵢ"),
        option(
            "open_volume_fraction",
            str,
            "",
            doc="name of the open volume fraction φo (optional input)",
        ),
        output("composite_volume", Scalar, doc="volume V of the composite"),
        parameter(
            "reference_mass", Scalar, bounds="(0, inf)", doc="reference mass M of the composite"
        ),
        parameter(
            "densities",
            Scalar,
            bounds="(0, inf)",
            many=True,
            doc="densities ρᵢ, one per mass fraction",
        ),
    )

    def setup(self) -> None:
        names = list(self.opts["mass_fractions"])
        if not names:
            raise self.error("needs at least one mass fraction", "mass_fractions")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise self.error(f"variable(s) listed twice: {', '.join(dup)}", "mass_fractions")
        rho = list(self.opts["densities"])
        if len(rho) != len(names):
            raise self.error(
                f"expected {len(names)} densities (one per mass fraction), got {len(rho)}",
                "densities",
            )
        for n in names:
            self.declare_input(n, Scalar)
        self._open = bool(self.opts["open_volume_fraction"])
        if self._open:
            self.declare_input(self.opts["open_volume_fraction"], Scalar)
        for i, r in enumerate(rho):
            self.declare_parameter(f"rho_{i}", Scalar, r)
        self._n = len(names)

    def forward(self, *xs: Scalar) -> Scalar:
        total = None
        for i, w in enumerate(xs[: self._n]):
            term = w / self.param(f"rho_{i}")
            total = term if total is None else total + term
        out = self.param("reference_mass") * total
        if self._open:
            require(
                self,
                f"input '{self.opts['open_volume_fraction']}' (the open volume fraction φo)",
                xs[self._n],
                "(-inf, 1)",
                "V divides by 1 - φo",
            )
            out = out / (1.0 - xs[self._n])
        return out
