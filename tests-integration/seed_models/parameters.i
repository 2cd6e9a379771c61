# SeedAffine: a parameter from a HIT literal (a), a [Tensors] name (b), another model's
# output (c, from 'curvature') and a free input variable (d); 'offset' a typed buffer.
[Tensors]
  [intercept]
    type = Python
    expr = 'Scalar(0.25)'
  []
[]
[Models]
  [curvature]
    type = ScalarLinearCombination
    from = 'z'
    to = 'k'
    weights = '0.5'
  []
  [affine]
    type = SeedAffine
    a = 1.5
    b = 'intercept'
    c = 'curvature'
    d = 'shift'
    offset = '0.125'
  []
  [model]
    type = ComposedModel
    models = 'curvature affine'
  []
[]
