"""Crystal-plasticity leaves: hand formulas on batched and sub-batched (per-grain, per-slip)
inputs, tangents against autograd, construction errors."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import ComposedModel, load_input
from neml2.models.solid_mechanics.crystal_plasticity import (
    CubicCrystal,
    DislocationObstacleStrengthMap,
    ElasticStrainRate,
    OrientationRate,
    PerSlipForestDislocationEvolution,
    PlasticDeformationRate,
    PlasticVorticity,
    PowerLawSlipRule,
    ResolvedShear,
    SingleSlipStrengthMap,
    SumSlipRates,
    VoceSingleSlipHardeningRule,
)
from neml2.tensors import MRP, R2, SR2, WR2, FatalError, MillerIndex, Scalar

torch.set_default_dtype(torch.float64)

NS = 12
CRYSTAL = CubicCrystal(
    lattice_parameter=1.0,
    slip_directions=MillerIndex(torch.tensor([1, 1, 0])),
    slip_planes=MillerIndex(torch.tensor([1, 1, 1])),
)


def _rand(*shape, seed=0, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale + shift


def _rotation(*batch, seed=0):
    return MRP(_rand(*batch, 3, seed=seed, scale=0.3)).to_R2()


def _full(s: SR2) -> torch.Tensor:
    return s.to_R2().data


def _skew(w: torch.Tensor) -> torch.Tensor:
    return WR2(w).to_R2().data


def _check_tangents(model, xs):
    """Forward-mode tangents (one random direction per input) against autograd's jvp."""
    names = list(model.input_spec)
    dirs = [_rand(*x.shape, seed=10 + i) for i, x in enumerate(xs)]
    v = {
        n: {n: type(x)(d.unsqueeze(0), x.sub_batch_ndim)}
        for n, x, d in zip(names, xs, dirs, strict=True)
    }
    *_, v_out = model(*xs, v=v)
    kinds = [(type(x), x.sub_batch_ndim) for x in xs]

    def f(*datas):
        outs = model(*[k(d, s) for (k, s), d in zip(kinds, datas, strict=True)])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return tuple(o.data for o in outs)

    datas = tuple(x.data for x in xs)
    for k, n in enumerate(names):
        tangent = tuple(dirs[k] if j == k else torch.zeros_like(d) for j, d in enumerate(datas))
        _, ref = torch.autograd.functional.jvp(f, datas, tangent)
        for o, r in zip(model.output_spec, ref, strict=True):
            got = v_out[o].get(n)
            g = got.data[0].expand_as(r) if got is not None else torch.zeros_like(r)
            torch.testing.assert_close(g, r, msg=f"d{o}/d{n}")


# ---------------------------------------------------------------- geometry-based models


@pytest.mark.parametrize("grains", [(), (5,)])
def test_resolved_shear_hand_formula(grains):
    m = ResolvedShear(crystal_geometry=CRYSTAL)
    assert m.input_names == ["stress", "orientation_matrix"]
    assert m.output_names == ["resolved_shears"]
    S = SR2(_rand(4, *grains, 6, seed=1, scale=100), len(grains))
    Q = _rotation(4, *grains, seed=2)
    Q = R2(Q.data, len(grains))
    tau = m(S, Q)
    assert tau.sub_batch_shape == (*grains, NS)
    d = CRYSTAL.slip_directions_cartesian.data
    n = CRYSTAL.slip_normals_cartesian.data
    # tau_i = (Q d_i) . sigma (Q n_i)
    Qd = torch.einsum("...jk,sk->...sj", Q.data, d)
    Qn = torch.einsum("...jk,sk->...sj", Q.data, n)
    ref = torch.einsum("...sj,...jk,...sk->...s", Qd, _full(S), Qn)
    torch.testing.assert_close(tau.data, ref)
    _check_tangents(m, [S, Q])


