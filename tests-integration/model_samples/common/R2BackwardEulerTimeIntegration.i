# Sample operating point for R2BackwardEulerTimeIntegration (no reference unit test).
# residual = F - F~1 - (t - t~1) F_rate with t - t~1 = 0.2, componentwise (row-major):
#   F            = (1.1, 0.2, 0.3,  0.4, 1.5, 0.6,  0.7, 0.8, 0.9)
#   F~1          = identity
#   0.2 F_rate   = (0.1, -0.2, 0.3, 0.4, 0.5, -0.6, -0.1, -0.2, -0.3)
#   F_residual   = (0.0, 0.4, 0.0,  0.0, 0.0, 1.2,  0.8, 1.0, 0.2)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F F~1 F_rate'
    input_R2_values = 'F F_old F_rate'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_R2_names = 'F_residual'
    output_R2_values = 'F_residual'
    check_second_derivatives = true
  []
[]

[Tensors]
  [F]
    type = Python
    expr = 'R2.fill(1.1, 0.2, 0.3, 0.4, 1.5, 0.6, 0.7, 0.8, 0.9)'
  []
  [F_old]
    type = Python
    expr = 'R2.fill(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)'
  []
  [F_rate]
    type = Python
    expr = 'R2.fill(0.5, -1.0, 1.5, 2.0, 2.5, -3.0, -0.5, -1.0, -1.5)'
  []
  [F_residual]
    type = Python
    expr = 'R2.fill(0.0, 0.4, 0.0, 0.0, 0.0, 1.2, 0.8, 1.0, 0.2)'
  []
[]

[Models]
  [model]
    type = R2BackwardEulerTimeIntegration
    variable = 'F'
  []
[]
