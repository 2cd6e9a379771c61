# Tutorial 8: phase-field fracture at one material point. A regularized brittle
# material (AT2 crack function by default, AT1 by override) stretched under uniaxial
# strain; the phase field d solves the rate-independent, irreversible evolution law at
# every step.
#   uv run neml2-run examples/tutorials/8-phase-field-fracture/point.i monotonic
#   uv run neml2-run examples/tutorials/8-phase-field-fracture/point.i monotonic \
#     Models/crack/type=CrackGeometricFunctionAT1 c0=2.6666666666666665
# Units: N, mm, MPa, seconds.

# the fracture toughness Gc (N/mm), the regularization length l (mm) and the
# normalization c0 of the crack function (2 for AT2, 8/3 for AT1)
Gc = 0.1
l = 1.0
c0 = 2

[Tensors]
  # 41 times from 0 to 1 s and a uniaxial strain (e, 0, 0, 0, 0, 0), e from 0 to 0.4 %
  [times]
    type = Python
    expr = 'linspace(Scalar(0.0), Scalar(1.0), 41)'
  []
  [strains]
    type = Python
    expr = 'linspace(SR2.fill(0.0), SR2.fill(0.004, 0.0, 0.0), 41)'
  []
  # loading to 0.15 %, unloading to 0 and reloading to 0.3 %, in steps of 0.01 %
  [cycle_times]
    type = Python
    expr = 'linspace(Scalar(0.0), Scalar(2.0), 61)'
  []
  [cycle_strains]
    type = Python
    expr = 'SR2.fill(1.0, 0.0, 0.0) * Scalar(torch.cat([torch.linspace(0.0, 0.0015, 16),
            torch.linspace(0.0015, 0.0, 16)[1:], torch.linspace(0.0, 0.003, 31)[1:]]))'
  []
[]

[Models]
  # ---- the energy density psi(strain, d) -------------------------------------------
  # d -> g = (1 - d)^2, the degradation of the stiffness
  [degradation]
    type = PowerDegradationFunction
    phase = 'd'
    degradation = 'g'
    power = 2
  []
  # strain -> psi+ and psi-: the strain energy density split into its tensile
  # (active, degraded) and compressive (inactive) parts, volumetric-deviatoric
  [elastic_energy]
    type = LinearIsotropicStrainEnergyDensity
    strain = 'strain'
    coefficients = '30e3 0.2'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    decomposition = 'VOLDEV'
    active_strain_energy_density = 'psi_active'
    inactive_strain_energy_density = 'psi_inactive'
  []
  # g, psi+ -> g psi+
  [degraded_energy]
    type = ScalarMultiplication
    from = 'g psi_active'
    to = 'psi_degraded'
  []
  # d -> alpha = d^2 (AT2), the crack geometric function
  [crack]
    type = CrackGeometricFunctionAT2
    phase = 'd'
    crack = 'alpha'
  []
  # psi = Gc / (c0 l) alpha + g psi+ + psi-
  [total_energy]
    type = ScalarLinearCombination
    from = 'alpha psi_degraded psi_inactive'
    weights = '${fparse Gc / (c0 * l)} 1 1'
    to = 'psi'
  []
  [energy]
    type = ComposedModel
    models = 'degradation elastic_energy degraded_energy crack total_energy'
  []

  # ---- the residual: the evolution law of d over one step ----------------------------
  # strain, d -> dpsi_dd, the derivative of the energy with respect to d
  [driving_force]
    type = Normality
    model = 'energy'
    function = 'psi'
    from = 'd'
    to = 'dpsi_dd'
  []
  # d, d~1, t, t~1 -> d_rate = (d - d~1) / (t - t~1)
  [d_rate]
    type = ScalarVariableRate
    variable = 'd'
  []
  # dpsi_dd >= 0, d_rate >= 0, dpsi_dd d_rate = 0 (Fischer-Burmeister): d grows only
  # while the energy would decrease, and never heals
  [irreversible_evolution]
    type = FBComplementarity
    a = 'dpsi_dd'
    a_inequality = 'GE'
    b = 'd_rate'
    b_inequality = 'GE'
    complementarity = 'd_residual'
  []
  [residual]
    type = ComposedModel
    models = 'driving_force d_rate irreversible_evolution'
  []

  # ---- the update and the material model --------------------------------------------
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'd'
  []
  [solve_d]
    type = ImplicitUpdate
    equation_system = 'evolution'
    solver = 'newton'
    predictor = 'predictor'
  []
  # strain, d -> stress = dpsi / dstrain = g C : strain (in tension)
  [stress]
    type = Normality
    model = 'energy'
    function = 'psi'
    from = 'strain'
    to = 'stress'
  []
  [model]
    type = ComposedModel
    models = 'solve_d stress'
    additional_outputs = 'd'
  []
[]

[EquationSystems]
  [evolution]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'd'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-12
    rel_tol = 1e-10
    max_its = 50
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Drivers]
  [monotonic]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
  [cycle]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'cycle_times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'cycle_strains'
  []
[]
