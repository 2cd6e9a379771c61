# Sample operating point for CrystalPlasticityStrainPredictor (no reference unit test).
# elastic_strain = scale D (t - t~1) = 0.1 * 0.2 * D = 0.02 D (fill is linear).
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'deformation_rate'
    input_SR2_values = 'D'
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
  [Ee]
    type = Python
    expr = 'SR2.fill(2e-5, -1e-5, -8e-6, 4e-6, -2e-6, 6e-6)'
  []
[]

[Models]
  [model]
    type = CrystalPlasticityStrainPredictor
    scale = 0.1
  []
[]
