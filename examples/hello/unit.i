# Check the hello-world model: stress values and the stress/strain derivatives.
#   uv run neml2-run examples/hello/unit.i unit
!include input.i

[Tensors]
  [strain]
    type = Python
    expr = 'SR2.fill(1e-3, -3e-4, -3e-4, 1e-4, 0, 0)'
  []
  [stress]
    # sigma = 3K vol(eps) + 2G dev(eps) with E = 200e3, nu = 0.3
    type = Python
    expr = 'SR2.fill(200.0, 0.0, 0.0, 15.384615384615385, 0, 0)'
  []
[]

[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strain'
    output_SR2_names = 'stress'
    output_SR2_values = 'stress'
    verbose = true
  []
[]
