# Sample operating point for R2LinearCombination (no reference unit test), with an offset.
# C = 2 A - 0.5 B + 1 (the offset is added to every component), row-major:
#   A = (1, 2, 3, 4, 5, 6, 7, 8, 9), B = (2, 0, -2, 4, 6, 8, -10, 0, 10)
#   C = (2, 5, 8, 7, 8, 9, 20, 17, 14)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'A B'
    input_R2_values = 'A B'
    output_R2_names = 'C'
    output_R2_values = 'C'
    check_second_derivatives = true
  []
[]

[Tensors]
  [A]
    type = Python
    expr = 'R2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)'
  []
  [B]
    type = Python
    expr = 'R2.fill(2.0, 0.0, -2.0, 4.0, 6.0, 8.0, -10.0, 0.0, 10.0)'
  []
  [C]
    type = Python
    expr = 'R2.fill(2.0, 5.0, 8.0, 7.0, 8.0, 9.0, 20.0, 17.0, 14.0)'
  []
[]

[Models]
  [model]
    type = R2LinearCombination
    from = 'A B'
    to = 'C'
    weights = '2 -0.5'
    offset = 1
  []
[]
