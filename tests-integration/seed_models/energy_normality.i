# SeedThermalEnergy (explicit, with second-order actions) inside a Normality: the stress
# is d psi / d strain and the entropy-like term d psi / d T; the Jacobian of the model
# needs the energy's second-order tangents.
[Models]
  [energy]
    type = SeedThermalEnergy
    c = 1e3
    a = -2e-3
  []
  [model]
    type = Normality
    model = 'energy'
    function = 'energy'
    from = 'strain temperature'
    to = 'stress entropy'
  []
[]
