# Sample operating point for PowerLawKinematicHardeningStaticRecovery (no reference unit
# test). X_rate = -(|X| / tau)^(n - 1) X / tau with tau = 50, n = 2.5 and
# X = fill(-10, 15, 5, -7, 15, 20):
#   X:X = 100 + 225 + 25 + 2 (49 + 225 + 400) = 1698  (Mandel shears carry sqrt 2),
#   X_rate = -(sqrt(1698) / 50)^1.5 / 50 * X   (the model's machine-epsilon
#   regularisation of |X| is far below the tolerance).
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'back_stress'
    input_SR2_values = 'X'
    output_SR2_names = 'back_stress_rate'
    output_SR2_values = 'X_rate'
    check_second_derivatives = true
  []
[]

[Tensors]
  [X]
    type = Python
    expr = 'SR2.fill(-10.0, 15.0, 5.0, -7.0, 15.0, 20.0)'
  []
  [X_rate]
    type = Python
    expr = 'SR2.fill(-10.0, 15.0, 5.0, -7.0, 15.0, 20.0) * (-((math.sqrt(1698.0) / 50.0) ** 1.5) / 50.0)'
  []
[]

[Models]
  [model]
    type = PowerLawKinematicHardeningStaticRecovery
    tau = 50
    n = 2.5
  []
[]
