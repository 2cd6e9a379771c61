# Sample operating point for VecBackwardEulerTimeIntegration (no reference unit test).
# residual = v - v~1 - (t - t~1) v_rate, t - t~1 = 0.2:
#   (1.1 - 1.0 - 0.05, -0.5 + 0.4 + 0.2, 2.0 - 1.5 - 0.4) = (0.05, 0.1, 0.1)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Vec_names = 'v v~1 v_rate'
    input_Vec_values = 'v v_old v_rate'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_Vec_names = 'v_residual'
    output_Vec_values = 'v_residual'
    check_second_derivatives = true
  []
[]

[Tensors]
  [v]
    type = Python
    expr = 'Vec.fill(1.1, -0.5, 2.0)'
  []
  [v_old]
    type = Python
    expr = 'Vec.fill(1.0, -0.4, 1.5)'
  []
  [v_rate]
    type = Python
    expr = 'Vec.fill(0.25, -1.0, 2.0)'
  []
  [v_residual]
    type = Python
    expr = 'Vec.fill(0.05, 0.1, 0.1)'
  []
[]

[Models]
  [model]
    type = VecBackwardEulerTimeIntegration
    variable = 'v'
  []
[]
