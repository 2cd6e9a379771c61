# A Gaussian pulse advected and diffused on [0, 1.25]: du/dt = -dJ/dx with the flux
# J = v u - D du/dx (upwinded advection, centered diffusion), no flux through either
# end, backward Euler in time.
#   uv run neml2-run examples/physics/finite-volume/pulse.i pulse
# Nondimensional units.

D = 0.01
v = 0.5
cells = 200
steps = 161

[Tensors]
  # the grid: 'cells' cells on [0, 1.25]; the cell axis is a sub-batch axis
  [edges]
    type = Python
    expr = 'linspace(Scalar(0.0).sub_batch, Scalar(1.25).sub_batch, ${cells} + 1)'
  []
  [centers]
    type = Python
    expr = 'Scalar(0.5 * (edges.data[..., 1:] + edges.data[..., :-1]), sub_batch_ndim=1)'
  []
  [dx]
    type = Python
    expr = 'Scalar(edges.data[..., 1:] - edges.data[..., :-1], sub_batch_ndim=1)'
  []
  [dx_centers]
    type = Python
    expr = 'Scalar(centers.data[..., 1:] - centers.data[..., :-1], sub_batch_ndim=1)'
  []
  # the initial pulse: height 1, width 0.05, centered at x = 0.25
  [u0]
    type = Python
    expr = 'Scalar(torch.exp(-0.5 * ((centers.data - 0.25) / 0.05) ** 2), sub_batch_ndim=1)'
  []
  [times]
    type = Python
    expr = 'linspace(Scalar(0.0), Scalar(1.0), ${steps})'
  []
[]

[Models]
  # -D du/dx at the interior edges (FiniteVolumeGradient: -p (u_{i+1} - u_i) / dx)
  [diffusive_flux]
    type = FiniteVolumeGradient
    u = 'u'
    prefactor = ${D}
    dx = 'dx_centers'
    grad_u = 'J_diffusion'
  []
  # the velocity, the same on every edge (a Scalar without an edge axis)
  [velocity]
    type = ScalarConstantParameter
    value = ${v}
    parameter = 'v_edge'
  []
  # v u at the interior edges, u taken from the upwind cell
  [advective_flux]
    type = FiniteVolumeUpwindedAdvectiveFlux
    u = 'u'
    v_edge = 'v_edge'
    flux = 'J_advection'
  []
  [total_flux]
    type = ScalarLinearCombination
    from = 'J_diffusion J_advection'
    weights = '1 1'
    to = 'J'
  []
  # zero flux through x = 0 and x = 1.25: N + 1 edge fluxes
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
  # du/dt = -(J_{i+1} - J_i) / dx_i
  [divergence]
    type = FiniteVolumeGradient
    u = 'J_with_bc_left_with_bc_right'
    dx = 'dx'
    grad_u = 'u_rate'
  []
  [integrate_u]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'u'
  []
  [residual]
    type = ComposedModel
    models = 'diffusive_flux velocity advective_flux total_flux left_bc right_bc divergence
              integrate_u'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'u'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'transport'
    solver = 'newton'
    predictor = 'predictor'
  []
[]

[EquationSystems]
  [transport]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'u'
  []
[]

[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Drivers]
  [pulse]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    ic_Scalar_names = 'u'
    ic_Scalar_values = 'u0'
  []
[]
