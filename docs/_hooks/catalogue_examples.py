"""One example input per catalogue family, shown on its page and run by the docs test.

Each entry of :data:`EXAMPLES` is ``(text, hit)``: a sentence saying what the input
does, and a complete HIT input whose ``[Models]`` the docs test
(``tests-integration/test_docs.py``) loads and builds, as it does for every ``hit``
block of the site's pages. :data:`PARSE_ONLY` names the families whose input needs
something the test cannot provide (a compiled artifact): those are parsed, not loaded.
"""

from __future__ import annotations

#: Families whose example is parsed only, and why (the docs-test directive's reason).
PARSE_ONLY = {"compiled": "needs an artifact compiled by neml2-compile"}

EXAMPLES: dict[str, tuple[str, str]] = {
    "elasticity": (
        "Isotropic elasticity from Young's modulus and Poisson's ratio, and a rotated "
        "cubic crystal whose stiffness tensor a second model builds.",
        """\
[Models]
  [isotropic]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [cubic_tensor]
    type = CubicElasticityTensor
    coefficients = '250e3 0.25 120e3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO SHEAR_MODULUS'
  []
  [cubic]
    type = GeneralElasticity
    elastic_stiffness_tensor = 'cubic_tensor'
  []
  [isotropic_tensor]
    type = IsotropicElasticityTensor
    coefficients = '160e3 80e3'
    coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
  []
[]
""",
    ),
    "yield-functions": (
        "The J2 yield function of a hardening material, from the Cauchy stress, and the "
        "GTN yield function of a porous one with its void growth.",
        """\
[Models]
  [mandel_stress]
    type = IsotropicMandelStress
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield]
    type = YieldFunction
    yield_stress = 200
    isotropic_hardening = 'isotropic_hardening'
  []
  [j2_yield]
    type = ComposedModel
    models = 'mandel_stress vonmises yield'
  []
  [gtn]
    type = GTNYieldFunction
    yield_stress = 200
    q1 = 1.5
    q2 = 1.0
    q3 = 2.25
  []
  [void_growth]
    type = GursonCavitation
  []
  [sintering]
    type = OlevskySinteringStress
    surface_tension = 1.0
    particle_radius = 1e-3
  []
[]
""",
    ),
    "hardening": (
        "Voce isotropic hardening and Chaboche kinematic hardening with static recovery, "
        "with the annealing of a hardening rate above a temperature.",
        """\
[Models]
  [voce]
    type = VoceIsotropicHardening
    saturated_hardening = 150
    saturation_rate = 30
  []
  [linear]
    type = LinearIsotropicHardening
    hardening_modulus = 1000
  []
  [slope_saturation]
    type = SlopeSaturationVoceIsotropicHardening
    saturated_hardening = 150
    initial_hardening_rate = 4500
  []
  [chaboche]
    type = ChabochePlasticHardening
    C = 10000
    g = 100
    A = 1e-8
    a = 2
  []
  [frederick_armstrong]
    type = FredrickArmstrongPlasticHardening
    C = 10000
    g = 100
    back_stress = 'X2'
  []
  [back_stress]
    type = LinearKinematicHardening
    hardening_modulus = 1000
  []
  [isotropic_recovery]
    type = PowerLawIsotropicHardeningStaticRecovery
    tau = 100
    n = 3
  []
  [kinematic_recovery]
    type = PowerLawKinematicHardeningStaticRecovery
    tau = 100
    n = 3
  []
  [annealing]
    type = ScalarTwoStageThermalAnnealing
    base = 'isotropic_hardening'
    base_rate = 'isotropic_hardening_rate'
    T1 = 800
    T2 = 1000
    tau = 10
  []
  [sr2_annealing]
    type = SR2TwoStageThermalAnnealing
    base = 'back_stress'
    base_rate = 'back_stress_rate'
    T1 = 800
    T2 = 1000
    tau = 10
  []
[]
""",
    ),
    "flow-rules": (
        "Perzyna viscoplastic flow along the normal of the J2 yield surface: the flow "
        "direction by Normality and by its closed form, the plastic strain rate and the "
        "equivalent plastic strain rate; then a Kocks-Mecking switch between "
        "rate-independent and rate-dependent flow.",
        """\
[Models]
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield]
    type = YieldFunction
    yield_stress = 200
    isotropic_hardening = 'isotropic_hardening'
  []
  [yield_of_stress]
    type = ComposedModel
    models = 'vonmises yield'
  []
  [normality]
    type = Normality
    model = 'yield_of_stress'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  [j2_direction]
    type = AssociativeJ2FlowDirection
  []
  [perzyna]
    type = PerzynaPlasticFlowRate
    reference_stress = 100
    exponent = 5
  []
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  [isotropic_flow]
    type = AssociativeIsotropicPlasticHardening
  []
  [kinematic_flow]
    type = AssociativeKinematicPlasticHardening
  []
  [viscoplastic_rates]
    type = ComposedModel
    models = 'normality perzyna plastic_flow isotropic_flow'
  []
  [radial_return]
    type = LinearIsotropicElasticJ2TrialStressUpdate
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [activation]
    type = KocksMeckingActivationEnergy
    shear_modulus = 80e3
    eps0 = 1e10
    k = 1.38e-20
    b = 2.5e-7
  []
  [switch]
    type = KocksMeckingFlowSwitch
    g0 = 0.5
    sharpness = 50
  []
  [viscosity]
    type = KocksMeckingFlowViscosity
    A = -8
    B = -0.7
    shear_modulus = 80e3
    eps0 = 1e10
    k = 1.38e-20
    b = 2.5e-7
  []
  [rate_sensitivity]
    type = KocksMeckingRateSensitivity
    A = -8
    shear_modulus = 80e3
    k = 1.38e-20
    b = 2.5e-7
  []
  [yield_stress]
    type = KocksMeckingYieldStress
    C = -5
    shear_modulus = 80e3
  []
  [intercept]
    type = KocksMeckingIntercept
    A = -8
    B = -0.7
    C = -5
  []
[]
""",
    ),
    "crystal-plasticity": (
        "The rates of a face-centred cubic crystal (12 slip systems from one "
        "`<110>{111}` family) with a power-law slip rule and Voce slip hardening, in the "
        "rotating lattice: the residual a NonlinearSystem would solve for the elastic "
        "strain, the slip hardening and the orientation.",
        """\
[Tensors]
  [sdirs]
    type = Python
    expr = 'MillerIndex(torch.tensor([1.0, 1.0, 0.0]))'
  []
  [splanes]
    type = Python
    expr = 'MillerIndex(torch.tensor([1.0, 1.0, 1.0]))'
  []
[]
[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = 'sdirs'
    slip_planes = 'splanes'
  []
[]
[Models]
  [euler_rodrigues]
    type = RotationMatrix
    from = 'orientation'
    to = 'orientation_matrix'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [resolved_shear]
    type = ResolvedShear
  []
  [elastic_stretch]
    type = ElasticStrainRate
  []
  [plastic_spin]
    type = PlasticVorticity
  []
  [plastic_deformation_rate]
    type = PlasticDeformationRate
  []
  [orientation_rate]
    type = OrientationRate
  []
  [sum_slip_rates]
    type = SumSlipRates
  []
  [slip_rule]
    type = PowerLawSlipRule
    n = 8.0
    gamma0 = 0.2
  []
  [slip_strength]
    type = SingleSlipStrengthMap
    constant_strength = 50.0
  []
  [voce_hardening]
    type = VoceSingleSlipHardeningRule
    initial_slope = 500.0
    saturated_hardening = 50.0
  []
  [integrate_slip_hardening]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'slip_hardening'
  []
  [integrate_elastic_strain]
    type = SR2BackwardEulerTimeIntegration
    variable = 'elastic_strain'
  []
  [integrate_orientation]
    type = WR2ImplicitExponentialTimeIntegration
    variable = 'orientation'
  []
  [residual]
    type = ComposedModel
    models = 'euler_rodrigues elasticity orientation_rate resolved_shear elastic_stretch
              plastic_deformation_rate plastic_spin sum_slip_rates slip_rule slip_strength
              voce_hardening integrate_slip_hardening integrate_elastic_strain
              integrate_orientation'
  []
  [linear_hardening]
    type = LinearSingleSlipHardeningRule
    hardening_slope = 100
  []
  [forest]
    type = PerSlipForestDislocationEvolution
    k1 = 1e3
    k2 = 10
  []
  [taylor]
    type = DislocationObstacleStrengthMap
    constant_strength = 50
    alpha = 0.3
    mu = 80e3
    b = 2.5e-7
  []
  [velocity_gradient]
    type = PlasticSpatialVelocityGradient
  []
  [fix_orientation]
    type = FixOrientation
  []
[]
""",
    ),
    "viscoelasticity": (
        "A standard linear solid (Zener) with the dashpot that evolves its viscous strain, "
        "and the Kelvin-Voigt, Burgers and two-branch Wiechert elements.",
        """\
[Models]
  [zener]
    type = ZenerElement
    equilibrium_modulus = 1000
    maxwell_modulus = 2000
    maxwell_viscosity = 500
  []
  [kelvin_voigt]
    type = KelvinVoigtElement
    modulus = 1000
    viscosity = 100
  []
  [dashpot]
    type = LinearDashpot
    viscosity = 500
  []
  [burgers]
    type = BurgersElement
    maxwell_modulus = 2000
    maxwell_viscosity = 500
    kelvin_modulus = 1000
    kelvin_viscosity = 100
  []
  [wiechert]
    type = WiechertElement
    equilibrium_modulus = 1000
    modulus_1 = 2000
    viscosity_1 = 500
    modulus_2 = 500
    viscosity_2 = 5000
  []
[]
""",
    ),
    "damage": (
        "A bilinear cohesive law whose full separation follows the Benzeggagh-Kenane "
        "criterion of the mode mixity, with the other traction laws beside it.",
        """\
[Models]
  [mixity]
    type = ModeMixity
  []
  [critical]
    type = CamanhoDavilaCriticalSeparation
    mode_mixity = 'mode_mixity'
    penalty_stiffness = 1e4
    normal_strength = 10
    shear_strength = 20
  []
  [full_bk]
    type = BenzeggaghKenaneFullSeparation
    mode_mixity = 'mode_mixity'
    critical_separation = 1e-3
    penalty_stiffness = 1e4
    mode_I_fracture_toughness = 0.1
    mode_II_fracture_toughness = 0.3
    shear_strength = 20
    eta = 2
  []
  [full_power]
    type = PowerLawFullSeparation
    mode_mixity = 'mode_mixity'
    critical_separation = 1e-3
    penalty_stiffness = 1e4
    mode_I_fracture_toughness = 0.1
    mode_II_fracture_toughness = 0.3
    shear_strength = 20
    eta = 2
  []
  [bilinear]
    type = BilinearTraction
    penalty_stiffness = 1e4
    critical_separation = 1e-3
    full_separation = 2e-2
  []
  [linear]
    type = OrthotropicLinearTraction
    normal_stiffness = 1e4
    tangential_stiffness = 5e3
  []
  [exponential]
    type = SalehaniIraniTraction
    normal_characteristic_length = 1e-3
    tangential_characteristic_length = 1e-3
    normal_strength = 10
    shear_strength = 20
  []
[]
""",
    ),
    "kinematics": (
        "The Green-Lagrange strain of an isochoric part of the deformation gradient, and "
        "thermal, volume-change and phase-transformation eigenstrains.",
        """\
[Models]
  [thermal_jacobian]
    type = ThermalDeformationJacobian
    reference_temperature = 300
    CTE = 1e-5
  []
  [isochoric]
    type = VolumeAdjustDeformationGradient
    input = 'deformation_gradient'
    output = 'isochoric_deformation_gradient'
  []
  [green_lagrange]
    type = GreenLagrangeStrain
    deformation_gradient = 'isochoric_deformation_gradient'
  []
  [thermal]
    type = ThermalEigenstrain
    reference_temperature = 300
    CTE = 1e-5
  []
  [volume_change]
    type = VolumeChangeEigenstrain
    reference_volume = 1.0
  []
  [phase_change]
    type = PhaseTransformationEigenstrain
  []
  [swelling]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 0.2
    swelling_coefficient = 0.1
    reference_volume_difference = 0.05
  []
[]
""",
    ),
    "phase-field-fracture": (
        "The pieces of an AT2 phase-field model: the quadratic degradation of the "
        "tensile part of the strain energy and the crack geometric function.",
        """\
[Models]
  [energy]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    decomposition = 'VOLDEV'
  []
  [degradation]
    type = PowerDegradationFunction
    power = 2
    eta = 1e-6
  []
  [rational]
    type = RationalDegradationFunction
    power = 2
    b1 = 2
    b2 = -0.5
    b3 = 0
  []
  [at2]
    type = CrackGeometricFunctionAT2
  []
  [at1]
    type = CrackGeometricFunctionAT1
  []
[]
""",
    ),
    "chemical-reactions": (
        "Rates of a solid-state reaction by three mechanisms, with the pore geometry and "
        "the effective volume of a two-phase mixture.",
        """\
[Models]
  [nucleation]
    type = AvramiErofeevNucleation
    coef = 1.0
    order = 2
  []
  [contracting]
    type = ContractingGeometry
    coef = 1.0
    order = 2
  []
  [channel]
    type = CylindricalChannelGeometry
  []
  [diffusion]
    type = DiffusionLimitedReaction
    diffusion_coefficient = 1e-3
    molar_volume = 10.0
  []
  [volume]
    type = EffectiveVolume
    mass_fractions = 'wf ws'
    reference_mass = 1.0
    densities = '1.0 2.5'
  []
[]
""",
    ),
    "kwn": (
        "The nucleation chain of a KWN model for one solute: driving force, barrier and "
        "critical radius, Zeldovich and kinetic factors, and the nucleation flux.",
        """\
[Models]
  [driving_force]
    type = IdealSolutionVolumetricDrivingForce
    current_concentrations = 'x'
    equilibrium_concentrations = 0.01
    gas_constant = 8.314
  []
  [chemical]
    type = ChemicalGibbsFreeEnergyDifference
    concentration_differences = 'dx'
    chemical_potentials = -1e4
    equilibrium_potentials = -2e4
  []
  [barrier]
    type = NucleationBarrierAndCriticalRadius
    surface_energy = 0.2
    total_gibbs_free_energy_difference = -1e8
    molar_volume = 1e-5
  []
  [diffusivity_sum]
    type = ProjectedDiffusivitySum
    concentration_differences = 0.1
    diffusivities = 1e-18
    far_field_concentrations = 'x'
  []
  [zeldovich]
    type = ZeldovichFactor
    surface_energy = 0.2
    temperature = 700
    molar_volume = 1e-5
    avogadro_number = 6.022e23
    boltzmann_constant = 1.38e-23
  []
  [kinetic]
    type = KineticFactor
    molar_volume = 1e-5
    avogadro_number = 6.022e23
  []
  [flux]
    type = NucleationFluxMagnitude
    nucleation_site_density = 1e28
    boltzmann_constant = 1.38e-23
  []
  [concentration]
    type = CurrentConcentration
    initial_concentration = 0.02
    precipitate_volume_fractions = 'f'
    precipitate_concentrations = 0.25
  []
  [growth]
    type = RateLimitedPrecipitateGrowthRate
    radius = 1e-9
    equilibrium_concentration = 0.01
    concentration_difference = 0.2
    diffusivity = 1e-18
  []
  [sffk_growth]
    type = SFFKPrecipitationGrowthRate
    radius = 1e-9
    gibbs_free_energy_difference = -1e8
    gas_constant = 8.314
  []
  [volume_fraction]
    type = PrecipitateVolumeFraction
    radius = 1e-9
  []
  [source]
    type = DumpInSmallestBin
    cell_centers = 1e-9
  []
[]
""",
    ),
    "porous-flow": (
        "Effective saturation and Van Genuchten capillary pressure, with three "
        "porosity-permeability laws and the advective stress of a deforming solid.",
        """\
[Models]
  [saturation]
    type = EffectiveSaturation
    residual_saturation = 0.1
    max_fraction = 0.5
  []
  [capillary]
    type = VanGenuchtenCapillaryPressure
    a = 2.0
    m = 0.5
    log_extension = true
    transition_saturation = 0.05
  []
  [brooks_corey]
    type = BrooksCoreyCapillaryPressure
    threshold_pressure = 1.0
    exponent = 2.0
  []
  [power_law]
    type = PowerLawPermeability
    reference_permeability = 1e-12
    reference_porosity = 0.3
    exponent = 3
  []
  [exponential]
    type = ExponentialLawPermeability
    reference_permeability = 1e-12
    reference_porosity = 0.3
    scale = 10
  []
  [kozeny_carman]
    type = KozenyCarmanPermeability
    reference_permeability = 1e-12
    reference_porosity = 0.3
    n = 3
    m = 2
  []
  [advective]
    type = AdvectiveStress
    coefficient = 1.0
  []
[]
""",
    ),
    "finite-volume": (
        "Diffusion on four cells: the cell values with a fixed value appended on the "
        "left, their gradient at the edges, an upwinded advective flux and a smeared "
        "point source.",
        """\
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.5, 1.5, 2.5, 3.5]), sub_batch_ndim=1)'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0]), sub_batch_ndim=1)'
  []
  [spacing]
    type = Python
    expr = 'Scalar(torch.tensor([1.0, 1.0, 1.0]), sub_batch_ndim=1)'
  []
[]
[Models]
  [with_bc]
    type = FiniteVolumeAppendBoundaryCondition
    input = 'u'
    bc_value = 1.0
    side = 'left'
  []
  [gradient]
    type = FiniteVolumeGradient
    dx = 'spacing'
    prefactor = 0.1
  []
  [advective_flux]
    type = FiniteVolumeUpwindedAdvectiveFlux
  []
  [to_edges]
    type = LinearlyInterpolateToCellEdges
    cell_values = 'centers'
    cell_centers = 'centers'
    cell_edges = 'edges'
  []
  [source]
    type = SmearedDeltaSource
    magnitude = 'm'
    location = 'x0'
    width = 0.2
    cell_centers = 'centers'
  []
  [coordinates]
    type = SemiInfiniteCoordinateTransform
    coordinate = 'x'
    shift = 1.0
  []
[]
""",
    ),
    "parameters": (
        "A yield stress tabulated against the temperature, an Arrhenius viscosity, a "
        "constant and an input parameter, and the [Tensors] they may read.",
        """\
[Tensors]
  [temperatures]
    type = Python
    expr = 'Scalar(torch.tensor([300.0, 600.0, 900.0]))'
  []
  [yield_stresses]
    type = Python
    expr = 'Scalar(torch.tensor([250.0, 200.0, 120.0]))'
  []
[]
[Models]
  [yield_stress]
    type = ScalarLinearInterpolation
    argument = 'temperature'
    abscissa = 'temperatures'
    ordinate = 'yield_stresses'
    output = 'yield_stress'
  []
  [viscosity]
    type = ArrheniusParameter
    reference_value = 1e3
    activation_energy = 5e4
    ideal_gas_constant = 8.314
    parameter = 'viscosity'
  []
  [modulus]
    type = ScalarConstantParameter
    value = 200e3
    parameter = 'modulus'
  []
  [stiffness]
    type = SR2ParameterToVariable
    from = 'eigenstrain0'
    to = 'eigenstrain'
  []
  [eigenstrain0]
    type = SR2ConstantParameter
    value = 'strain0'
  []
  [promoted]
    type = ScalarInputParameter
    from = 'hardening_input'
    to = 'hardening_parameter'
  []
[]
[Tensors]
  [strain0]
    type = Python
    expr = 'SR2.fill(1e-3, 0.0, 0.0)'
  []
[]
""",
    ),
    "time-integration": (
        "The backward Euler residual of an internal variable and the explicit update of "
        "another, with the rate of a prescribed strain.",
        """\
[Models]
  [implicit]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [explicit]
    type = SR2ForwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [strain_rate]
    type = SR2VariableRate
    variable = 'strain'
  []
  [orientation]
    type = WR2ImplicitExponentialTimeIntegration
    variable = 'orientation'
  []
  [orientation_update]
    type = WR2ExplicitExponentialTimeIntegration
    variable = 'orientation'
    time = 'time'
  []
[]
""",
    ),
    "common": (
        "Elastic strain as a linear combination, its von Mises invariant and trace, a "
        "Macaulay split, a smooth step and a complementarity condition.",
        """\
[Models]
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    weights = '1 -1'
    to = 'elastic_strain'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'EFFECTIVE_STRAIN'
    tensor = 'elastic_strain'
    invariant = 'effective_strain'
  []
  [trace]
    type = SR2Invariant
    invariant_type = 'I1'
    tensor = 'elastic_strain'
    invariant = 'volumetric_strain'
  []
  [split]
    type = MacaulaySplit
    from = 'volumetric_strain'
    to_positive = 'tension'
    to_negative = 'compression'
  []
  [step]
    type = HermiteSmoothStep
    argument = 'temperature'
    value = 'phase_fraction'
    lower_bound = 500
    upper_bound = 600
  []
  [consistency]
    type = FBComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [copy]
    type = CopySR2
    from = 'stress'
    to = 'stress_copy'
  []
  [determinant]
    type = R2Determinant
    input = 'deformation_gradient'
  []
  [product]
    type = ScalarMultiplication
    from = 'a b'
    to = 'ab'
  []
[]
""",
    ),
    "composition": (
        "An ImplicitUpdate of a rate-independent J2 model, its first guess from the "
        "previous step, and the ComposedModel that adds the stress of the converged "
        "state.",
        """\
[Models]
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    weights = '1 -1'
    to = 'elastic_strain'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield]
    type = YieldFunction
    yield_stress = 200
  []
  [direction]
    type = AssociativeJ2FlowDirection
  []
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [integrate_plastic_strain]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [residual]
    type = ComposedModel
    models = 'elastic_strain elasticity mandel_stress vonmises yield direction plastic_flow
              consistency integrate_plastic_strain'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'flow_rate'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'system'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain'
  []
[]
[EquationSystems]
  [system]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain flow_rate'
    residuals = 'plastic_strain_residual complementarity'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]
""",
    ),
    "solvers": (
        "Newton's method with a backtracking line search and a dense LU linear solver, "
        "solving one scalar equation, the backward Euler step of a linear decay "
        "`ẋ = -x`.",
        """\
[Models]
  [decay]
    type = ScalarLinearCombination
    from = 'x'
    weights = '-1'
    to = 'x_rate'
  []
  [integrate]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'x'
  []
  [residual]
    type = ComposedModel
    models = 'decay integrate'
  []
  [update]
    type = ImplicitUpdate
    equation_system = 'system'
    solver = 'newton'
  []
[]
[EquationSystems]
  [system]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'x'
  []
[]
[Solvers]
  [newton]
    type = NewtonWithLineSearch
    abs_tol = 1e-12
    rel_tol = 1e-10
    max_its = 10
    linesearch_type = 'BACKTRACKING'
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
  [schur]
    type = SchurComplement
  []
  [gmres]
    type = GMRES
    rel_tol = 1e-10
    preconditioner = 'jacobi'
  []
  [jacobi]
    type = JacobiPreconditioner
  []
[]
""",
    ),
    "drivers": (
        "A strain-controlled run of the hello-world elastic model over five steps, with a "
        "unit test of the model at one point (`neml2-run INPUT DRIVER` runs a driver).",
        """\
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 5))'
  []
  [strains]
    type = Python
    expr = 'SR2.fill(1e-3, 0.0, 0.0) * Scalar(torch.linspace(0.0, 1.0, 5))'
  []
  [strain]
    type = Python
    expr = 'SR2.fill(1e-3, 0.0, 0.0)'
  []
  [stress]
    type = Python
    expr = 'SR2.fill(269.2307692307692, 115.38461538461539, 115.38461538461539)'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
[Drivers]
  [uniaxial]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strain'
    output_SR2_names = 'stress'
    output_SR2_values = 'stress'
  []
[]
""",
    ),
    "compiled": (
        "The input stub neml2-compile writes beside an artifact: `load_model` and every "
        "driver run the compiled model through it, unchanged.",
        """\
[Models]
  [elasticity]
    type = AOTIModel
    artifact_path = 'elasticity_aoti'
  []
[]
""",
    ),
}
