# Tutorial 2: the rates of Perzyna viscoplasticity with Voce hardening as one
# explicit model: from the stress and the equivalent plastic strain to the
# plastic strain rate and the equivalent plastic strain rate (no time
# integration, no solve).
#   uv run neml2-inspect examples/tutorials/2-composing/viscoplastic_rates.i rates
# Units: MPa, seconds.
[Models]
  # stress -> mandel_stress (the Mandel stress is the Cauchy stress at small strain)
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  # mandel_stress -> effective_stress (von Mises)
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  # equivalent_plastic_strain -> isotropic_hardening
  [voce]
    type = VoceIsotropicHardening
    saturated_hardening = 150
    saturation_rate = 30
  []
  # effective_stress, isotropic_hardening -> yield_function
  [yield_surface]
    type = YieldFunction
    yield_stress = 200
    isotropic_hardening = 'isotropic_hardening'
  []
  # the yield function of the Mandel stress (a composition used by 'normality')
  [yield_of_stress]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  # mandel_stress, isotropic_hardening -> flow_direction, isotropic_hardening_direction
  [normality]
    type = Normality
    model = 'yield_of_stress'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  # yield_function -> flow_rate
  [perzyna]
    type = PerzynaPlasticFlowRate
    reference_stress = 50
    exponent = 4
  []
  # flow_rate, flow_direction -> plastic_strain_rate
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  # flow_rate, isotropic_hardening_direction -> equivalent_plastic_strain_rate
  [hardening_flow]
    type = AssociativeIsotropicPlasticHardening
  []
  [rates]
    type = ComposedModel
    models = 'mandel_stress vonmises voce yield_surface normality perzyna plastic_flow hardening_flow'
  []
[]
