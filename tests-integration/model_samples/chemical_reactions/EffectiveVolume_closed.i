# Sample operating point for EffectiveVolume without an open volume fraction:
#   V = M (w1 / rho1 + w2 / rho2), M = 2, rho = (2, 5)
#   w = (0.3, 0.7): 2 (0.15 + 0.14) = 0.58;  w = (0.1, 0.9): 2 (0.05 + 0.18) = 0.46
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'w1 w2'
    input_Scalar_values = 'w1 w2'
    output_Scalar_names = 'V'
    output_Scalar_values = 'V'
    check_second_derivatives = true
  []
[]

[Tensors]
  [w1]
    type = Python
    expr = 'Scalar([0.3, 0.1])'
  []
  [w2]
    type = Python
    expr = 'Scalar([0.7, 0.9])'
  []
  [V]
    type = Python
    expr = 'Scalar([0.58, 0.46])'
  []
[]

[Models]
  [model]
    type = EffectiveVolume
    reference_mass = 2
    mass_fractions = 'w1 w2'
    densities = '2 5'
    composite_volume = 'V'
  []
[]
