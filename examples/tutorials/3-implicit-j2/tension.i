# Tutorial 3, a tension test: the J2 model of j2.i pulled along x with its lateral
# faces free of stress. Mixed control: the axial strain and the (zero) lateral stresses
# are prescribed, and the lateral strains become unknowns of the Newton solve.
#   uv run neml2-run examples/tutorials/3-implicit-j2/tension.i tension
# Units: MPa, seconds.
!include j2.i

[Tensors]
  # per Mandel component (xx yy zz yz xz xy), what is prescribed: 0 the strain, 1 the
  # stress; the same at each of the 21 times: eps_xx, sigma_yy, sigma_zz and the shear
  # strains
  [tension_control]
    type = Python
    expr = 'SR2.fill(0.0, 1.0, 1.0, 0.0, 0.0, 0.0).dynamic_batch.expand(21)'
  []
[]

[Models]
  # control, fixed_values, mixed_state -> mixed_stress, strain: per component,
  # mixed_stress = fixed_values and strain = mixed_state where control > 0.5,
  # mixed_stress = mixed_state and strain = fixed_values elsewhere
  [mixed]
    type = MixedControlSetup
    control = 'control'
    x_above = 'fixed_values'
    x_below = 'mixed_state'
    y = 'mixed_stress'
    z = 'strain'
  []
  # the new equation: the stress of the material is the stress the control asks for,
  # stress - mixed_stress = 0 (6 components, for the 6 unknowns of mixed_state)
  [stress_balance]
    type = SR2LinearCombination
    from = 'stress mixed_stress'
    weights = '1 -1'
    to = 'mixed_state_residual'
  []
  # the residual of j2.i with the two new blocks: the strain now comes from 'mixed'
  [tension_residual]
    type = ComposedModel
    models = 'mixed elastic_strain elasticity mandel_stress vonmises voce yield_surface
              normality plastic_flow hardening_flow consistency
              integrate_plastic_strain integrate_equivalent_plastic_strain stress_balance'
  []
  [tension_predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain mixed_state'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  [tension_return_map]
    type = ImplicitUpdate
    equation_system = 'tension_system'
    solver = 'newton'
    predictor = 'tension_predictor'
  []
  # the update, then the strain and the stress from the converged unknowns
  [tension_model]
    type = ComposedModel
    models = 'tension_return_map mixed elastic_strain elasticity'
    additional_outputs = 'plastic_strain mixed_state strain'
  []
[]

[EquationSystems]
  # 6 + 1 + 1 + 6 = 14 unknowns and residuals per material point
  [tension_system]
    type = NonlinearSystem
    model = 'tension_residual'
    unknowns = 'plastic_strain equivalent_plastic_strain flow_rate mixed_state'
    residuals = 'plastic_strain_residual equivalent_plastic_strain_residual complementarity
                 mixed_state_residual'
  []
[]

[Drivers]
  # the prescribed values are j2.i's 'strains', (e, 0, 0, 0, 0, 0) with e up to 2 %,
  # read through tension_control: eps_xx = e, sigma_yy = sigma_zz = 0, no shear strain
  [tension]
    type = TransientDriver
    model = 'tension_model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'control fixed_values'
    prescribed_SR2_values = 'tension_control strains'
  []
[]
