# Sample operating point for PowerDegradationFunction with a residual stiffness:
#   g = (1 - d)^3 (1 - eta) + eta, eta = 1e-3
#   d = 0.2: 0.512 * 0.999 + 0.001 = 0.512488;  d = 0.6: 0.064 * 0.999 + 0.001 = 0.064936
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'd'
    input_Scalar_values = 'd'
    output_Scalar_names = 'g'
    output_Scalar_values = 'g'
    check_second_derivatives = true
  []
[]

[Tensors]
  [d]
    type = Python
    expr = 'Scalar([0.2, 0.6])'
  []
  [g]
    type = Python
    expr = 'Scalar([0.512488, 0.064936])'
  []
[]

[Models]
  [model]
    type = PowerDegradationFunction
    phase = 'd'
    degradation = 'g'
    power = 3
    eta = 1e-3
  []
[]
