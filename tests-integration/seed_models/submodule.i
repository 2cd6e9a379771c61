# SeedScaled wraps the [Models] block 'cubic' as a submodule (registered under its block
# name): y = 3 * (x + x^3 / 3).
[Models]
  [cubic]
    type = SeedHighCorrection
    y = 'u'
  []
  [model]
    type = SeedScaled
    model = 'cubic'
    factor = 3.0
  []
[]
