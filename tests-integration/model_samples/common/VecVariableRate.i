# Sample operating point for VecVariableRate (no reference unit test).
# v_rate = (v - v~1) / (t - t~1) = (0.2, -0.1, -0.2) / 0.2 = (1, -0.5, -1)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Vec_names = 'v v~1'
    input_Vec_values = 'v v_old'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_Vec_names = 'v_rate'
    output_Vec_values = 'v_rate'
    check_second_derivatives = true
  []
[]

[Tensors]
  [v]
    type = Python
    expr = 'Vec.fill(0.3, 0.1, -0.2)'
  []
  [v_old]
    type = Python
    expr = 'Vec.fill(0.1, 0.2, 0.0)'
  []
  [v_rate]
    type = Python
    expr = 'Vec.fill(1.0, -0.5, -1.0)'
  []
[]

[Models]
  [model]
    type = VecVariableRate
    variable = 'v'
  []
[]
