# SeedLinearElasticity (an explicit leaf of the seed's contract) with its modulus promoted
# to an input: E is another model's output (a temperature-dependent modulus).
[Models]
  [modulus]
    type = ScalarLinearCombination
    from = 'T'
    to = 'E'
    weights = '-50'
    offset = 2e5
  []
  [elastic]
    type = SeedLinearElasticity
    E = 'modulus'
    nu = 0.3
  []
  [model]
    type = ComposedModel
    models = 'modulus elastic'
  []
[]
