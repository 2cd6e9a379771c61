# A first-order reaction heated at 5, 10 and 20 K/min (one batch point per heating
# rate): the degree of conversion alpha from dalpha/dt = k(T) (1 - alpha), with an
# Arrhenius rate coefficient k = A exp(-Q / (R T)), integrated by backward Euler.
#   uv run neml2-run examples/physics/chemical-reactions/heating_rates.i heating
# Units: K, s, J/mol.

T0 = 500
T1 = 720
steps = 111

[Tensors]
  # the temperature, the same ramp from T0 to T1 for the three points: (steps, 3)
  [T]
    type = Python
    expr = 'linspace(Scalar(torch.full((3,), ${T0}.0)), Scalar(torch.full((3,), ${T1}.0)), ${steps})'
  []
  # the time at which each point reaches that temperature: t = (T - T0) / beta, beta
  # = 5, 10 and 20 K/min
  [times]
    type = Python
    expr = '(T - ${T0}.0) / Scalar(torch.tensor([5.0, 10.0, 20.0]) / 60.0)'
  []
[]

[Models]
  # T -> k = A exp(-Q / (R T)), A = 1e10 1/s, Q = 150 kJ/mol
  [rate_coefficient]
    type = ArrheniusParameter
    temperature = 'T'
    reference_value = 1e10
    activation_energy = 150e3
    ideal_gas_constant = 8.314462618
    parameter = 'k'
  []
  # alpha, k -> alpha_rate = k (1 - alpha)^n, first order
  [mechanism]
    type = ContractingGeometry
    conversion_degree = 'alpha'
    reaction_rate = 'alpha_rate'
    coef = 'k'
    order = 1
  []
  # alpha, alpha~1, alpha_rate, t, t~1 -> alpha_residual
  [integrate_alpha]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'alpha'
  []
  [residual]
    type = ComposedModel
    models = 'rate_coefficient mechanism integrate_alpha'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'alpha'
  []
  [solve_alpha]
    type = ImplicitUpdate
    equation_system = 'reaction'
    solver = 'newton'
    predictor = 'predictor'
  []
  # the update, then the rate at the converged conversion (an output to plot)
  [model]
    type = ComposedModel
    models = 'solve_alpha rate_coefficient mechanism'
    additional_outputs = 'alpha'
  []
[]

[EquationSystems]
  [reaction]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'alpha'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-12
    rel_tol = 1e-10
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Drivers]
  [heating]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_Scalar_names = 'T'
    prescribed_Scalar_values = 'T'
  []
[]
