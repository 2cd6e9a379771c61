# Sample operating point for ScalarVariableRate (no reference unit test).
# foo_rate = (foo - foo~1) / (t - t~1) = (0.3 - 0.1) / (1.3 - 1.1) = 1.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'foo foo~1 t t~1'
    input_Scalar_values = '0.3 0.1 1.3 1.1'
    output_Scalar_names = 'foo_rate'
    output_Scalar_values = '1'
    check_second_derivatives = true
  []
[]

[Models]
  [model]
    type = ScalarVariableRate
    variable = 'foo'
    time = 't'
  []
[]
