# Sample operating point for PowerLawIsotropicHardeningStaticRecovery (no reference unit
# test). h_rate = -(|h| / tau)^(n - 1) h / tau with tau = 50, n = 2.5, on a batch of one
# positive and one negative hardening:
#   h =  20: -(0.4)^1.5 * 0.4  = -0.4^2.5
#   h = -30: -(0.6)^1.5 * -0.6 = +0.6^2.5
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'isotropic_hardening'
    input_Scalar_values = 'h'
    output_Scalar_names = 'isotropic_hardening_rate'
    output_Scalar_values = 'h_rate'
    check_second_derivatives = true
  []
[]

[Tensors]
  [h]
    type = Python
    expr = 'Scalar(torch.tensor([20.0, -30.0]))'
  []
  [h_rate]
    type = Python
    expr = 'Scalar(torch.tensor([-(0.4 ** 2.5), 0.6 ** 2.5]))'
  []
[]

[Models]
  [model]
    type = PowerLawIsotropicHardeningStaticRecovery
    tau = 50
    n = 2.5
  []
[]
