# Tutorial 3: small-strain J2 plasticity, rate independent, with Voce isotropic
# hardening; backward Euler in time and Newton's method at every step.
#   uv run neml2-inspect examples/tutorials/3-implicit-j2/j2.i model
#   uv run neml2-run examples/tutorials/3-implicit-j2/j2.i uniaxial
# Units: MPa, seconds.

[Tensors]
  # 21 times from 0 to 1 s, and a uniaxial strain growing linearly to 2% over them
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 21))'
  []
  [strains]
    type = Python
    expr = 'SR2.fill(0.02, 0.0, 0.0) * Scalar(torch.linspace(0.0, 1.0, 21))'
  []
[]

[Models]
  # ---- the residual: the equations of one time step -----------------------------
  # strain, plastic_strain -> elastic_strain = strain - plastic_strain
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    weights = '1 -1'
    to = 'elastic_strain'
  []
  # elastic_strain -> stress
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  # stress -> mandel_stress (equal at small strain)
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  # mandel_stress -> effective_stress (von Mises)
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  # equivalent_plastic_strain -> isotropic_hardening = R (1 - exp(-d equivalent_plastic_strain))
  [voce]
    type = VoceIsotropicHardening
    saturated_hardening = 150
    saturation_rate = 30
  []
  # effective_stress, isotropic_hardening -> yield_function
  [yield_surface]
    type = YieldFunction
    yield_stress = 200
    isotropic_hardening = 'isotropic_hardening'
  []
  [yield_of_stress]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  # mandel_stress, isotropic_hardening -> flow_direction, isotropic_hardening_direction
  [normality]
    type = Normality
    model = 'yield_of_stress'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  # flow_rate, flow_direction -> plastic_strain_rate
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  # flow_rate, isotropic_hardening_direction -> equivalent_plastic_strain_rate
  [hardening_flow]
    type = AssociativeIsotropicPlasticHardening
  []
  # yield_function, flow_rate -> complementarity = min(-yield_function, flow_rate),
  # zero exactly when yield_function <= 0, flow_rate >= 0, yield_function flow_rate = 0
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
    b_inequality = 'GE'
  []
  # plastic_strain, plastic_strain~1, plastic_strain_rate, t, t~1 -> plastic_strain_residual
  [integrate_plastic_strain]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  # the same for equivalent_plastic_strain -> equivalent_plastic_strain_residual
  [integrate_equivalent_plastic_strain]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [residual]
    type = ComposedModel
    models = 'elastic_strain elasticity mandel_stress vonmises voce yield_surface normality
              plastic_flow hardening_flow consistency
              integrate_plastic_strain integrate_equivalent_plastic_strain'
  []

  # ---- the update: solve the residual for the unknowns --------------------------
  # the initial guess of the unknowns: their values at the previous step
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  # strain, t, t~1 and the unknowns' ~1 values -> the unknowns at the end of the step
  [return_map]
    type = ImplicitUpdate
    equation_system = 'return_map_system'
    solver = 'newton'
    predictor = 'predictor'
  []
  # the material model: the update, then the stress from the converged plastic strain
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain'
  []
[]

[EquationSystems]
  # r(u; g) = 0: the residual's outputs 'residuals' as functions of its inputs
  # 'unknowns' (pairwise, same types); every other input of 'residual' is given
  [return_map_system]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain equivalent_plastic_strain flow_rate'
    residuals = 'plastic_strain_residual equivalent_plastic_strain_residual complementarity'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-10
    rel_tol = 1e-8
    max_its = 20
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Drivers]
  [uniaxial]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
[]
