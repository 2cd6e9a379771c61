# Sample operating point for ScalarLinearCombination (no reference unit test), with an
# offset: d = a - 2 b + 0.5 c + 3 = 1.5 + 0.5 + 2 + 3 = 7.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'a b c'
    input_Scalar_values = '1.5 -0.25 4'
    output_Scalar_names = 'd'
    output_Scalar_values = '7'
    check_second_derivatives = true
  []
[]

[Models]
  [model]
    type = ScalarLinearCombination
    from = 'a b c'
    to = 'd'
    weights = '1 -2 0.5'
    offset = 3
  []
[]
