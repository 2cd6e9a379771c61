# Multiplicative (F = Fe Fp) single-crystal plasticity, solved for tauc and Fp, with
# three ImplicitUpdates that differ only in their predictor (the initial guess):
#   model_old   Fp and tauc start from their previous values (ConstantExtrapolationPredictor)
#   model_fp    Fp from CrystalPlasticityDeformationGradientPredictor, tauc from tauc~1
#   model_ref   the Fp predictor alone, its block written as in the reference library's
#               docs (tauc, which it does not predict, then starts from zero)
# A predictor moves only Newton's starting point (test_cp_fp_predictor.py):
#   fine    20 steps of <= 0.3 %, four crystals of different orientations and loads:
#           model_old and model_fp converge to the same history.
#   coarse  10 steps of up to 0.6 %, four crystals of one orientation: the frozen-Fp
#           trial over-stresses so much that model_old does not converge; model_fp and
#           model_ref do, to the same history.
[Tensors]
  # F from I to amp[b] G in equal steps over t in [0, 1]
  [G]
    type = Python
    expr = 'R2(torch.tensor([[0.04, 0.0, 0.06], [0.0, -0.02, 0.0], [0.0, 0.0, -0.01]], dtype=torch.float64))'
  []
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 21, dtype=torch.float64).reshape(21, 1).expand(21, 4).contiguous())'
  []
  [F]
    type = Python
    expr = 'amp = torch.tensor([0.25, 0.5, 0.75, 1.0], dtype=torch.float64).reshape(1, 4, 1, 1)
s = torch.linspace(0.0, 1.0, 21, dtype=torch.float64).reshape(21, 1, 1, 1)
result = R2((torch.eye(3, dtype=torch.float64) + s * amp * G.data).contiguous())'
  []
  # one orientation per crystal, constant in time, shape (21, 4, 3)
  [r]
    type = Python
    expr = 'r0 = torch.tensor([[0.1, -0.05, 0.02], [0.0, 0.2, -0.1], [-0.15, 0.05, 0.1], [0.05, 0.05, 0.3]], dtype=torch.float64)
result = MRP(r0.reshape(1, 4, 3).expand(21, 4, 3).contiguous())'
  []
  [times_coarse]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 11, dtype=torch.float64).reshape(11, 1).expand(11, 4).contiguous())'
  []
  [F_coarse]
    type = Python
    expr = 'amp = torch.tensor([0.7, 0.8, 0.9, 1.0], dtype=torch.float64).reshape(1, 4, 1, 1)
s = torch.linspace(0.0, 1.0, 11, dtype=torch.float64).reshape(11, 1, 1, 1)
result = R2((torch.eye(3, dtype=torch.float64) + s * amp * G.data).contiguous())'
  []
  [r_coarse]
    type = Python
    expr = 'MRP(torch.tensor([0.15, -0.08, 0.03], dtype=torch.float64).reshape(1, 1, 3).expand(11, 4, 3).contiguous())'
  []
  [Fp0]
    type = Python
    expr = 'R2.identity()'
  []
  [a]
    type = Python
    expr = 'Scalar(1.0)'
  []
  [sdirs]
    type = Python
    expr = 'MillerIndex(torch.tensor([1, 1, 0], dtype=torch.int64))'
  []
  [splanes]
    type = Python
    expr = 'MillerIndex(torch.tensor([1, 1, 1], dtype=torch.int64))'
  []
[]

[Drivers]
  [fine_old]
    type = TransientDriver
    model = 'stress_old'
    prescribed_time = 'times'
    prescribed_R2_names = 'F'
    prescribed_R2_values = 'F'
    prescribed_MRP_names = 'r'
    prescribed_MRP_values = 'r'
    ic_R2_names = 'Fp'
    ic_R2_values = 'Fp0'
    ic_Scalar_names = 'tauc'
    ic_Scalar_values = '0'
  []
  [fine_fp]
    type = TransientDriver
    model = 'stress_fp'
    prescribed_time = 'times'
    prescribed_R2_names = 'F'
    prescribed_R2_values = 'F'
    prescribed_MRP_names = 'r'
    prescribed_MRP_values = 'r'
    ic_R2_names = 'Fp'
    ic_R2_values = 'Fp0'
    ic_Scalar_names = 'tauc'
    ic_Scalar_values = '0'
  []
  [coarse_old]
    type = TransientDriver
    model = 'stress_old'
    prescribed_time = 'times_coarse'
    prescribed_R2_names = 'F'
    prescribed_R2_values = 'F_coarse'
    prescribed_MRP_names = 'r'
    prescribed_MRP_values = 'r_coarse'
    ic_R2_names = 'Fp'
    ic_R2_values = 'Fp0'
    ic_Scalar_names = 'tauc'
    ic_Scalar_values = '0'
  []
  [coarse_fp]
    type = TransientDriver
    model = 'stress_fp'
    prescribed_time = 'times_coarse'
    prescribed_R2_names = 'F'
    prescribed_R2_values = 'F_coarse'
    prescribed_MRP_names = 'r'
    prescribed_MRP_values = 'r_coarse'
    ic_R2_names = 'Fp'
    ic_R2_values = 'Fp0'
    ic_Scalar_names = 'tauc'
    ic_Scalar_values = '0'
  []
  [coarse_ref]
    type = TransientDriver
    model = 'stress_ref'
    prescribed_time = 'times_coarse'
    prescribed_R2_names = 'F'
    prescribed_R2_values = 'F_coarse'
    prescribed_MRP_names = 'r'
    prescribed_MRP_values = 'r_coarse'
    ic_R2_names = 'Fp'
    ic_R2_values = 'Fp0'
    ic_Scalar_names = 'tauc'
    ic_Scalar_values = '0'
  []
