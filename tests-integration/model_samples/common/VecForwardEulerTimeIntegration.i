# Sample operating point for VecForwardEulerTimeIntegration (no reference unit test).
# v = v~1 + (t - t~1) v_rate, t - t~1 = 0.2: (1 - 0.1, 2 + 0.3, 3 + 0.8) = (0.9, 2.3, 3.8)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Vec_names = 'v~1 v_rate'
    input_Vec_values = 'v_old v_rate'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_Vec_names = 'v'
    output_Vec_values = 'v'
    check_second_derivatives = true
  []
[]

[Tensors]
  [v_old]
    type = Python
    expr = 'Vec.fill(1.0, 2.0, 3.0)'
  []
  [v_rate]
    type = Python
    expr = 'Vec.fill(-0.5, 1.5, 4.0)'
  []
  [v]
    type = Python
    expr = 'Vec.fill(0.9, 2.3, 3.8)'
  []
[]

[Models]
  [model]
    type = VecForwardEulerTimeIntegration
    variable = 'v'
  []
[]
