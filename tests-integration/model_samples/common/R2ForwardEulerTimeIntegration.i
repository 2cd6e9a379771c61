# Sample operating point for R2ForwardEulerTimeIntegration (no reference unit test).
# F = F~1 + (t - t~1) F_rate with t - t~1 = 0.2
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F~1 F_rate'
    input_R2_values = 'F_old F_rate'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.3 1.1'
    output_R2_names = 'F'
    output_R2_values = 'F'
    check_second_derivatives = true
  []
[]

[Tensors]
  [F_old]
    type = Python
    expr = 'R2(torch.tensor([[1.0, 0.1, 0.0], [0.2, 1.1, 0.3], [0.0, -0.1, 0.9]]))'
  []
  [F_rate]
    type = Python
    expr = 'R2(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5], [1.0, 2.5, -2.0]]))'
  []
  [F]
    type = Python
    expr = 'R2(torch.tensor([[1.1, -0.1, 0.4], [0.5, 1.1, 0.2], [0.2, 0.4, 0.5]]))'
  []
[]

[Models]
  [model]
    type = R2ForwardEulerTimeIntegration
    variable = 'F'
  []
[]