[]

[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 'a'
    slip_directions = 'sdirs'
    slip_planes = 'splanes'
  []
[]

[Models]
  [orientation]
    type = RotationMatrix
    from = 'r'
    to = 'R'
  []
  [slip_strength]
    type = SingleSlipStrengthMap
    constant_strength = 50.0
    slip_hardening = 'tauc'
    slip_strengths = 'tauc_i'
  []
  [hardening]
    type = VoceSingleSlipHardeningRule
    initial_slope = 500.0
    saturated_hardening = 50.0
    slip_hardening = 'tauc'
    sum_slip_rates = 'gamma_rate'
    slip_hardening_rate = 'tauc_rate'
  []
  # Fe = F Fp^-1, Green-Lagrange strain, St. Venant-Kirchhoff PK2 stress
  [Fe]
    type = R2Multiplication
    A = 'F'
    B = 'Fp'
    to = 'Fe'
    invert_B = true
  []
  [E]
    type = GreenLagrangeStrain
    deformation_gradient = 'Fe'
    strain = 'E'
  []
  [S]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'E'
    stress = 'S'
  []
  [elasticity]
    type = ComposedModel
    models = 'Fe E S'
  []
  [tau]
    type = ResolvedShear
    resolved_shears = 'tau_i'
    stress = 'S'
    orientation_matrix = 'R'
  []
  [slip_rule]
    type = PowerLawSlipRule
    n = 8.0
    gamma0 = 0.2
    slip_rates = 'gamma_rate_i'
    resolved_shears = 'tau_i'
    slip_strengths = 'tauc_i'
  []
  [sum_slip_rates]
    type = SumSlipRates
    slip_rates = 'gamma_rate_i'
    sum_slip_rates = 'gamma_rate'
  []
  [Lp]
    type = PlasticSpatialVelocityGradient
    plastic_spatial_velocity_gradient = 'Lp'
    slip_rates = 'gamma_rate_i'
    orientation_matrix = 'R'
  []
  [Fp_rate]
    type = R2Multiplication
    A = 'Lp'
    B = 'Fp'
    to = 'Fp_rate'
  []
  [tauc_residual]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'tauc'
  []
  [Fp_residual]
    type = R2BackwardEulerTimeIntegration
    variable = 'Fp'
  []
  [residuals]
    type = ComposedModel
    models = 'orientation slip_strength hardening elasticity tau slip_rule sum_slip_rates
              Lp Fp_rate tauc_residual Fp_residual'
  []
[]

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residuals'
    unknowns = 'tauc Fp'
    residuals = 'tauc_residual Fp_residual'
  []
[]

[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
    # an absolute tolerance only: a relative one would stop each guess at a different
    # distance from the solution (it scales with the first residual)
    abs_tol = 1e-9
    rel_tol = 0
    max_its = 50
  []
  [lu]
    type = DenseLU
  []
[]

[Models]
  # --- the predictors ---
  [old_values]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'tauc'
    unknowns_R2 = 'Fp'
  []
  [old_tauc]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'tauc'
  []
  [predictor]
    type = CrystalPlasticityDeformationGradientPredictor
    deformation_gradient = 'F'
    plastic_deformation_gradient = 'Fp'
    scale = 0.1
    threshold = 1e-3
  []
  [predictor_and_old_tauc]
    type = ComposedModel
    models = 'predictor old_tauc'
  []
  # --- the three updates and the stress after each ---
  [model_old]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'old_values'
  []
  [model_fp]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor_and_old_tauc'
  []
  [model_ref]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [stress_old]
    type = ComposedModel
    models = 'model_old elasticity'
    additional_outputs = 'Fp'
  []
  [stress_fp]
    type = ComposedModel
    models = 'model_fp elasticity'
    additional_outputs = 'Fp'
  []
  [stress_ref]
    type = ComposedModel
    models = 'model_ref elasticity'
    additional_outputs = 'Fp'
  []
[]
