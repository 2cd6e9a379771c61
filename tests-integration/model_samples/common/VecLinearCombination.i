# Sample operating point for VecLinearCombination (no reference unit test).
# w = 3 u - v = (3 - 0.5, 6 + 1, 9 - 4) = (2.5, 7, 5)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Vec_names = 'u v'
    input_Vec_values = 'u v'
    output_Vec_names = 'w'
    output_Vec_values = 'w'
    check_second_derivatives = true
  []
[]

[Tensors]
  [u]
    type = Python
    expr = 'Vec.fill(1.0, 2.0, 3.0)'
  []
  [v]
    type = Python
    expr = 'Vec.fill(0.5, -1.0, 4.0)'
  []
  [w]
    type = Python
    expr = 'Vec.fill(2.5, 7.0, 5.0)'
  []
[]

[Models]
  [model]
    type = VecLinearCombination
    from = 'u v'
    to = 'w'
    weights = '3 -1'
  []
[]
