# Sample operating point for Normality (no reference unit test), wrapping the J2 flow
# f = sqrt(2/3) (s_vm(M) - sy - h) as in the rate-independent regression inputs.
# By hand, with M = fill(150, -30, 60, 20, -40, 10):
#   tr M = 180, dev M = fill(90, -90, 0, 20, -40, 10),
#   dev:dev = 90^2 + 90^2 + 0 + 2 (20^2 + 40^2 + 10^2) = 20400, s_vm = sqrt(1.5 * 20400),
#   df/dM = sqrt(2/3) * 1.5 dev M / s_vm = sqrt(1.5) dev M / sqrt(30600)   (as fill args),
#   df/dh = -sqrt(2/3).
# Second derivatives of Normality's outputs would need third derivatives of f, which the
# model does not provide: check_second_derivatives stays off here.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'normality'
    input_SR2_names = 'mandel_stress'
    input_SR2_values = 'M'
    input_Scalar_names = 'isotropic_hardening'
    input_Scalar_values = '20'
    output_SR2_names = 'flow_direction'
    output_SR2_values = 'NM'
    output_Scalar_names = 'isotropic_hardening_direction'
    output_Scalar_values = 'Nh'
  []
[]

[Tensors]
  [M]
    type = Python
    expr = 'SR2.fill(150.0, -30.0, 60.0, 20.0, -40.0, 10.0)'
  []
  [NM]
    type = Python
    expr = 'SR2.fill(90.0, -90.0, 0.0, 20.0, -40.0, 10.0) * (math.sqrt(1.5) / math.sqrt(30600.0))'
  []
  [Nh]
    type = Python
    expr = 'Scalar(-math.sqrt(2.0 / 3.0))'
  []
[]

[Models]
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 100
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
[]
