# Sample operating point for FredrickArmstrongPlasticHardening (no reference unit test).
# X_rate = flow_rate (2/3 C N - g X), C = 1000, g = 10, flow_rate = 0.01; linear in the
# fill arguments:
#   2/3 C N = (1000/3, -500/3, -500/3, 200/3, 0, 400/3)
#   g X     = (-100, 150, 50, -70, 150, 200)
#   X_rate  = 0.01 (1300/3, -950/3, -650/3, 410/3, -150, -200/3)
#           = (13/3, -19/6, -13/6, 41/30, -1.5, -2/3)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'flow_rate'
    input_Scalar_values = '0.01'
    input_SR2_names = 'flow_direction back_stress'
    input_SR2_values = 'N X'
    output_SR2_names = 'back_stress_rate'
    output_SR2_values = 'X_rate'
    check_second_derivatives = true
  []
[]

[Tensors]
  [N]
    type = Python
    expr = 'SR2.fill(0.5, -0.25, -0.25, 0.1, 0.0, 0.2)'
  []
  [X]
    type = Python
    expr = 'SR2.fill(-10.0, 15.0, 5.0, -7.0, 15.0, 20.0)'
  []
  [X_rate]
    type = Python
    expr = 'SR2.fill(13.0 / 3.0, -19.0 / 6.0, -13.0 / 6.0, 41.0 / 30.0, -1.5, -2.0 / 3.0)'
  []
[]

[Models]
  [model]
    type = FredrickArmstrongPlasticHardening
    C = 1000
    g = 10
  []
[]
