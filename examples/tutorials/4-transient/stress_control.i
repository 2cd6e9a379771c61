# Tutorial 4, part 2: the material of strain_control.i under mixed control.
# Uniaxial stress: the normal stresses are prescribed (sigma_xx ramps up to 375 MPa,
# sigma_yy = sigma_zz = 0), the shear strains too (zero); the driver solves for
# the other half: the normal strains and the shear stresses.
#   uv run neml2-run examples/tutorials/4-transient/stress_control.i driver

[Tensors]
  # 41 times from 0 to 1: the initial state, then 40 steps
  [times]
    type = Python
    expr = 'linspace(Scalar(0.0), Scalar(1.0), 41)'
  []
  # per Mandel component (xx yy zz yz xz xy), what is prescribed: 1 the stress,
  # 0 the strain; the same at every step, shape (41, 6)
  [control]
    type = Python
    expr = 'SR2.fill(1.0, 1.0, 1.0, 0.0, 0.0, 0.0).dynamic_batch.expand(41)'
  []
  # the prescribed values in the same slots: sigma_xx from 0 to 375 MPa,
  # sigma_yy = sigma_zz = 0, and zero shear strains; shape (41, 6)
  [max_stress]
    type = Python
    expr = 'SR2.fill(375.0, 0.0, 0.0)'
  []
  [conditions]
    type = Python
    expr = 'linspace(SR2.fill(0.0), max_stress, 41)'
  []
  # the axial strain prescribed instead (xx switched to 0), from 0 to 2 %
  [control_axial_strain]
    type = Python
    expr = 'SR2.fill(0.0, 1.0, 1.0, 0.0, 0.0, 0.0).dynamic_batch.expand(41)'
  []
  [conditions_axial_strain]
    type = Python
    expr = 'linspace(SR2.fill(0.0), SR2.fill(0.02, 0.0, 0.0), 41)'
  []
[]

[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'control fixed_values'
    prescribed_SR2_values = 'control conditions'
  []
  [axial_strain]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'control fixed_values'
    prescribed_SR2_values = 'control_axial_strain conditions_axial_strain'
  []
[]

[Models]
  # the material, as in strain_control.i
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
    rate_form = true
  []
  [isoharden]
    type = VoceIsotropicHardening
    saturated_hardening = 150
    saturation_rate = 50
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
  [yield_surface]
    type = YieldFunction
    yield_stress = 250
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [Erate]
    type = SR2VariableRate
    variable = 'strain'
  []
  [Eerate]
    type = SR2LinearCombination
    from = 'strain_rate plastic_strain_rate'
    to = 'elastic_strain_rate'
    weights = '1 -1'
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [integrate_stress]
    type = SR2BackwardEulerTimeIntegration
    variable = 'stress'
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  # new: per component, stress = fixed_values where control > 0.5, else mixed_state;
  # strain takes the other one
  [mixed]
    type = MixedControlSetup
    control = 'control'
    x_above = 'fixed_values'
    x_below = 'mixed_state'
    y = 'stress'
    z = 'strain'
  []
  [residual]
    type = ComposedModel
    models = 'mixed elasticity isoharden mandel_stress vonmises yield_surface normality
              Eprate eprate Erate Eerate consistency integrate_stress integrate_ep'
  []
[]

[EquationSystems]
  # new: mixed_state, not the stress, is the unknown the stress residual solves for
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'mixed_state equivalent_plastic_strain flow_rate'
    residuals = 'stress_residual equivalent_plastic_strain_residual complementarity'
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

[Models]
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'mixed_state'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  [update]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  # new: the stress and the strain come from mixed_state and the prescribed values
  [model]
    type = ComposedModel
    models = 'update mixed'
    additional_outputs = 'mixed_state'
  []
[]
