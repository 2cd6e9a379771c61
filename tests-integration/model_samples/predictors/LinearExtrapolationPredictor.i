# Sample operating point for LinearExtrapolationPredictor (no reference unit test).
# u = u~1 + (u~1 - u~2) (t - t~1) / (t~1 - t~2); t = 1.3, t~1 = 1.1, t~2 = 1.0, so the
# ratio is 0.2 / 0.1 = 2:
#   flow_rate      = 0.5 + 2 (0.5 - 0.3) = 0.9
#   plastic_strain = ep1 + 2 (ep1 - ep2), componentwise in the fill arguments (fill is
#                    linear): (0.014, -0.007, -0.007, 0.004, 0.0, 0.002)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 't t~1 t~2 flow_rate~1 flow_rate~2'
    input_Scalar_values = '1.3 1.1 1.0 0.5 0.3'
    input_SR2_names = 'plastic_strain~1 plastic_strain~2'
    input_SR2_values = 'ep1 ep2'
    output_Scalar_names = 'flow_rate'
    output_Scalar_values = '0.9'
    output_SR2_names = 'plastic_strain'
    output_SR2_values = 'ep'
    check_second_derivatives = true
  []
[]

[Tensors]
  [ep1]
    type = Python
    expr = 'SR2.fill(0.01, -0.005, -0.005, 0.002, 0.0, 0.001)'
  []
  [ep2]
    type = Python
    expr = 'SR2.fill(0.008, -0.004, -0.004, 0.001, 0.0, 0.0005)'
  []
  [ep]
    type = Python
    expr = 'SR2.fill(0.014, -0.007, -0.007, 0.004, 0.0, 0.002)'
  []
[]

[Models]
  [model]
    type = LinearExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'flow_rate'
  []
[]
