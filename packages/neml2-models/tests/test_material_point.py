"""The material-point API (py-eager): state discovery, packing, roll-forward, the
consistent tangent, the per-point status, and the reduced-dimension wrappers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import neml2
from neml2.models import (
    Axisymmetric,
    MaterialPoint,
    PlaneStrain,
    PlaneStress,
    load_model,
    load_string,
    with_zero_history,
)
from neml2.models.reduced_dimensions import OUT_OF_PLANE_STRAIN
from neml2.tensors import ConvergenceError, FatalError

ROOT = Path(__file__).resolve().parents[3]
J2 = ROOT / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"
HELLO = ROOT / "examples" / "hello" / "input.i"
F64 = torch.float64
SQ2 = 2.0**0.5

#: the per-slip crystal model of the route matrix (tests-integration/routes/zoo/
#: crystal_per_slip.i), its [Models], [EquationSystems], [Solvers] and [Data] only
CRYSTAL = textwrap.dedent(
    """
    [Tensors]
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
    [Data]
      [crystal_geometry]
        type = CubicCrystal
        lattice_parameter = 'a'
        slip_directions = 'sdirs'
        slip_planes = 'splanes'
      []
    []
    [Models]
      [euler_rodrigues]
        type = RotationMatrix
        from = 'orientation'
        to = 'orientation_matrix'
      []
      [elasticity]
        type = LinearIsotropicElasticity
        coefficients = '1e5 0.25'
        coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
        strain = 'elastic_strain'
        stress = 'cauchy_stress'
      []
      [resolved_shear]
        type = ResolvedShear
        stress = 'cauchy_stress'
      []
      [elastic_stretch]
        type = ElasticStrainRate
      []
      [plastic_spin]
        type = PlasticVorticity
      []
      [plastic_deformation_rate]
        type = PlasticDeformationRate
      []
      [orientation_rate]
        type = OrientationRate
      []
      [slip_rule]
        type = PowerLawSlipRule
        n = 8.0
        gamma0 = 2.0e-1
      []
      [slip_strength]
        type = DislocationObstacleStrengthMap
        dislocation_density = 'dislocation_density'
        alpha = 0.3
        mu = 1.0e5
        b = 1.0e-4
        constant_strength = 50.0
      []
      [dislocation_density_rate]
        type = PerSlipForestDislocationEvolution
        dislocation_density = 'dislocation_density'
        k1 = 1e2
        k2 = 40.0
      []
      [integrate_dislocation_density]
        type = ScalarBackwardEulerTimeIntegration
        variable = 'dislocation_density'
      []
      [integrate_elastic_strain]
        type = SR2BackwardEulerTimeIntegration
        variable = 'elastic_strain'
      []
      [integrate_orientation]
        type = WR2ImplicitExponentialTimeIntegration
        variable = 'orientation'
      []
      [implicit_rate]
        type = ComposedModel
        models = 'euler_rodrigues elasticity orientation_rate resolved_shear
                  elastic_stretch plastic_deformation_rate plastic_spin
                  slip_rule slip_strength dislocation_density_rate
                  integrate_dislocation_density integrate_elastic_strain integrate_orientation'
      []
      [cp_warmup_1]
        type = CrystalPlasticityStrainPredictor
        scale = 0.1
      []
      [cp_warmup_2]
        type = ConstantExtrapolationPredictor
        unknowns_MRP = 'orientation'
        unknowns_Scalar = 'dislocation_density'
      []
      [predictor]
        type = ComposedModel
        models = 'cp_warmup_1 cp_warmup_2'
      []
      [update]
        type = ImplicitUpdate
        equation_system = 'es'
        solver = 'newton'
        predictor = 'predictor'
      []
      [model]
        type = ComposedModel
        models = 'update elasticity'
        additional_outputs = 'elastic_strain'
      []
    []
    [EquationSystems]
      [es]
        type = NonlinearSystem
        model = 'implicit_rate'
        unknowns = 'elastic_strain orientation dislocation_density'
        residuals = 'elastic_strain_residual orientation_residual dislocation_density_residual'
      []
    []
    [Solvers]
      [newton]
        type = NewtonWithLineSearch
        max_linesearch_iterations = 5
        linear_solver = 'lu'
      []
      [lu]
        type = DenseLU
      []
    []
    """
)


@pytest.fixture(scope="module")
def j2():
    return MaterialPoint(load_model(J2, "model"))


@pytest.fixture(scope="module")
def crystal():
    model = load_string(CRYSTAL, "model")
    return MaterialPoint(model, strain="deformation_rate", stress="cauchy_stress")


@pytest.fixture(scope="module")
def elastic():
    return MaterialPoint(load_model(HELLO, "elasticity"))


def _crystal_step(n: int):
    """Deformation rates around uniaxial tension, the vorticity, dt = 0.05."""
    g = torch.Generator().manual_seed(3)
    d = torch.tensor([0.1, -0.05, -0.05, 0.0, 0.0, 0.0], dtype=F64)
    d = d + 0.02 * (torch.rand(n, 6, generator=g, dtype=F64) - 0.5)
    w = torch.tensor([0.1, -0.05, -0.05], dtype=F64).expand(n, 3)
    return d, {"vorticity": w}


def _history():
    """Two points, nine steps: loading into plasticity, reversal, reverse yielding."""
    amp = torch.tensor([0, 1, 2, 3, 4, 3, 1, -1, -3, -2], dtype=F64) * 2e-3
    dirs = torch.tensor([[1, -0.5, -0.5, 0, 0, 0], [1, 0.2, -0.1, 0.3, 0.1, 0.4]], dtype=F64)
    return amp[:, None, None] * dirs  # (steps, 2, 6)


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-300))


# ---------------------------------------------------------------------- discovery
def test_facade_exports_material_point():
    assert neml2.MaterialPoint is MaterialPoint
    assert "MaterialPoint" in neml2.__all__ and "MaterialPoint" in neml2.models.__all__


def test_j2_state_and_predictor_discovery(j2):
    assert j2.state_names == ["equivalent_plastic_strain", "plastic_strain"]
    assert j2.state_shapes == {"equivalent_plastic_strain": (), "plastic_strain": (6,)}
    assert j2.state_size == 7
    # flow_rate~1 is read only by the predictor (the Newton's initial guess)
    assert j2.predictors == ["flow_rate~1"]
    # the probe a compiled model gets (its structure is gone) says the same
    assert j2._probe_guess("flow_rate~1")
    assert not j2._probe_guess("equivalent_plastic_strain~1")
    assert not j2._probe_guess("plastic_strain~1")


def test_predictors_can_be_kept_as_state():
    mp = MaterialPoint(load_model(J2, "model"), predictors=())
    assert mp.state_names == ["equivalent_plastic_strain", "flow_rate", "plastic_strain"]
    with pytest.raises(FatalError, match="predictors names 'strain'"):
        MaterialPoint(load_model(J2, "model"), predictors=["strain"])


def test_crystal_state_has_the_per_slip_axis(crystal):
    assert crystal.state_names == ["orientation", "dislocation_density", "elastic_strain"]
    assert crystal.state_shapes == {
        "orientation": (3,),
        "dislocation_density": (12,),
        "elastic_strain": (6,),
    }
    assert crystal.state_size == 21
    assert crystal.predictors == []
    s = crystal.initial_state((2, 3), values={"dislocation_density": 10.0})
    assert s["dislocation_density"].shape == (2, 3, 12)
    assert bool((s["dislocation_density"] == 10.0).all())


def test_elastic_model_has_no_state_and_ignores_time(elastic):
    assert elastic.state_names == [] and elastic.state_size == 0
    e = torch.tensor([[1e-3, 2e-4, -3e-4, 1e-4, 0.0, 5e-4]], dtype=F64)
    res = elastic.update(e, {}, time=5.0, time_old=4.0)
    lam, mu = 200e3 * 0.3 / (1.3 * 0.4), 200e3 / 2.6
    want = lam * e[:, :3].sum(-1, keepdim=True) * torch.tensor([1, 1, 1, 0, 0, 0.0]) + 2 * mu * e
    assert _rel(res.stress, want) < 1e-14
    packed = elastic.update(e, torch.zeros(1, 0, dtype=F64))
    assert packed.state.shape == (1, 0)


# ---------------------------------------------------------------------- packing
@pytest.mark.parametrize("which", ["j2", "crystal"])
def test_pack_unpack_round_trip(which, request):
    mp = request.getfixturevalue(which)
    g = torch.Generator().manual_seed(0)
    state = {n: torch.rand((4, 5, *s), generator=g, dtype=F64) for n, s in mp.state_shapes.items()}
    packed = mp.pack(state)
    assert packed.shape == (4, 5, mp.state_size)
    back = mp.unpack(packed)
    assert list(back) == mp.state_names
    for n in mp.state_names:
        assert torch.equal(back[n], state[n])
    assert torch.equal(mp.pack(back), packed)
    with pytest.raises(FatalError, match="packed state"):
        mp.unpack(packed[..., :-1])
    with pytest.raises(FatalError, match="missing"):
        mp.pack({})


def test_update_takes_a_packed_state_and_returns_one(j2):
    e = _history()[3]
    s = j2.initial_state((2,))
    s["equivalent_plastic_strain"] += 1e-3
    by_dict = j2.update(e, s)
    by_array = j2.update(e, j2.pack(s))
    assert by_array.state.shape == (2, 7)
    assert (
        _rel(j2.unpack(by_array.state)["plastic_strain"], by_dict.state["plastic_strain"]) < 1e-12
    )
    assert _rel(by_array.stress, by_dict.stress) < 1e-12


# ---------------------------------------------------------------------- roll-forward
def test_roll_forward_equals_stepping_the_model(j2):
    """The host loop (same state_old every call, roll on acceptance) over a load reversal
    equals stepping the model with every output fed back as its ~1 input (what the
    TransientDriver does, flow_rate~1 included)."""
    model = j2.model
    E = _history()
    state = j2.initial_state((2,))
    prev: dict[str, torch.Tensor] = {}
    for k in range(1, E.shape[0]):
        t, t1 = float(k), float(k - 1)
        # a global Newton calls update more than once from the same old state
        j2.update(0.5 * E[k], state, time=t, time_old=t1)
        res = j2.update(E[k], state, time=t, time_old=t1)
        assert bool(res.converged.all())
        state = j2.roll(res.state)
        x = {"strain": E[k], "t": torch.full((2,), t, dtype=F64)}
        x["t~1"] = torch.full((2,), t1, dtype=F64)
        x.update({f"{n}~1": v for n, v in prev.items() if f"{n}~1" in model.input_spec})
        with torch.no_grad():
            prev = model.forward(with_zero_history(model, x))
        assert _rel(res.stress, prev["stress"]) < 1e-12
        for n in j2.state_names:
            assert float((state[n] - prev[n]).abs().max()) < 1e-15
    assert float(state["equivalent_plastic_strain"].min()) > 0.01  # it did yield, both ways


@pytest.mark.needs_sibling  # neml2.drivers: run by the integration session
def test_roll_forward_equals_the_transient_driver(j2):
    pytest.importorskip("neml2.drivers")
    driver = neml2.load_input(J2).object("Drivers", "uniaxial")
    driver.run()
    ref = driver.stacked
    state = j2.initial_state(())
    for k in range(1, ref["t"].shape[0]):
        res = j2.update(
            ref["strain"][k],
            state,
            time=ref["t"][k],
            time_old=ref["t"][k - 1],
        )
        state = j2.roll(res.state)
        assert _rel(res.stress, ref["stress"][k]) < 1e-12
        assert float((state["plastic_strain"] - ref["plastic_strain"][k]).abs().max()) < 1e-15
    assert float(state["equivalent_plastic_strain"]) > 0.01


def test_roll_with_accept_keeps_the_old_state_elsewhere(j2):
    old = j2.initial_state((3,))
    new = {n: v + 1.0 for n, v in old.items()}
    accept = torch.tensor([True, False, True])
    out = j2.roll(new, old, accept)
    assert bool((out["plastic_strain"][accept] == 1.0).all())
    assert bool((out["plastic_strain"][~accept] == 0.0).all())
    packed = j2.roll(j2.pack(new), j2.pack(old), accept)
    assert torch.equal(j2.unpack(packed)["plastic_strain"], out["plastic_strain"])
    with pytest.raises(FatalError, match="state_old"):
        j2.roll(new, accept=accept)


# ---------------------------------------------------------------------- tangent
def _fd_tangent(mp, strain, state, h, **kw):
    cols = []
    for j in range(6):
        d = torch.zeros(6, dtype=F64)
        d[j] = h
        plus = mp.update(strain + d, state, **kw).stress
        minus = mp.update(strain - d, state, **kw).stress
        cols.append((plus - minus) / (2 * h))
    return torch.stack(cols, dim=-1)


def test_j2_tangent_matches_finite_differences(j2):
    e = _history()[4]  # both points plastic
    s = j2.initial_state((2,))
    s["plastic_strain"] = 1e-3 * torch.tensor([[1.0, -0.5, -0.5, 0, 0, 0]], dtype=F64)
    s["equivalent_plastic_strain"] += 1e-3
    res = j2.update(e, s)
    assert float(res.outputs["equivalent_plastic_strain"].min()) > 2e-3  # plastic
    fd = _fd_tangent(j2, e, s, 1e-8)
    assert _rel(res.tangent, fd) < 1e-6
    # the plastic tangent is not the elastic one
    el = j2.update(1e-6 * e, j2.initial_state((2,))).tangent
    assert _rel(res.tangent, el) > 0.1


def test_crystal_tangent_matches_finite_differences(crystal):
    d, extra = _crystal_step(2)
    s = crystal.initial_state((2,), values={"dislocation_density": 10.0})
    kw = {"time": 0.05, "time_old": 0.0, "extra": extra}
    res = crystal.update(d, s, **kw)
    assert bool(res.converged.all())
    assert res.state["dislocation_density"].shape == (2, 12)
    fd = _fd_tangent(crystal, d, s, 1e-7, **kw)
    assert _rel(res.tangent, fd) < 1e-5


def test_missing_extra_input_is_named(crystal):
    d, _ = _crystal_step(1)
    with pytest.raises(FatalError, match="vorticity"):
        crystal.update(d, crystal.initial_state((1,)))
    with pytest.raises(FatalError, match="unknown input"):
        crystal.update(d, crystal.initial_state((1,)), extra={"vorticty": d[:, :3]})


# ---------------------------------------------------------------------- per-point status
def _one_plastic_among_elastic():
    e = torch.zeros(4, 6, dtype=F64)
    e[:, 0] = torch.tensor([1e-4, 5e-4, 0.02, 2e-4], dtype=F64)
    e[:, 1] = -0.3 * e[:, 0]
    return e


def test_failed_point_keeps_its_state_and_the_others_are_unchanged():
    """Newton limited to one iteration: the plastic point (index 2) fails, the elastic
    points converge; they equal a batch without the failed point."""
    mp = MaterialPoint(load_model(J2, "model", ["Solvers/newton/max_its=1"]))
    e = _one_plastic_among_elastic()
    s = mp.initial_state((4,))
    s["plastic_strain"] += 1e-5
    res = mp.update(e, s)
    assert res.converged.tolist() == [True, True, False, True]
    assert res.n_failed == 1
    for x in (res.stress, res.tangent, *res.state.values(), *res.outputs.values()):
        assert bool(torch.isfinite(x).all())
    assert bool((res.stress[2] == 0).all()) and bool((res.tangent[2] == 0).all())
    assert torch.equal(res.state["plastic_strain"][2], s["plastic_strain"][2])
    keep = [0, 1, 3]
    alone = mp.update(e[keep], {n: v[keep] for n, v in s.items()})
    assert bool(alone.converged.all())
    assert _rel(res.stress[keep], alone.stress) < 1e-14
    assert _rel(res.tangent[keep], alone.tangent) < 1e-14
    with pytest.raises(ConvergenceError, match="1 of 4 points") as info:
        mp.update(e, s, on_failure="raise")
    assert info.value.failed_indices == (2,)


def test_nan_strain_fails_alone_among_plastic_points(j2):
    e = _history()[4].repeat(2, 1)  # four plastic points
    e[1, 0] = float("nan")
    s = j2.initial_state((4,))
    res = j2.update(e, s)
    assert res.converged.tolist() == [True, False, True, True]
    assert bool(torch.isfinite(res.stress).all()) and bool(torch.isfinite(res.tangent).all())
    keep = [0, 2, 3]
    alone = j2.update(e[keep], {n: v[keep] for n, v in s.items()})
    assert _rel(res.stress[keep], alone.stress) < 1e-14
    with pytest.raises(FatalError, match="on_failure"):
        j2.update(e, s, on_failure="ignore")


def test_failed_points_in_chunked_solves():
    """An eager solve in chunks of 2 points: the error names the failed points of the
    first failing chunk only; the later chunk's failure is found on the next call."""
    mp = MaterialPoint(
        load_model(
            J2, "model", ["Solvers/newton/max_its=1", "Models/return_map/max_points_per_solve=2"]
        )
    )
    e = torch.zeros(6, 6, dtype=F64)
    e[:, 0] = torch.tensor([1e-4, 0.02, 2e-4, 3e-4, 1e-4, 0.03], dtype=F64)
    res = mp.update(e, mp.initial_state((6,)))
    assert res.converged.tolist() == [True, False, True, True, True, False]


