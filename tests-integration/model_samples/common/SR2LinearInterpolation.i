# Sample operating point for SR2LinearInterpolation (no reference unit test).
# Table X = (100, 200, 400) with SR2 ordinates S0 = 0, S1 = (1, ..., 6) (Mandel), S2 = 3 S1;
# T = 300 lies halfway in the second cell: p = (S1 + S2) / 2 = 2 S1.
# The output is named with the 'output' option.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'T'
    input_Scalar_values = '300'
    output_SR2_names = 'C'
    output_SR2_values = 'p'
    check_second_derivatives = true
  []
[]

[Tensors]
  [X]
    type = Python
    expr = 'Scalar(torch.tensor([100.0, 200.0, 400.0])).sub_batch.retag(1)'
  []
  [Y]
    type = Python
    expr = 'SR2(torch.tensor([[0.0] * 6, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3.0, 6.0, 9.0, 12.0, 15.0, 18.0]])).sub_batch.retag(1)'
  []
  [p]
    type = Python
    expr = 'SR2(torch.tensor([2.0, 4.0, 6.0, 8.0, 10.0, 12.0]))'
  []
[]

[Models]
  [model]
    type = SR2LinearInterpolation
    argument = 'T'
    abscissa = 'X'
    ordinate = 'Y'
    output = 'C'
  []
[]
