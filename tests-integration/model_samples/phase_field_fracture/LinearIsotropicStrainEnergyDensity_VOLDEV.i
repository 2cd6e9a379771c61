# Sample operating point for LinearIsotropicStrainEnergyDensity with the VOLDEV split
# (the reference unit test covers NONE only). E = 25.84e3, nu = 0.18:
#   K = E / (3 (1 - 2 nu)) = 22690.58..., G = E / (2 (1 + nu)) = 10949.15...
# point 1 (tr = +0.011, tension):     psi+ = K tr^2 / 2 + G dev:dev, psi- = 0
# point 2 (tr = -0.011, compression): psi+ = G dev:dev,             psi- = K tr^2 / 2
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'E'
    input_SR2_values = 'E'
    output_Scalar_names = 'psi_a psi_i'
    output_Scalar_values = 'psi_a psi_i'
    check_second_derivatives = true
  []
[]

[Tensors]
  [E]
    type = Python
    expr = '''SR2.fill(torch.tensor([0.01, -0.01]), torch.tensor([-0.002, 0.002]),
                       torch.tensor([0.003, -0.003]), torch.tensor([0.001, 0.001]),
                       torch.tensor([-0.002, 0.002]), torch.tensor([0.004, -0.004]))'''
  []
  [psi_a]
    type = Python
    expr = 'Scalar([2.0697319915254235, 1.2555028248587572])'
  []
  [psi_i]
    type = Python
    expr = 'Scalar([0.0, 0.8142291666666666])'
  []
[]

[Models]
  [model]
    type = LinearIsotropicStrainEnergyDensity
    strain = 'E'
    active_strain_energy_density = 'psi_a'
    inactive_strain_energy_density = 'psi_i'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    coefficients = '25.84e3 0.18'
    decomposition = 'VOLDEV'
  []
[]
