# Norton creep of a steel at 900 K, from the NortonCreepRate plugin of tutorial 6.
# Units: MPa, s, J/mol, K. Illustrative constants, not fitted to any material.
#   neml2-run examples/tutorials/6-custom-model/creep.i unit
[Models]
  [creep]
    type = NortonCreepRate
    A = 1.0
    n = 5
    Q = 300e3
  []
[]

[Tensors]
  [uniaxial_stress]
    type = Python
    expr = 'SR2.fill(100, 0, 0, 0, 0, 0)'
  []
  [uniaxial_rate]
    # axial: A exp(-Q / (R T)) sigma^n; lateral: minus half of it
    type = Python
    expr = 'SR2.fill(3.8796566556660485e-08, -1.9398283278330242e-08, -1.9398283278330242e-08, 0, 0, 0)'
  []
[]

[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'creep'
    input_SR2_names = 'stress'
    input_SR2_values = 'uniaxial_stress'
    input_Scalar_names = 'temperature'
    input_Scalar_values = '900'
    output_SR2_names = 'creep_strain_rate'
    output_SR2_values = 'uniaxial_rate'
    # the rates are ~1e-8 /s and their derivatives ~1e-10: the default absolute
    # tolerances (1e-8) would pass anything, so compare relatively only
    value_abs_tol = 0
    derivative_abs_tol = 0
    verbose = true
  []
[]