class _NoIndices:
    """A model whose ConvergenceError names no points (as a compiled route's)."""

    def __init__(self, model):
        self.inner = model
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def forward(self, inputs):
        return self.inner.forward(inputs)

    def jacobian(self, inputs):
        self.calls += 1
        try:
            return self.inner.jacobian(inputs)
        except ConvergenceError as e:
            raise ConvergenceError(f"did not converge at {len(e.failed_indices)} points") from None


def test_failed_points_found_by_halving_when_the_error_names_none():
    inner = load_model(J2, "model", ["Solvers/newton/max_its=1"])
    wrapped = _NoIndices(inner)
    mp = MaterialPoint(wrapped, predictors=["flow_rate~1"])
    e = torch.zeros(8, 6, dtype=F64)
    e[:, 0] = 1e-4
    e[5, 0] = 0.02
    res = mp.update(e, mp.initial_state((8,)))
    assert res.converged.tolist() == [True] * 5 + [False] + [True] * 2
    # one call, then halves: [0, 4) passes; [4, 8) -> [4, 6) -> [4] passes, [5] fails; [6, 8)
    assert wrapped.calls == 7
    ref = MaterialPoint(inner).update(e[:5], MaterialPoint(inner).initial_state((5,)))
    assert _rel(res.stress[:5], ref.stress) < 1e-14


