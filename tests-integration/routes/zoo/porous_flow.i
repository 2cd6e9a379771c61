# Route-matrix zoo: porous flow. Option values from the reference library's unit tests
# models/porous_flow/{EffectiveSaturation,VanGenuchtenCapillaryPressure,KozenyCarmanPermeability}.i
# composed into one model: fluid fraction -> effective saturation -> capillary pressure
# (with its log extension below the transition saturation), porosity -> permeability.
[Models]
  [saturation]
    type = EffectiveSaturation
    residual_saturation = 0.0
    fluid_fraction = 'phi'
    max_fraction = 'phimax'
    effective_saturation = 'S'
  []
  [capillary]
    type = VanGenuchtenCapillaryPressure
    a = 0.333333333333333
    m = 0.7
    effective_saturation = 'S'
    capillary_pressure = 'Pc'
    log_extension = true
    transition_saturation = 0.1
  []
  [permeability]
    type = KozenyCarmanPermeability
    reference_permeability = 3
    reference_porosity = 'phi0'
    n = 0.8
    m = 'm'
    porosity = 'phi'
    permeability = 'K'
  []
  [model]
    type = ComposedModel
    models = 'saturation capillary permeability'
    additional_outputs = 'S'
  []
[]