@pytest.mark.parametrize("grains", [(), (5,)])
def test_plastic_deformation_rate_and_vorticity_hand_formula(grains):
    dp_model = PlasticDeformationRate(crystal_geometry=CRYSTAL)
    wp_model = PlasticVorticity(crystal_geometry=CRYSTAL)
    assert dp_model.input_names == ["orientation_matrix", "slip_rates"]
    Q = R2(_rotation(3, *grains, seed=3).data, len(grains))
    g = Scalar(_rand(3, *grains, NS, seed=4, scale=0.1), len(grains) + 1)
    dp = dp_model(Q, g)
    wp = wp_model(Q, g)
    assert dp.sub_batch_shape == grains and wp.sub_batch_shape == grains
    d = CRYSTAL.slip_directions_cartesian.data
    n = CRYSTAL.slip_normals_cartesian.data
    Qd = torch.einsum("...jk,sk->...sj", Q.data, d)
    Qn = torch.einsum("...jk,sk->...sj", Q.data, n)
    L = torch.einsum("...s,...si,...sj->...ij", g.data, Qd, Qn)  # sum_i g_i (Q d_i)(Q n_i)^T
    torch.testing.assert_close(_full(dp), 0.5 * (L + L.transpose(-1, -2)))
    torch.testing.assert_close(_skew(wp.data), 0.5 * (L - L.transpose(-1, -2)))
    _check_tangents(dp_model, [Q, g])
    _check_tangents(wp_model, [Q, g])


@pytest.mark.parametrize("grains", [(), (5,)])
def test_slip_sums_eager_match_the_traced_form(grains, monkeypatch):
    """CrystalModel.slip_sum / slip_project: eagerly matrix products, traced a broadcast
    product summed; the values and first- and second-order tangents agree, including a
    tangent broadcast along the slip axis (a per-point input added to every system)."""
    from neml2.models.solid_mechanics.crystal_plasticity import crystal_geometry as cg
    from neml2.tensors import seed, tangents2_of, tangents_of

    sub = len(grains) + 1
    g = seed(Scalar(_rand(3, *grains, NS, seed=4), sub), "g", second_order=True)
    c = seed(Scalar(_rand(3, *grains, 1, seed=5), sub), "c", second_order=True)
    w = g * g + c
    assert w.tangents["c"].shape[-1] == 1  # the case the eager form expands
    S = seed(SR2(_rand(3, *grains, 6, seed=6), len(grains)), "S", second_order=True)
    S = S * S.inner(S)  # second-order tangents that are not zero

    def run():
        return (
            cg.CrystalModel.slip_sum(w, CRYSTAL.M.data, SR2),
            cg.CrystalModel.slip_sum(w, CRYSTAL.W.data, WR2),
            cg.CrystalModel.slip_sum(w, CRYSTAL.schmid.data, R2),
            cg.CrystalModel.slip_project(S, CRYSTAL.M.data),
        )

    eager = run()
    monkeypatch.setattr(cg, "_tracing", lambda: True)
    traced = run()
    for e, t in zip(eager, traced, strict=True):
        assert type(e) is type(t) and e.sub_batch_ndim == t.sub_batch_ndim
        torch.testing.assert_close(e.data, t.data, rtol=1e-13, atol=1e-13)
        te, tt = tangents_of(e), tangents_of(t)
        assert te.keys() == tt.keys() and te
        for k in te:
            torch.testing.assert_close(
                te[k].data.expand_as(tt[k].data), tt[k].data, rtol=1e-13, atol=1e-13
            )
        t2e, t2t = tangents2_of(e), tangents2_of(t)
        assert t2e.keys() == t2t.keys() and t2e
        for a in t2e:
            for b in t2e[a]:
                torch.testing.assert_close(
                    t2e[a][b].data.expand_as(t2t[a][b].data), t2t[a][b].data, rtol=1e-13, atol=1e-13
                )


def test_resolved_shear_and_plastic_deformation_rate_are_work_conjugate():
    # sigma : d^p = sum_i tau_i gamma_dot_i
    Q = _rotation(6, seed=5)
    S = SR2(_rand(6, 6, seed=6, scale=50))
    g = Scalar(_rand(6, NS, seed=7), 1)
    tau = ResolvedShear(crystal_geometry=CRYSTAL)(S, Q)
    dp = PlasticDeformationRate(crystal_geometry=CRYSTAL)(Q, g)
    torch.testing.assert_close(S.inner(dp).data, (tau * g).sub_batch.sum(-1).data)


