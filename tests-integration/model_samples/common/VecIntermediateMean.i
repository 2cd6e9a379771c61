# Sample operating point for VecIntermediateMean (no reference unit test).
# Dynamic batch (2,), sub-batch (3,):
#   mean((1, 2, 3), (3, 4, 5), (-1, 0, 4)) = (1, 2, 4)
#   mean((0, 0, 0), (6, -3, 3), (3, 3, 3)) = (3, 0, 2)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Vec_names = 'v'
    input_Vec_values = 'v'
    output_Vec_names = 'v_mean'
    output_Vec_values = 'v_mean'
    check_second_derivatives = true
  []
[]

[Tensors]
  [v]
    type = Python
    expr = 'Vec(torch.tensor([[[1.0, 2.0, 3.0], [3.0, 4.0, 5.0], [-1.0, 0.0, 4.0]],
                              [[0.0, 0.0, 0.0], [6.0, -3.0, 3.0], [3.0, 3.0, 3.0]]]),
                sub_batch_ndim=1)'
  []
  [v_mean]
    type = Python
    expr = 'Vec(torch.tensor([[1.0, 2.0, 4.0], [3.0, 0.0, 2.0]]))'
  []
[]

[Models]
  [model]
    type = VecIntermediateMean
    from = 'v'
    to = 'v_mean'
    reduces = 'grain'
  []
[]
