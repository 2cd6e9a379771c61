# Sample operating point for VecLinearInterpolation (no reference unit test).
# Table X = (0, 1, 2), Y = ((0, 0, 0), (1, 10, 100), (3, 30, 300)); the argument
# x = (0.5, 1.5) falls in the first and second cells:
#   p(0.5) = 0.5 Y1 = (0.5, 5, 50), p(1.5) = (Y1 + Y2) / 2 = (2, 20, 200).
# The output is named after the block (E).
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'E'
    input_Scalar_names = 'T'
    input_Scalar_values = 'x'
    output_Vec_names = 'E'
    output_Vec_values = 'p'
    check_second_derivatives = true
  []
[]

[Tensors]
  [x]
    type = Python
    expr = 'Scalar(torch.tensor([0.5, 1.5]))'
  []
  [X]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 1.0, 2.0])).sub_batch.retag(1)'
  []
  [Y]
    type = Python
    expr = 'Vec(torch.tensor([[0.0, 0.0, 0.0], [1.0, 10.0, 100.0], [3.0, 30.0, 300.0]])).sub_batch.retag(1)'
  []
  [p]
    type = Python
    expr = 'Vec(torch.tensor([[0.5, 5.0, 50.0], [2.0, 20.0, 200.0]]))'
  []
[]

[Models]
  [E]
    type = VecLinearInterpolation
    argument = 'T'
    abscissa = 'X'
    ordinate = 'Y'
  []
[]
