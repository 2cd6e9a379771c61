"""KWN precipitation: matrix composition and the chemical driving force for precipitation."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, option, output, parameter
from neml2.tensors import Scalar, log


def _per_species(model: Model, key: str, values: list, n: int, *, broadcast: bool = False) -> list:
    """Check that option *key* lists one value per species (or one, if *broadcast*)."""
    if broadcast and len(values) == 1:
        return values * n
    if len(values) != n:
        allowed = f"1 or {n}" if broadcast else f"{n}"
        raise model.error(f"expected {allowed} entries (one per species), got {len(values)}", key)
    return values


def _variables(model: Model, key: str) -> list[str]:
    names = list(model.opts[key])
    if not names:
        raise model.error("needs at least one species", key)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise model.error(f"variable(s) listed twice: {', '.join(dup)}", key)
    for n in names:
        model.declare_input(n, Scalar)
    return names


@register()
class ChemicalGibbsFreeEnergyDifference(Model):
    """Chemical Gibbs free energy difference ``Δg = Σ_k Δx_k (μ_k - μ_k^eq)``.

    ``Δx_k`` are the concentration-difference variables (inputs, ``(*B,)``
    Scalars), ``μ_k`` the chemical potentials in the matrix and ``μ_k^eq`` the
    equilibrium potentials (one Scalar parameter each per species; parameter
    names ``mu_k`` and ``mu_eq_k``).
    """

    fields = (
        option("concentration_differences", str, many=True, doc="Δx_k, one variable per species"),
        parameter("chemical_potentials", Scalar, many=True, doc="μ_k, one per species"),
        parameter("equilibrium_potentials", Scalar, many=True, doc="μ_k^eq, one per species"),
        output("chemical_gibbs_free_energy", Scalar, doc="Δg"),
    )

    def setup(self) -> None:
        n = len(_variables(self, "concentration_differences"))
        mus = _per_species(self, "chemical_potentials", list(self.opts["chemical_potentials"]), n)
        eqs = _per_species(
            self, "equilibrium_potentials", list(self.opts["equilibrium_potentials"]), n
        )
        for i, (mu, mu_eq) in enumerate(zip(mus, eqs, strict=True)):
            self.declare_parameter(f"mu_{i}", Scalar, mu)
            self.declare_parameter(f"mu_eq_{i}", Scalar, mu_eq)

    def forward(self, *dxs: Scalar) -> Scalar:
        out = None
        for i, dx in enumerate(dxs):
            term = dx * (self.param(f"mu_{i}") - self.param(f"mu_eq_{i}"))
            out = term if out is None else out + term
        return out


@register()
class CurrentConcentration(Model):
    """Matrix concentration left after precipitation (solute balance).

    ``x = (x_0 - Σ_k f_k x_k^p) / (1 - Σ_k f_k)`` with ``x_0`` the initial
    concentration, ``f_k`` the precipitate volume fractions (inputs, ``(*B,)``
    Scalars) and ``x_k^p`` the solute concentration of each precipitate
    (parameters ``xp_k``).
    """

    fields = (
        parameter("initial_concentration", Scalar, doc="x_0, the initial solute concentration"),
        option("precipitate_volume_fractions", str, many=True, doc="f_k, one variable each"),
        parameter("precipitate_concentrations", Scalar, many=True, doc="x_k^p, one each"),
        output("current_concentration", Scalar, doc="x, the current matrix concentration"),
    )

    def setup(self) -> None:
        n = len(_variables(self, "precipitate_volume_fractions"))
        xps = _per_species(
            self, "precipitate_concentrations", list(self.opts["precipitate_concentrations"]), n
        )
        for i, xp in enumerate(xps):
            self.declare_parameter(f"xp_{i}", Scalar, xp)

    def forward(self, *fs: Scalar) -> Scalar:
        sum_f = None
        sum_fx = None
        for i, f in enumerate(fs):
            fx = f * self.param(f"xp_{i}")
            sum_f = f if sum_f is None else sum_f + f
            sum_fx = fx if sum_fx is None else sum_fx + fx
        require(
            self,
            "the sum of the precipitate volume fractions Σf",
            sum_f,
            "(-inf, 1)",
            "x divides by 1 - Σf",
        )
        return (self.param("initial_concentration") - sum_fx) / (1.0 - sum_f)


@register()
class IdealSolutionVolumetricDrivingForce(Model):
    """Molar driving force of an ideal solution ``Δg = R T Σ_k w_k ln(x_k / x_k^eq)``.

    ``T`` the temperature, ``x_k`` the current matrix concentrations (inputs),
    ``x_k^eq`` the equilibrium concentrations (parameters ``x_eq_k``), ``w_k``
    stoichiometric weights (default 1 for every species: the product of all
    components of a compound precipitate) and ``R`` the gas constant. All
    ``(*B,)`` Scalars; the result is in J/mol.
    """

    fields = (
        input("temperature", Scalar, doc="T"),
        option("current_concentrations", str, many=True, doc="x_k, one variable per species"),
        parameter(
            "equilibrium_concentrations",
            Scalar,
            bounds="(0, inf)",
            many=True,
            doc="x_k^eq, one per species",
        ),
        parameter("weights", Scalar, (1.0,), many=True, doc="w_k: one per species, or one for all"),
        parameter("gas_constant", Scalar, bounds="(0, inf)", doc="R"),
        output("driving_force", Scalar, doc="Δg"),
    )

    def setup(self) -> None:
        self._names = _variables(self, "current_concentrations")
        n = len(self._names)
        eqs = _per_species(
            self, "equilibrium_concentrations", list(self.opts["equilibrium_concentrations"]), n
        )
        ws = _per_species(self, "weights", list(self.opts["weights"]), n, broadcast=True)
        for i, (x_eq, w) in enumerate(zip(eqs, ws, strict=True)):
            self.declare_parameter(f"x_eq_{i}", Scalar, x_eq)
            self.declare_parameter(f"w_{i}", Scalar, w, buffer=True)

    def forward(self, T: Scalar, *xs: Scalar) -> Scalar:
        require(self, f"input '{self.var['temperature']}' (the temperature T)", T, "(0, inf)")
        total = None
        for i, x in enumerate(xs):
            require(
                self,
                f"input '{self._names[i]}' (a concentration x)",
                x,
                "(0, inf)",
                "ln(x / x_eq) needs x > 0",
            )
            term = self.param(f"w_{i}") * log(x / self.param(f"x_eq_{i}"))
            total = term if total is None else total + term
        return self.param("gas_constant") * T * total


@register()
class ProjectedDiffusivitySum(Model):
    """Projected diffusivity sum of SFFK growth and nucleation ``S = Σ_k Δx_k² / (D_k x_k^∞)``.

    ``Δx_k`` the concentration differences across the interface and ``D_k``
    the diffusivities (parameters ``dx_k`` and ``D_k``), ``x_k^∞`` the
    far-field matrix concentrations (inputs). All ``(*B,)`` Scalars.
    """

    fields = (
        parameter("concentration_differences", Scalar, many=True, doc="Δx_k, one per species"),
        parameter(
            "diffusivities", Scalar, bounds="(0, inf)", many=True, doc="D_k, one per species"
        ),
        option("far_field_concentrations", str, many=True, doc="x_k^∞, one variable per species"),
        output("projected_diffusivity_sum", Scalar, doc="S"),
    )

    def setup(self) -> None:
        dxs = list(self.opts["concentration_differences"])
        if not dxs:
            raise self.error("needs at least one species", "concentration_differences")
        n = len(dxs)
        Ds = _per_species(self, "diffusivities", list(self.opts["diffusivities"]), n)
        self._names = _variables(self, "far_field_concentrations")
        _per_species(self, "far_field_concentrations", self._names, n)
        for i, (dx, D) in enumerate(zip(dxs, Ds, strict=True)):
            self.declare_parameter(f"dx_{i}", Scalar, dx)
            self.declare_parameter(f"D_{i}", Scalar, D)

    def forward(self, *xs: Scalar) -> Scalar:
        total = None
        for i, x in enumerate(xs):
            require(
                self,
                f"input '{self._names[i]}' (a far-field concentration x)",
                x,
                "(0, inf)",
                "S divides by x",
            )
            dx = self.param(f"dx_{i}")
            term = dx * dx / (self.param(f"D_{i}") * x)
            total = term if total is None else total + term
        return total
