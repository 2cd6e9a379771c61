# Sample operating point for CrystalPlasticityStrainPredictor (no reference unit test).
# elastic_strain = elastic_strain~1 + scale D (t - t~1) = E1 + 0.1 * 0.2 * D = E1 + 0.02 D
# (|E1| below the default threshold 1e-3; fill is linear).
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'deformation_rate elastic_strain~1'
    input_SR2_values = 'D E1'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_SR2_names = 'elastic_strain'
    output_SR2_values = 'Ee'
    check_second_derivatives = true
  []
[]

[Tensors]
  [D]
    type = Python
    expr = 'SR2.fill(1e-3, -5e-4, -4e-4, 2e-4, -1e-4, 3e-4)'
  []
  [E1]
    type = Python
    expr = 'SR2.fill(1e-4, 2e-4, -3e-4, 1e-4, 0, -2e-4)'
  []
  [Ee]
    type = Python
    expr = 'SR2.fill(1.2e-4, 1.9e-4, -3.08e-4, 1.04e-4, -2e-6, -1.94e-4)'
  []
[]

[Models]
  [model]
    type = CrystalPlasticityStrainPredictor
    scale = 0.1
  []
[]
