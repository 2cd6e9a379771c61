# Tutorial 1, step 2: a complete input file. The same elastic model, the values
# to drive it with, and two drivers:
#   uv run neml2-run examples/tutorials/1-first-input/first.i unit
#   uv run neml2-run examples/tutorials/1-first-input/first.i uniaxial
# Units: MPa, seconds.

[Tensors]
  # A strain (uniaxial strain plus a shear) and the stress it must give:
  # xx: (lambda + 2 mu) 1e-3, yy and zz: lambda 1e-3, xy: 2 mu 5e-4
  [test_strain]
    type = Python
    expr = 'SR2.fill(1e-3, 0.0, 0.0, 0.0, 0.0, 5e-4)'
  []
  [expected_stress]
    type = Python
    expr = 'SR2.fill(269.2307692307692, 115.38461538461539, 115.38461538461539, 0.0, 0.0, 76.92307692307692)'
  []
  # A load history: 6 times from 0 to 5 s, and a uniaxial strain growing
  # linearly from 0 to 1e-3 over them (shape (6, 6): 6 steps of one SR2)
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 5.0, 6))'
  []
  [strains]
    type = Python
    expr = 'SR2.fill(1e-3, 0.0, 0.0) * Scalar(torch.linspace(0.0, 1.0, 6))'
  []
[]

[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]

[Drivers]
  # Evaluate the model once at [Tensors]/test_strain, compare its output 'stress'
  # with [Tensors]/expected_stress,
  # and check its derivative d stress / d strain against automatic differentiation
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'test_strain'
    output_SR2_names = 'stress'
    output_SR2_values = 'expected_stress'
  []
  # Step the model through the load history: at step k the model's input
  # 'strain' is [Tensors]/strains at step k
  [uniaxial]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
[]
