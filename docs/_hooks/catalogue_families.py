"""The model catalogue's families: one page each, a type's family read from its module.

A registered type belongs to the family whose module path is the longest prefix of the
module that defines its class (compared by dotted components), so a new type lands on
its page by where it is written, not by a list of names: a model added to
``neml2.models.solid_mechanics.plasticity.isotropic_hardening`` is a hardening law,
one added to ``neml2.models.kwn`` a KWN model. A type of a module no family names (a
plugin's, or a new neml2 module) lands on :data:`OTHER`'s page; the docs test requires
every type of the installed library to find a named family and every family to hold
at least one type.
"""

from __future__ import annotations

from typing import NamedTuple

_SM = "neml2.models.solid_mechanics"
_PL = f"{_SM}.plasticity"
_COMMON = "neml2.models.common"


class Family(NamedTuple):
    """One page of the catalogue.

    Attributes:
        slug: the page's file name (``catalogue/<slug>.md``) and its anchor on the index.
        title: the page's title and its name in the navigation.
        summary: one line for the index: what the family holds.
        modules: the module paths whose types it holds (a module covers its submodules).
    """

    slug: str
    title: str
    summary: str
    modules: tuple[str, ...]

    @property
    def path(self) -> str:
        """The page's path in the site's sources (``catalogue/<slug>.md``)."""
        return f"catalogue/{self.slug}.md"


#: The families in the order of the navigation and of the index.
FAMILIES: tuple[Family, ...] = (
    Family(
        "elasticity",
        "Elasticity",
        "Linear isotropic and general (anisotropic) elasticity and the elasticity tensors "
        "they take.",
        (f"{_SM}.elasticity", f"{_SM}.elasticity_tensors"),
    ),
    Family(
        "yield-functions",
        "Yield functions",
        "The J2 and Gurson-Tvergaard-Needleman (porous) yield functions, the Mandel stress, "
        "void growth and the sintering stress.",
        (f"{_PL}.yield_function", f"{_PL}.mandel_stress", f"{_PL}.porosity"),
    ),
    Family(
        "hardening",
        "Hardening",
        "Isotropic (linear, Voce) and kinematic (linear, Frederick-Armstrong, Chaboche) "
        "hardening, static recovery and thermal annealing.",
        (f"{_PL}.isotropic_hardening", f"{_PL}.kinematic_hardening", f"{_SM}.thermal_annealing"),
    ),
    Family(
        "flow-rules",
        "Flow rules and viscoplasticity",
        "Associative flow and normality, the J2 flow direction and radial return, Perzyna "
        "and Kocks-Mecking rate-dependent flow.",
        (
            f"{_PL}.flow",
            f"{_PL}.normality",
            f"{_PL}.j2",
            f"{_PL}.viscoplasticity",
            f"{_PL}.kocks_mecking",
        ),
    ),
    Family(
        "crystal-plasticity",
        "Crystal plasticity",
        "Crystal geometry, resolved shear, slip rules, slip strength and hardening, and the "
        "kinematics of the rotating lattice.",
        (f"{_SM}.crystal_plasticity",),
    ),
    Family(
        "viscoelasticity",
        "Viscoelasticity",
        "Dashpot, Kelvin-Voigt, Zener, Burgers and Wiechert (generalised Maxwell) elements.",
        (f"{_SM}.viscoelasticity",),
    ),
    Family(
        "damage",
        "Damage and cohesive zones",
        "Traction-separation laws of cohesive interfaces with damage, mode mixity and the "
        "critical and full separations.",
        (f"{_SM}.traction_separation",),
    ),
    Family(
        "kinematics",
        "Kinematics and eigenstrains",
        "Finite-strain measures and volume changes, thermal, swelling and phase-change "
        "eigenstrains.",
        (f"{_SM}.large_deformation", f"{_SM}.eigenstrains"),
    ),
    Family(
        "phase-field-fracture",
        "Phase-field fracture",
        "Crack geometric functions, degradation functions and the strain energy they degrade.",
        ("neml2.models.phase_field_fracture",),
    ),
    Family(
        "chemical-reactions",
        "Chemical reactions",
        "Solid-state reaction mechanisms, the effective volume and the channel geometry of "
        "reacting pores.",
        ("neml2.models.chemical_reactions",),
    ),
    Family(
        "kwn",
        "KWN precipitation",
        "Kampmann-Wagner numerical precipitation: thermodynamics, nucleation, growth and "
        "binning of the size distribution.",
        ("neml2.models.kwn",),
    ),
    Family(
        "porous-flow",
        "Porous flow",
        "Capillary pressure, effective saturation, permeability and the advective stress.",
        ("neml2.models.porous_flow",),
    ),
    Family(
        "finite-volume",
        "Finite volume",
        "One-dimensional finite-volume transport: gradients, upwinded fluxes, boundary "
        "conditions, sources and coordinate maps.",
        ("neml2.models.finite_volume",),
    ),
    Family(
        "parameters",
        "Parameters, tensors and interpolation",
        "Parameters as variables, tabulated (interpolated) and Arrhenius parameters, and "
        "the [Tensors] types that read values from CSV files or Python expressions.",
        (
            f"{_COMMON}.parameters",
            f"{_COMMON}.interpolation",
            f"{_COMMON}.arrhenius",
            "neml2.models.csv_tensors",
            "neml2.models.python_tensors",
        ),
    ),
    Family(
        "time-integration",
        "Time integration and rates",
        "Backward and forward Euler and exponential time integration, and rates of variables.",
        (f"{_COMMON}.time_integration", f"{_COMMON}.variable_rate"),
    ),
    Family(
        "common",
        "Common building blocks",
        "Copies, conversions, linear combinations, products, invariants, reductions over "
        "sub-batches, smooth steps and complementarity functions.",
        (_COMMON,),
    ),
    Family(
        "composition",
        "Composition and implicit update",
        "ComposedModel, ImplicitUpdate and the predictors of its first guess.",
        (
            "neml2.models._composed",
            "neml2.models.implicit_update",
            "neml2.models.predictors",
            "neml2.models.coordinate_descent",
        ),
    ),
    Family(
        "solvers",
        "Solvers and equation systems",
        "Newton's method (with a line search), the linear solvers and the nonlinear system "
        "an ImplicitUpdate solves.",
        ("neml2.solvers",),
    ),
    Family(
        "drivers",
        "Drivers",
        "TransientDriver and the tests built on it: unit tests, regression and verification.",
        ("neml2.drivers",),
    ),
    Family(
        "compiled",
        "Compiled models (AOTIModel)",
        "A model compiled by neml2-compile, loaded from its artifact.",
        ("neml2.aoti",),
    ),
)