# ---------------------------------------------------------------------- reduced dimensions
def test_plane_strain_equals_the_3d_call_with_zero_out_of_plane_strain(j2):
    e2 = torch.tensor([[4e-3, -1e-3, 2e-3 * SQ2], [1e-4, 2e-4, 0.0]], dtype=F64)
    s = j2.initial_state((2,))
    res = PlaneStrain(j2).update(e2, s)
    e3 = torch.zeros(2, 6, dtype=F64)
    e3[:, [0, 1, 5]] = e2
    full = j2.update(e3, s)
    rows = [0, 1, 5]
    assert torch.equal(res.stress, full.stress[:, rows])
    assert torch.equal(res.tangent, full.tangent[:, rows][:, :, rows])
    assert torch.equal(res.state["plastic_strain"], full.state["plastic_strain"])
    assert float(res.outputs["stress"][0, 2].abs()) > 10.0  # sigma_zz != 0 in plane strain
    with pytest.raises(FatalError, match=r"\(\*batch, 3\)"):
        PlaneStrain(j2).update(e3, s)


def test_axisymmetric_elasticity_equals_the_hand_formula(elastic):
    E, nu = 200e3, 0.3
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    e = torch.tensor([[1e-3, -2e-4, 3e-4, 5e-4 * SQ2], [0.0, 1e-3, 0.0, 0.0]], dtype=F64)
    res = Axisymmetric(elastic).update(e, {})
    one = torch.tensor([1.0, 1.0, 1.0, 0.0], dtype=F64)
    C = lam * torch.outer(one, one) + 2 * mu * torch.eye(4, dtype=F64)
    assert _rel(res.stress, e @ C.T) < 1e-14
    assert _rel(res.tangent, C.expand(2, 4, 4)) < 1e-14
    # sigma_rz in Mandel: sqrt2 * 2 mu eps_rz
    assert abs(float(res.stress[0, 3]) - SQ2 * 2 * mu * 5e-4) < 1e-9


