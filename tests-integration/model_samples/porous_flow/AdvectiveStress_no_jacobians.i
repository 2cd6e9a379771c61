# Sample operating point for AdvectiveStress without the optional Jacobians (Js = Jt = 1):
#   ps = -c / 3 P:F, c = 2, P:F = 13.84  ->  ps = -9.22666...
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F P'
    input_R2_values = 'F P'
    output_Scalar_names = 'ps'
    output_Scalar_values = '-9.226666666666667'
    check_second_derivatives = true
  []
[]

[Tensors]
  [F]
    type = Python
    expr = 'R2.fill(1.1, 0.1, 0.0, 0.05, 0.95, 0.2, 0.0, -0.1, 1.02)'
  []
  [P]
    type = Python
    expr = 'R2.fill(10.0, 2.0, 0.0, 1.0, -5.0, 3.0, 0.0, 4.0, 7.0)'
  []
[]

[Models]
  [model]
    type = AdvectiveStress
    coefficient = 2.0
    deformation_gradient = 'F'
    pk1_stress = 'P'
    advective_stress = 'ps'
  []
[]
