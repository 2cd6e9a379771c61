# Sample operating point for ConstantExtrapolationPredictor (no reference unit test).
# u = u~1 for every listed unknown, so the expected outputs are the old values.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'flow_rate~1'
    input_Scalar_values = '0.02'
    input_SR2_names = 'plastic_strain~1'
    input_SR2_values = 'ep_old'
    output_Scalar_names = 'flow_rate'
    output_Scalar_values = '0.02'
    output_SR2_names = 'plastic_strain'
    output_SR2_values = 'ep_old'
    check_second_derivatives = true
  []
[]

[Tensors]
  [ep_old]
    type = Python
    expr = 'SR2.fill(0.01, -0.004, -0.006, 0.002, -0.001, 0.003)'
  []
[]

[Models]
  [model]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'flow_rate'
  []
[]
