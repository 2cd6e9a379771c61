# forward_single: a one-leaf forward-only model (the C++ eager example of
# docs/cpp-eager.md, run by test_eager_example).
[Models]
  [model]
    type = LinearIsotropicElasticity
    strain = 'strain'
    stress = 'stress'
    coefficients = '100 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