#: Types of a module no family names: plugins, or a neml2 module to add to a family.
OTHER = Family(
    "other",
    "Other types",
    "Types of modules no family names (plugins).",
    (),
)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def family_of(module: str) -> Family:
    """The family of a type defined in *module*: the family naming the longest module
    path that contains it, else :data:`OTHER`."""
    best, depth = OTHER, -1
    for family in FAMILIES:
        for prefix in family.modules:
            if _within(module, prefix) and prefix.count(".") > depth:
                best, depth = family, prefix.count(".")
    return best


#: The narrative page (a tutorial or a guide) each family's page links to, if any.
GUIDES: dict[str, tuple[str, str]] = {
    "elasticity": ("tutorials/1-first-input.md", "Tutorial 1: a first input file"),
    "yield-functions": ("tutorials/3-implicit-j2.md", "Tutorial 3: J2 with Voce hardening"),
    "hardening": ("tutorials/3-implicit-j2.md", "Tutorial 3: J2 with Voce hardening"),
    "flow-rules": ("tutorials/3-implicit-j2.md", "Tutorial 3: J2 with Voce hardening"),
    "phase-field-fracture": ("phase-field-fracture.md", "Phase-field fracture"),
    "chemical-reactions": ("chemical-reactions.md", "Chemical reactions"),
    "kwn": ("kwn.md", "KWN precipitation"),
    "porous-flow": ("porous-flow.md", "Porous flow"),
    "finite-volume": ("finite-volume.md", "Finite-volume transport"),
    "parameters": ("hit.md", "HIT input files"),
    "time-integration": ("tutorials/4-transient.md", "Tutorial 4: strain and stress control"),
    "composition": ("models.md#composition", "Models in Python: composition"),
    "solvers": ("models.md#implicit-models", "Models in Python: implicit models"),
    "drivers": ("drivers.md", "Drivers and command-line tools"),
    "compiled": ("aoti.md", "Compiling and the artifact format"),
}
