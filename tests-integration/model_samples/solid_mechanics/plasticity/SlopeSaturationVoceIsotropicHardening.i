# Sample operating point for SlopeSaturationVoceIsotropicHardening (no reference unit
# test). h_rate = sign(R) theta0 (1 - h / R) flow_rate with R = 100, theta0 = 500:
#   h = 40, flow_rate = 0.01: 500 * 0.6 * 0.01 = 3.0
#   h = 70, flow_rate = 0.02: 500 * 0.3 * 0.02 = 3.0
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'flow_rate isotropic_hardening'
    input_Scalar_values = 'gamma_dot h'
    output_Scalar_names = 'isotropic_hardening_rate'
    output_Scalar_values = '3.0'
    check_second_derivatives = true
  []
[]

[Tensors]
  [gamma_dot]
    type = Python
    expr = 'Scalar(torch.tensor([0.01, 0.02]))'
  []
  [h]
    type = Python
    expr = 'Scalar(torch.tensor([40.0, 70.0]))'
  []
[]

[Models]
  [model]
    type = SlopeSaturationVoceIsotropicHardening
    saturated_hardening = 100
    initial_hardening_rate = 500
  []
[]
