# Sample operating point for R2IntermediateMean (no reference unit test).
# Dynamic batch (2,), sub-batch (3,) averaged away. Batch 0 holds
#   A1 = (1, 2, 3, 4, 5, 6, 7, 8, 9), A2 = 2 everywhere, A3 = (0, -1, 0, 1, 0, -2, 3, 1, 0),
# sum (3, 3, 5, 7, 7, 6, 12, 11, 11), mean = sum / 3; batch 1 is the negative of batch 0.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F'
    input_R2_values = 'F'
    output_R2_names = 'F_mean'
    output_R2_values = 'F_mean'
    check_second_derivatives = true
  []
[]

[Tensors]
  [F]
    type = Python
    expr = 'R2(torch.tensor([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
                              [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]],
                              [[0.0, -1.0, 0.0], [1.0, 0.0, -2.0], [3.0, 1.0, 0.0]]],
                             [[[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0]],
                              [[-2.0, -2.0, -2.0], [-2.0, -2.0, -2.0], [-2.0, -2.0, -2.0]],
                              [[0.0, 1.0, 0.0], [-1.0, 0.0, 2.0], [-3.0, -1.0, 0.0]]]]),
               sub_batch_ndim=1)'
  []
  [F_mean]
    type = Python
    expr = 'R2(torch.tensor([[[1.0, 1.0, 5.0 / 3.0], [7.0 / 3.0, 7.0 / 3.0, 2.0], [4.0, 11.0 / 3.0, 11.0 / 3.0]],
                             [[-1.0, -1.0, -5.0 / 3.0], [-7.0 / 3.0, -7.0 / 3.0, -2.0], [-4.0, -11.0 / 3.0, -11.0 / 3.0]]]))'
  []
[]

[Models]
  [model]
    type = R2IntermediateMean
    from = 'F'
    to = 'F_mean'
    reduces = 'grain'
  []
[]
