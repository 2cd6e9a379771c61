# Hello-world neml2 input: one linear isotropic elastic model.
#   E  = 200 GPa (in MPa), nu = 0.3
# Maps the small strain (SR2, Mandel) to the Cauchy stress (SR2, Mandel).
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
