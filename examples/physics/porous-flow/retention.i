# Capillary pressure against saturation (a retention curve): the van Genuchten and
# Brooks-Corey correlations of the effective saturation, each plain and with the
# logarithmic extension that keeps it finite as the fluid fraction goes to zero.
#   uv run neml2-inspect examples/physics/porous-flow/retention.i retention_extended
# Units: kPa; fractions are volume fractions.

[Models]
  # fluid fraction phi -> S = (phi / phi_max - Sr) / (1 - Sr), with the porosity
  # phi_max = 0.3 and the residual saturation Sr = 0.1
  [effective_saturation]
    type = EffectiveSaturation
    fluid_fraction = 'fluid_fraction'
    residual_saturation = 0.1
    max_fraction = 0.3
    effective_saturation = 'S'
  []
  # Pc = a (S^(-1/m) - 1)^(1 - m), a = 10 kPa, m = 0.6
  [van_genuchten]
    type = VanGenuchtenCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc_vg'
    a = 10
    m = 0.6
  []
  # Pc = Pt S^(-1/p), the entry pressure Pt = 5 kPa, p = 2
  [brooks_corey]
    type = BrooksCoreyCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc_bc'
    threshold_pressure = 5
    exponent = 2
  []
  # the same, continued below S = 0.1 by log(Pc) linear in S
  [van_genuchten_extended]
    type = VanGenuchtenCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc_vg_extended'
    a = 10
    m = 0.6
    log_extension = true
    transition_saturation = 0.1
  []
  [brooks_corey_extended]
    type = BrooksCoreyCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc_bc_extended'
    threshold_pressure = 5
    exponent = 2
    log_extension = true
    transition_saturation = 0.1
  []
  # defined above the residual saturation only (S > 0)
  [retention]
    type = ComposedModel
    models = 'effective_saturation van_genuchten brooks_corey'
    additional_outputs = 'S'
  []
  # defined down to a dry medium
  [retention_extended]
    type = ComposedModel
    models = 'effective_saturation van_genuchten_extended brooks_corey_extended'
    additional_outputs = 'S'
  []
[]