def test_single_slip_strength_map_broadcasts_to_every_slip_system():
    m = SingleSlipStrengthMap(crystal_geometry=CRYSTAL, constant_strength=50.0)
    h = Scalar(_rand(4, 5, seed=8, scale=10), 1)  # per grain
    out = m(h)
    assert out.sub_batch_shape == (5, NS) and out.dynamic_shape == (4,)
    torch.testing.assert_close(out.data, (h.data + 50.0).unsqueeze(-1).expand(4, 5, NS))
    _check_tangents(m, [h])
    plain = m(Scalar(torch.tensor(7.5)))
    torch.testing.assert_close(plain.data, torch.full((NS,), 57.5))
    assert plain.sub_batch_ndim == 1


# ---------------------------------------------------------------- kinematics


def test_elastic_strain_rate_hand_formula():
    m = ElasticStrainRate()
    assert m.input_names == [
        "elastic_strain",
        "deformation_rate",
        "vorticity",
        "plastic_deformation_rate",
    ]
    e, d, dp = (SR2(_rand(4, 3, 6, seed=s, scale=0.1)) for s in (11, 12, 13))
    w = WR2(_rand(4, 3, 3, seed=14, scale=0.1))
    out = m(e, d, w, dp)
    E, W = _full(e), _skew(w.data)
    torch.testing.assert_close(_full(out), _full(d) - _full(dp) + W @ E - E @ W)
    _check_tangents(m, [e, d, w, dp])


def test_orientation_rate_hand_formula():
    m = OrientationRate()
    assert m.input_names == [
        "elastic_strain",
        "vorticity",
        "plastic_deformation_rate",
        "plastic_vorticity",
    ]
    e, dp = (SR2(_rand(4, 3, 6, seed=s, scale=0.1)) for s in (15, 16))
    w, wp = (WR2(_rand(4, 3, 3, seed=s, scale=0.1)) for s in (17, 18))
    out = m(e, w, dp, wp)
    E, Dp = _full(e), _full(dp)
    torch.testing.assert_close(_skew(out.data), _skew(w.data) - _skew(wp.data) + Dp @ E - E @ Dp)
    _check_tangents(m, [e, w, dp, wp])


# ---------------------------------------------------------------- per-slip scalar models


def test_power_law_slip_rule_hand_formula_and_zero_shear():
    m = PowerLawSlipRule(n=5.1, gamma0=1e-3)
    tau = Scalar(_rand(4, 5, NS, seed=20, scale=100), 2)
    tb = Scalar(_rand(4, 5, NS, seed=21, scale=10, shift=100), 2)
    out = m(tau, tb)
    r = tau.data / tb.data
    torch.testing.assert_close(out.data, 1e-3 * r.abs() ** 4.1 * r)
    _check_tangents(m, [tau, tb])
    # a per-slip strength shared by all grains broadcasts by sub-batch alignment
    shared = Scalar(tb.data[0, 0], 1)
    torch.testing.assert_close(
        m(tau, shared).data, 1e-3 * (tau.data / shared.data).abs() ** 4.1 * tau.data / shared.data
    )
    # tau = 0 exactly: zero rate and a finite (zero) tangent
    z = Scalar(torch.zeros(NS), 1)
    _, v = m(
        z, Scalar(torch.ones(NS), 1), v={"resolved_shears": {"x": Scalar(torch.ones(1, NS), 1)}}
    )
    t = v["slip_rates"]["x"].data
    assert bool(torch.isfinite(t).all()) and bool((t == 0).all())


def test_sum_slip_rates():
    m = SumSlipRates()
    g = Scalar(_rand(4, 5, NS, seed=22), 2)
    out = m(g)
    assert out.sub_batch_shape == (5,)
    torch.testing.assert_close(out.data, g.data.abs().sum(-1))
    _check_tangents(m, [g])
    with pytest.raises(FatalError, match="no sub-batch"):
        m(Scalar(torch.ones(4)))


