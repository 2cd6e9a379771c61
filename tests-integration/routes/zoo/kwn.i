# Route-matrix zoo: KWN precipitation. The explicit growth part of the reference library's
# regression regression/kwn/growth-only-scaled (same models and option values, Cu in Al at
# 300 K) on 8 size bins instead of 100: number density per bin -> precipitate volume
# fraction -> matrix concentration -> driving force and projected diffusivity -> SFFK growth
# rate per bin. The bin axis is the sub-batch axis.
x0_Cu = 0.01738
T = 300.0
xp_Cu = 3.333291e-01
diff_FCC_Cu = 3.333270e-01
D = 297794

[Tensors]
  [edges]
    type = Python
    expr = 'linspace(Scalar(0.0).sub_batch, Scalar(1.0).sub_batch, 9)'
  []
  [centers]
    type = Python
    expr = 'Scalar(0.5 * (edges.data[..., :-1] + edges.data[..., 1:]), sub_batch_ndim=1)'
  []
  [scale_factor]
    type = Python
    expr = 'Scalar(5.0)'
  []
  [true_centers]
    type = Python
    expr = 'Scalar(scale_factor.data * centers.data / (1.0 - centers.data), sub_batch_ndim=1)'
  []
  [x0_Cu]
    type = Python
    expr = 'Scalar(torch.tensor(${x0_Cu}, dtype=torch.float64))'
  []
  [xp_Cu]
    type = Python
    expr = 'Scalar(torch.tensor(${xp_Cu}, dtype=torch.float64))'
  []
  [X_Cu_vary]
    type = Python
    expr = 'Scalar(torch.tensor([1e-10, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.055, 0.06, 0.065, 0.07, 0.075, 0.08, 0.085, 0.09, 0.095], dtype=torch.float64), sub_batch_ndim=1)'
  []
  [chem_diff]
    type = Python
    expr = 'Scalar(torch.tensor([-8296.144765949808, 4829.582140453559, 4829.582140453546, 4829.582140453556, 4829.582140453537, 4829.582140453549, 4829.5821404535445, 4829.5821404535445, 4829.582140453554, 4829.582140453549, 4829.582140453542, 4829.582140453542, 4829.582140453532, 4829.582140453542, 4829.582140453554, 4829.5821404535445, 4829.582140453552, 4829.582140453537, 4829.5821404535445, 4829.582140453542], dtype=torch.float64), sub_batch_ndim=1)'
  []
[]

[Models]
  [input_temperature]
    type = ScalarConstantParameter
    value = ${T}
    parameter = 'forces/T'
  []
  [volume_fraction]
    type = PrecipitateVolumeFraction
    radius = 'true_centers'
    number_density = 'number_density'
    volume_fraction = 'vf'
  []
  [x_Cu]
    type = CurrentConcentration
    initial_concentration = 'x0_Cu'
    precipitate_volume_fractions = 'vf'
    precipitate_concentrations = 'xp_Cu'
    current_concentration = 'x_Cu'
  []
  [chemical_potential_difference]
    type = ScalarLinearInterpolation
    argument = 'x_Cu'
    abscissa = 'X_Cu_vary'
    ordinate = 'chem_diff'
  []
  [diffusivity_sum]
    type = ProjectedDiffusivitySum
    concentration_differences = ${diff_FCC_Cu}
    diffusivities = ${D}
    far_field_concentrations = 'x_Cu'
    projected_diffusivity_sum = 'diff_sum'
  []
  [growth_rate]
    type = SFFKPrecipitationGrowthRate
    radius = 'true_centers'
    projected_diffusivity_sum = 'diff_sum'
    gibbs_free_energy_difference = chemical_potential_difference
    temperature = 'forces/T'
    gas_constant = 8.314
    growth_rate = 'growth_rate'
  []
  [model]
    type = ComposedModel
    models = 'input_temperature volume_fraction x_Cu diffusivity_sum growth_rate'
    additional_outputs = 'vf x_Cu'
  []
[]