def test_plane_stress_zeroes_the_out_of_plane_stress(j2):
    ps = PlaneStress(j2, tol=1e-8)
    e = torch.tensor(
        [[1e-3, 0, 0], [4e-3, 0, 0], [3e-3, -1e-3, 1e-3 * SQ2], [1e-2, 5e-3, 2e-3 * SQ2]],
        dtype=F64,
    )
    s = ps.initial_state((4,))
    res = ps.update(e, s)
    assert bool(res.converged.all())
    assert float(res.outputs["stress"][:, 2:5].abs().max()) < 1e-8
    assert res.stress.shape == (4, 3) and res.tangent.shape == (4, 3, 3)
    assert float(res.outputs["equivalent_plastic_strain"][3]) > 1e-3  # plastic
    # elastic, eps_yy = 0: sigma_xx = E eps_xx / (1 - nu^2), sigma_yy = nu sigma_xx
    assert float(res.stress[0, 0]) == pytest.approx(200.0 / 0.91, rel=1e-10)
    assert float(res.stress[0, 1]) == pytest.approx(0.3 * 200.0 / 0.91, rel=1e-10)
    cols = []
    for j in range(3):
        d = torch.zeros(3, dtype=F64)
        d[j] = 1e-7
        cols.append((ps.update(e + d, s).stress - ps.update(e - d, s).stress) / 2e-7)
    assert _rel(res.tangent, torch.stack(cols, dim=-1)) < 1e-5
    # the converged out-of-plane strain is state: the next call starts there
    z = res.state[OUT_OF_PLANE_STRAIN]
    assert float(z[0, 0]) == pytest.approx(-0.3 / 0.7 * 1e-3, rel=1e-10)  # -nu/(1-nu) eps_xx
    again = ps.update(e, {**s, OUT_OF_PLANE_STRAIN: z})
    assert again.iterations < res.iterations
    packed = ps.update(e, ps.pack(s))
    assert packed.state.shape == (4, j2.state_size + 3)
    assert torch.equal(ps.unpack(packed.state)[OUT_OF_PLANE_STRAIN], z)


def test_plane_stress_reports_a_failed_point(j2):
    ps = PlaneStress(j2)
    e = torch.tensor([[1e-3, 0, 0], [float("nan"), 0, 0]], dtype=F64)
    s = ps.initial_state((2,))
    res = ps.update(e, s)
    assert res.converged.tolist() == [True, False]
    assert bool(torch.isfinite(res.tangent).all()) and bool(torch.isfinite(res.stress).all())
    assert bool((res.state[OUT_OF_PLANE_STRAIN][1] == 0).all())
    one = PlaneStress(j2, max_iter=1).update(
        torch.tensor([[1e-2, 5e-3, 0]], dtype=F64), ps.initial_state((1,))
    )
    assert one.converged.tolist() == [False]
    with pytest.raises(FatalError, match="max_iter"):
        PlaneStress(j2, max_iter=0)
