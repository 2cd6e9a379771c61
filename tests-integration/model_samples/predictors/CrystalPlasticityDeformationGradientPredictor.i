# Sample operating point for CrystalPlasticityDeformationGradientPredictor (no reference
# unit test). Fp~1 = diag(1.01, 1, 0.995) and F = A Fp~1, so the trial elastic
# deformation F Fp~1^-1 is A, whose strain |sym(A) - I| ~ 0.03 is over the threshold:
#   Fe = I + s (A - I) = I + 0.5 (A - I),   Fp = Fe^-1 F
# ('over'). With threshold = 0.1 the same point is under it and Fp = Fp~1 ('under').
[Drivers]
  [over]
    type = ModelUnitTest
    model = 'over'
    input_R2_names = 'deformation_gradient plastic_deformation_gradient~1'
    input_R2_values = 'F Fp_old'
    output_R2_names = 'plastic_deformation_gradient'
    output_R2_values = 'Fp_over'
    check_second_derivatives = true
  []
  [under]
    type = ModelUnitTest
    model = 'under'
    input_R2_names = 'deformation_gradient plastic_deformation_gradient~1'
    input_R2_values = 'F Fp_old'
    output_R2_names = 'plastic_deformation_gradient'
    output_R2_values = 'Fp_old'
    check_second_derivatives = true
  []
[]

[Tensors]
  [A]
    type = Python
    expr = 'R2(torch.tensor([[1.02, 0.04, 0.0], [0.0, 0.98, 0.0], [0.01, 0.0, 1.0]], dtype=torch.float64))'
  []
  [Fp_old]
    type = Python
    expr = 'R2(torch.diag(torch.tensor([1.01, 1.0, 0.995], dtype=torch.float64)))'
  []
  [F]
    type = Python
    expr = 'R2(A.data @ Fp_old.data)'
  []
  [Fp_over]
    type = Python
    expr = 'I = torch.eye(3, dtype=torch.float64)
result = R2(torch.linalg.inv(I + 0.5 * (A.data - I)) @ F.data)'
  []
[]

[Models]
  [over]
    type = CrystalPlasticityDeformationGradientPredictor
    scale = 0.5
  []
  [under]
    type = CrystalPlasticityDeformationGradientPredictor
    scale = 0.5
    threshold = 0.1
  []
[]
