# Route-matrix zoo: the Gurson-Tvergaard-Needleman yield function with isotropic
# hardening, explicit (stress invariants, hardening and void fraction as inputs).
# Option values from the conformance unit test
# models/solid_mechanics/plasticity/GTNYieldFunction.i (NEML2 v3, MIT license).
[Models]
  [model]
    type = GTNYieldFunction
    yield_stress = 50
    q1 = 1.5
    q2 = 1.0
    q3 = 2.25
    isotropic_hardening = 'isotropic_hardening'
  []
[]
