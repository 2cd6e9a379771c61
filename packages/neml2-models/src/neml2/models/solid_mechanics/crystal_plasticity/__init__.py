"""Crystal plasticity: slip geometry, slip rules, strength and hardening per slip system.

Per-slip quantities (resolved shears, slip rates, slip strengths, dislocation
densities) are ``Scalar`` values whose last sub-batch axis runs over the slip systems
of the crystal geometry (a ``[Data]`` block such as ``CubicCrystal``).
"""

from neml2.models.solid_mechanics.crystal_plasticity import (
    crystal_geometry,
    dislocation,
    hardening,
    kinematics,
    linear_hardening,
    orientation,
    resolved_shear,
    slip_interaction,
    slip_rule,
    spatial_velocity,
    strength,
)
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import (
    CrystalGeometry,
    CrystalModel,
    CubicCrystal,
)
from neml2.models.solid_mechanics.crystal_plasticity.dislocation import (
    PerSlipForestDislocationEvolution,
)
from neml2.models.solid_mechanics.crystal_plasticity.hardening import (
    SumSlipRates,
    VoceSingleSlipHardeningRule,
)
from neml2.models.solid_mechanics.crystal_plasticity.kinematics import (
    ElasticStrainRate,
    OrientationRate,
    PlasticDeformationRate,
    PlasticVorticity,
)
from neml2.models.solid_mechanics.crystal_plasticity.resolved_shear import ResolvedShear
from neml2.models.solid_mechanics.crystal_plasticity.slip_rule import PowerLawSlipRule
from neml2.models.solid_mechanics.crystal_plasticity.strength import (
    DislocationObstacleStrengthMap,
    SingleSlipStrengthMap,
)

__all__ = [
    "CrystalGeometry",
    "CrystalModel",
    "CubicCrystal",
    "DislocationObstacleStrengthMap",
    "ElasticStrainRate",
    "OrientationRate",
    "PerSlipForestDislocationEvolution",
    "PlasticDeformationRate",
    "PlasticVorticity",
    "PowerLawSlipRule",
    "ResolvedShear",
    "SingleSlipStrengthMap",
    "SumSlipRates",
    "VoceSingleSlipHardeningRule",
    "crystal_geometry",
    "dislocation",
    "hardening",
    "kinematics",
    "linear_hardening",
    "orientation",
    "resolved_shear",
    "slip_interaction",
    "slip_rule",
    "spatial_velocity",
    "strength",
]
