# KWN precipitation: nucleation and growth of a precipitate size distribution.
# n(R, t), the number of precipitates per unit volume and unit radius, is advected
# along R at the diffusion-limited growth rate dR/dt = D (x - x_eq) / (R (x_p - x_eq)),
# new precipitates appear in the smallest bin at a rate proportional to the
# supersaturation, J = J0 (x - x_eq) / (x0 - x_eq), and the matrix loses its solute,
# x = (x0 - f x_p) / (1 - f), to the volume fraction f of the precipitates, until the
# lever rule f_eq = (x0 - x_eq) / (x_p - x_eq).
#   uv run neml2-run examples/physics/kwn/precipitation.i precipitation
# Units: nm, s; concentrations are mole fractions.

x0 = 0.02
x_eq = 0.005
x_p = 0.25
D = 5.0
J0 = 1e-8
bins = 160
steps = 81

[Tensors]
  # 'bins' size bins (cells) from R = 0 to 40 nm: the bin axis is a sub-batch axis
  [edges]
    type = Python
    expr = 'linspace(Scalar(0.0).sub_batch, Scalar(40.0).sub_batch, ${bins} + 1)'
  []
  [R]
    type = Python
    expr = 'Scalar(0.5 * (edges.data[..., 1:] + edges.data[..., :-1]), sub_batch_ndim=1)'
  []
  [dR]
    type = Python
    expr = 'Scalar(edges.data[..., 1:] - edges.data[..., :-1], sub_batch_ndim=1)'
  []
  # no precipitates at first
  [n0]
    type = Python
    expr = 'Scalar(torch.zeros(${bins}), sub_batch_ndim=1)'
  []
  # 80 steps from 0 to 3000 s, closer together at the start
  [times]
    type = Python
    expr = 'Scalar(3000.0 * torch.linspace(0.0, 1.0, ${steps}) ** 2)'
  []
[]

[Models]
  # n -> N_i = n_i dR_i, the number per unit volume in each bin
  [number_per_bin]
    type = ScalarMultiplication
    from = 'n'
    scaling = 'dR'
    to = 'N'
  []
  # N -> f = sum_i 4/3 pi R_i^3 N_i
  [volume_fraction]
    type = PrecipitateVolumeFraction
    radius = 'R'
    number_density = 'N'
    volume_fraction = 'f'
  []
  # f -> x, the solute left in the matrix
  [matrix_concentration]
    type = CurrentConcentration
    initial_concentration = ${x0}
    precipitate_volume_fractions = 'f'
    precipitate_concentrations = ${x_p}
    current_concentration = 'x'
  []
  # x -> dR/dt in every bin
  [growth]
    type = RateLimitedPrecipitateGrowthRate
    radius = 'R'
    current_concentration = 'x'
    equilibrium_concentration = ${x_eq}
    concentration_difference = ${fparse x_p - x_eq}
    diffusivity = ${D}
    growth_rate = 'growth_rate'
  []
  # the growth rate at the interior bin edges, and the upwinded flux n dR/dt there
  [edge_velocity]
    type = LinearlyInterpolateToCellEdges
    cell_values = 'growth_rate'
    cell_centers = 'R'
    cell_edges = 'edges'
    edge_values = 'v_edge'
  []
  [flux]
    type = FiniteVolumeUpwindedAdvectiveFlux
    u = 'n'
    v_edge = 'v_edge'
    flux = 'J'
  []
  # no flux through R = 0 nor through R = 40 nm
  [left_bc]
    type = FiniteVolumeAppendBoundaryCondition
    input = 'J'
    bc_value = 0.0
    side = 'left'
  []
  [right_bc]
    type = FiniteVolumeAppendBoundaryCondition
    input = 'J_with_bc_left'
    bc_value = 0.0
    side = 'right'
  []
  # -dJ/dR, cell by cell
  [divergence]
    type = FiniteVolumeGradient
    u = 'J_with_bc_left_with_bc_right'
    dx = 'dR'
    grad_u = 'transport'
  []
  # x -> the nucleation rate J0 (x - x_eq) / (x0 - x_eq), per unit radius of the
  # smallest bin (0.25 nm wide)
  [nucleation_rate]
    type = ScalarLinearCombination
    from = 'x'
    weights = '${fparse J0 / (40 / bins * (x0 - x_eq))}'
    offset = '${fparse -J0 * x_eq / (40 / bins * (x0 - x_eq))}'
    to = 'nucleation'
  []
  # the new precipitates go into the smallest bin
  [nucleation]
    type = DumpInSmallestBin
    magnitude = 'nucleation'
    cell_centers = 'R'
    dumped_source = 'source'
  []
  # dn/dt = -dJ/dR + source
  [n_rate]
    type = ScalarLinearCombination
    from = 'transport source'
    to = 'n_rate'
  []
  [integrate_n]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'n'
  []
  [residual]
    type = ComposedModel
    models = 'number_per_bin volume_fraction matrix_concentration growth edge_velocity flux
              left_bc right_bc divergence nucleation_rate nucleation n_rate integrate_n'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'n'
  []
  [solve_n]
    type = ImplicitUpdate
    equation_system = 'kwn'
    solver = 'newton'
    predictor = 'predictor'
  []
  # the update, then the volume fraction, the matrix concentration and the
  # nucleation rate of the converged distribution
  [model]
    type = ComposedModel
    models = 'solve_n number_per_bin volume_fraction matrix_concentration nucleation_rate'
    additional_outputs = 'n f x'
  []
[]

[EquationSystems]
  [kwn]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'n'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-16
    rel_tol = 1e-10
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Drivers]
  [precipitation]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    ic_Scalar_names = 'n'
    ic_Scalar_values = 'n0'
  []
[]
