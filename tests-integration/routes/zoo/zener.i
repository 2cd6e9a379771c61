# Route-matrix zoo: a Zener (standard linear solid) element, explicit.
# Option values from the conformance unit test
# models/solid_mechanics/viscoelasticity/ZenerElement.i (NEML2 v3, MIT license).
[Models]
  [model]
    type = ZenerElement
    equilibrium_modulus = 1000
    maxwell_modulus = 500
    maxwell_viscosity = 100
  []
[]
