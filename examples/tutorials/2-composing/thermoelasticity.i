# Tutorial 2: thermoelasticity, composed from three explicit models.
#   strain, temperature -> stress
#   uv run neml2-inspect examples/tutorials/2-composing/thermoelasticity.i thermoelasticity
# Units: MPa, K.
[Models]
  # temperature -> eigenstrain = CTE (temperature - T0) I
  [thermal_strain]
    type = ThermalEigenstrain
    reference_temperature = 300
    CTE = 1e-5
  []
  # strain, eigenstrain -> elastic_strain = strain - eigenstrain
  [mechanical_strain]
    type = SR2LinearCombination
    from = 'strain eigenstrain'
    weights = '1 -1'
    to = 'elastic_strain'
  []
  # elastic_strain -> stress (its input renamed from the default 'strain')
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [thermoelasticity]
    type = ComposedModel
    models = 'thermal_strain mechanical_strain elasticity'
  []
[]
