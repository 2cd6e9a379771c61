# Tutorial 4, part 1: rate-independent J2 plasticity with Voce hardening,
# driven by a prescribed strain tensor (uniaxial strain).
#   uv run neml2-run examples/tutorials/4-transient/strain_control.i driver

[Tensors]
  # 41 times from 0 to 1: the initial state (step 0), then 40 steps; shape (41,)
  [times]
    type = Python
    expr = 'linspace(Scalar(0.0), Scalar(1.0), 41)'
  []
  # the whole strain tensor at each time, (e, 0, 0, 0, 0, 0) with e from 0 to 2 %;
  # shape (41, 6)
  [strains]
    type = Python
    expr = 'linspace(SR2.fill(0.0), SR2.fill(0.02, 0.0, 0.0), 41)'
  []
[]

[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
[]

[Models]
  # the material: E = 200 GPa, nu = 0.3 (stresses in MPa), yield stress 250 MPa,
  # Voce hardening h = 150 (1 - exp(-50 ep)) MPa
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
  # Kuhn-Tucker conditions f <= 0, flow_rate >= 0, f flow_rate = 0 as one residual
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
  [residual]
    type = ComposedModel
    models = 'elasticity isoharden mandel_stress vonmises yield_surface normality
              Eprate eprate Erate Eerate consistency integrate_stress integrate_ep'
  []
[]

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'stress equivalent_plastic_strain flow_rate'
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
    unknowns_SR2 = 'stress'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
[]
