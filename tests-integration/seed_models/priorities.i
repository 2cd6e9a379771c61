# Two providers of y in one ComposedModel: the "low" guess and the "high" correction
# (output priorities of the seed's contract); the high one runs last and wins, and
# w = 2 y + x reads the winning y.
[Models]
  [guess]
    type = SeedLowGuess
  []
  [correction]
    type = SeedHighCorrection
  []
  [square]
    type = ScalarLinearCombination
    from = 'y x'
    to = 'w'
    weights = '2 1'
  []
  [model]
    type = ComposedModel
    models = 'guess correction square'
    additional_outputs = 'y'
  []
[]
