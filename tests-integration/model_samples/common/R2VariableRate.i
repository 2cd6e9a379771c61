# Sample operating point for R2VariableRate (no reference unit test).
# F_rate = (F - F~1) / (t - t~1), t - t~1 = 0.2, F~1 = identity, row-major:
#   F - F~1 = (0.2, 0.1, 0.0, 0.0, -0.1, -0.2, 0.05, 0.0, 0.0)
#   F_rate  = (1.0, 0.5, 0.0, 0.0, -0.5, -1.0, 0.25, 0.0, 0.0)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F F~1'
    input_R2_values = 'F F_old'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_R2_names = 'F_rate'
    output_R2_values = 'F_rate'
    check_second_derivatives = true
  []
[]

[Tensors]
  [F]
    type = Python
    expr = 'R2.fill(1.2, 0.1, 0.0, 0.0, 0.9, -0.2, 0.05, 0.0, 1.0)'
  []
  [F_old]
    type = Python
    expr = 'R2.fill(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)'
  []
  [F_rate]
    type = Python
    expr = 'R2.fill(1.0, 0.5, 0.0, 0.0, -0.5, -1.0, 0.25, 0.0, 0.0)'
  []
[]

[Models]
  [model]
    type = R2VariableRate
    variable = 'F'
  []
[]
