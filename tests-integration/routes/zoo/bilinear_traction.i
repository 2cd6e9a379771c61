# Route-matrix zoo: bilinear cohesive traction with irreversible damage, explicit;
# onset and failure separations are inputs, as in the conformance unit test
# models/solid_mechanics/traction_separation_law/BilinearTraction.i (NEML2 v3, MIT
# license), whose option values these are.
[Models]
  [model]
    type = BilinearTraction
    critical_separation = 'critical_separation'
    full_separation = 'full_separation'
    normal_penetration = 'normal_penetration'
    penalty_stiffness = 1000.0
  []
[]