def test_voce_single_slip_hardening_rule():
    m = VoceSingleSlipHardeningRule(initial_slope=200.0, saturated_hardening=60.0)
    h = Scalar(_rand(4, 5, seed=23, scale=10, shift=30), 1)
    s = Scalar(_rand(4, 5, seed=24).abs(), 1)
    torch.testing.assert_close(m(h, s).data, 200.0 * (1 - h.data / 60.0) * s.data)
    _check_tangents(m, [h, s])
    # promoted parameter: the saturation given by a variable
    p = VoceSingleSlipHardeningRule(initial_slope=200.0, saturated_hardening="tau_f")
    assert p.input_names == ["slip_hardening", "sum_slip_rates", "tau_f"]
    tf = Scalar(_rand(4, 5, seed=25).abs() + 50, 1)
    torch.testing.assert_close(p(h, s, tf).data, 200.0 * (1 - h.data / tf.data) * s.data)
    _check_tangents(p, [h, s, tf])


def test_dislocation_models():
    rho = Scalar(_rand(4, NS, seed=26).abs() + 1.0, 1)
    g = Scalar(_rand(4, NS, seed=27), 1)
    strength = DislocationObstacleStrengthMap(constant_strength=5.0, alpha=0.5, mu=80.0, b=0.25)
    torch.testing.assert_close(strength(rho).data, 5.0 + 0.5 * 80.0 * 0.25 * rho.data.sqrt())
    _check_tangents(strength, [rho])
    evo = PerSlipForestDislocationEvolution(k1=2.0, k2=0.5)
    assert evo.input_names == ["dislocation_density", "slip_rates"]
    ref = (2.0 * rho.data.sqrt() - 0.5 * rho.data) * g.data.abs()
    torch.testing.assert_close(evo(rho, g).data, ref)
    _check_tangents(evo, [rho, g])


def test_renamed_variables_and_bad_options(tmp_path):
    m = ResolvedShear(crystal_geometry=CRYSTAL, stress="cauchy_stress", orientation_matrix="Q")
    assert m.input_names == ["cauchy_stress", "Q"]
    with pytest.raises(FatalError, match="unknown option"):
        PowerLawSlipRule(n=5.0, gamma0=1.0, exponent=3.0)
    with pytest.raises(FatalError, match="missing required option 'gamma0'"):
        PowerLawSlipRule(n=5.0)
    text = """
    [Models]
      [m]
        type = PowerLawSlipRule
        n = '1 2'
        gamma0 = 1
      []
    []
    """
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    with pytest.raises(FatalError, match=r"input.i:4:.*option 'n' = '1 2' is not a valid Scalar"):
        load_input(p).model("m")


def test_single_crystal_rate_composition():
    """The per-crystal rate equations of cp_basic composed; tangents of the whole chain."""
    models = [
        ResolvedShear(crystal_geometry=CRYSTAL),
        PowerLawSlipRule(n=8.0, gamma0=0.2),
        SingleSlipStrengthMap(crystal_geometry=CRYSTAL, constant_strength=50.0),
        SumSlipRates(),
        VoceSingleSlipHardeningRule(initial_slope=500.0, saturated_hardening=50.0),
        PlasticDeformationRate(crystal_geometry=CRYSTAL),
        PlasticVorticity(crystal_geometry=CRYSTAL),
        ElasticStrainRate(),
        OrientationRate(),
    ]
    m = ComposedModel(models=models, additional_outputs=["slip_rates"])
    assert set(m.input_names) == {
        "stress",
        "orientation_matrix",
        "slip_hardening",
        "elastic_strain",
        "deformation_rate",
        "vorticity",
    }
    typed = {
        "stress": SR2(_rand(3, 5, 6, seed=30, scale=60), 1),
        "orientation_matrix": R2(_rotation(3, 5, seed=31).data, 1),
        "slip_hardening": Scalar(_rand(3, 5, seed=32).abs() * 10, 1),
        "elastic_strain": SR2(_rand(3, 5, 6, seed=33, scale=1e-3), 1),
        "deformation_rate": SR2(_rand(3, 6, seed=34, scale=1e-3)),
        "vorticity": WR2(_rand(3, 3, seed=35, scale=1e-3)),
    }
    xs = [typed[n] for n in m.input_names]
    outs = dict(zip(m.output_spec, m(*xs), strict=True))
    assert outs["slip_rates"].sub_batch_shape == (5, NS)
    assert outs["elastic_strain_rate"].sub_batch_shape == (5,)
    _check_tangents(m, xs)
