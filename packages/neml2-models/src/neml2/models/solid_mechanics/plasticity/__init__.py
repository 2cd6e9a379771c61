"""Rate-independent and viscous plasticity: yield, flow, hardening, Mandel stress."""

from neml2.models.solid_mechanics.plasticity import (
    flow,
    isotropic_hardening,
    j2,
    kinematic_hardening,
    kocks_mecking,
    mandel_stress,
    normality,
    porosity,
    viscoplasticity,
    yield_function,
)
from neml2.models.solid_mechanics.plasticity.flow import (
    AssociativeIsotropicPlasticHardening,
    AssociativeKinematicPlasticHardening,
    AssociativePlasticFlow,
)
from neml2.models.solid_mechanics.plasticity.isotropic_hardening import (
    LinearIsotropicHardening,
    PowerLawIsotropicHardeningStaticRecovery,
    SlopeSaturationVoceIsotropicHardening,
    VoceIsotropicHardening,
)
from neml2.models.solid_mechanics.plasticity.kinematic_hardening import (
    ChabochePlasticHardening,
    FredrickArmstrongPlasticHardening,
    LinearKinematicHardening,
    PowerLawKinematicHardeningStaticRecovery,
)
from neml2.models.solid_mechanics.plasticity.mandel_stress import IsotropicMandelStress
from neml2.models.solid_mechanics.plasticity.normality import Normality
from neml2.models.solid_mechanics.plasticity.viscoplasticity import PerzynaPlasticFlowRate
from neml2.models.solid_mechanics.plasticity.yield_function import YieldFunction

__all__ = [
    "AssociativeIsotropicPlasticHardening",
    "AssociativeKinematicPlasticHardening",
    "AssociativePlasticFlow",
    "ChabochePlasticHardening",
    "FredrickArmstrongPlasticHardening",
    "IsotropicMandelStress",
    "LinearIsotropicHardening",
    "LinearKinematicHardening",
    "Normality",
    "PerzynaPlasticFlowRate",
    "PowerLawIsotropicHardeningStaticRecovery",
    "PowerLawKinematicHardeningStaticRecovery",
    "SlopeSaturationVoceIsotropicHardening",
    "VoceIsotropicHardening",
    "YieldFunction",
    "flow",
    "isotropic_hardening",
    "j2",
    "kinematic_hardening",
    "kocks_mecking",
    "mandel_stress",
    "normality",
    "porosity",
    "viscoplasticity",
    "yield_function",
]
