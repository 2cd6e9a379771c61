# Sample operating point for ScalarIntermediateMean (no reference unit test).
# Dynamic batch (2,), sub-batch (4,): mean(1, 2, 3, 6) = 3, mean(-1, 0, 4, 5) = 2.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'x'
    input_Scalar_values = 'x'
    output_Scalar_names = 'x_mean'
    output_Scalar_values = 'x_mean'
    check_second_derivatives = true
  []
[]

[Tensors]
  [x]
    type = Python
    expr = 'Scalar(torch.tensor([[1.0, 2.0, 3.0, 6.0], [-1.0, 0.0, 4.0, 5.0]]), sub_batch_ndim=1)'
  []
  [x_mean]
    type = Python
    expr = 'Scalar(torch.tensor([3.0, 2.0]))'
  []
[]

[Models]
  [model]
    type = ScalarIntermediateMean
    from = 'x'
    to = 'x_mean'
    reduces = 'grain'
  []
[]
