# Tutorial 1, step 1: an input file with one model.
#   uv run neml2-inspect examples/tutorials/1-first-input/elasticity.i elasticity
# Linear isotropic elasticity, E = 200 GPa (in MPa) and nu = 0.3: strain -> stress.
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
