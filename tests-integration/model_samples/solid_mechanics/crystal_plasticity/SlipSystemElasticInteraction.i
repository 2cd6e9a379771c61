# Sample operating point for SlipSystemElasticInteraction (no reference unit test).
# Cubic {010}<100> slip: 6 systems with unit d_i, n_i along the axes, isotropic C with
# lambda = 3, mu = 2 (Mandel 2 mu I + lambda 1x1). Schmid tensors are traceless, so
# A_ij = dt 2 mu M_i:M_j with M_i:M_j = ((d_i.d_j)(n_i.n_j) + (d_i.n_j)(n_i.d_j)) / 2:
# 1/2 on the diagonal and between the systems (d, n) and (n, d), 0 elsewhere. With
# dt = 0.5: A = I + P (P the pairing 0-3, 1-5, 2-4 of the generated order). The
# orientation does not enter A.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_MRP_names = 'orientation'
    input_MRP_values = 'q'
    input_Scalar_names = 't t~1'
    input_Scalar_values = '1.5 1.0'
    output_Scalar_names = 'coupling'
    output_Scalar_values = 'A'
  []
[]

[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = 'sdirs'
    slip_planes = 'splanes'
  []
[]

[Tensors]
  [sdirs]
    type = Python
    expr = 'MillerIndex(torch.tensor([1, 0, 0], dtype=torch.int64))'
  []
  [splanes]
    type = Python
    expr = 'MillerIndex(torch.tensor([0, 1, 0], dtype=torch.int64))'
  []
  [q]
    type = Python
    expr = 'MRP(torch.tensor([0.1, -0.2, 0.05], dtype=torch.float64))'
  []
  [C]
    type = Python
    expr = 'SSR4(4.0 * torch.eye(6, dtype=torch.float64) + torch.nn.functional.pad(torch.full((3, 3), 3.0, dtype=torch.float64), (0, 3, 0, 3)))'
  []
  [A]
    type = Python
    expr = '''Scalar(torch.tensor([[1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
                                   [0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                                   [0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                                   [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
                                   [0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                                   [0.0, 1.0, 0.0, 0.0, 0.0, 1.0]], dtype=torch.float64),
                     sub_batch_ndim=2)'''
  []
[]

[Models]
  [model]
    type = SlipSystemElasticInteraction
    elastic_stiffness_tensor = 'C'
  []
[]
