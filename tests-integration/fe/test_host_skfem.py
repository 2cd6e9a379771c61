"""scikit-fem as the host: a 3-D bar of 6 x 2 x 2 hexahedra (8 quadrature points each),
the tutorial's J2/Voce model unchanged, displacement control into plasticity and back.

One batched ``MaterialPoint.update`` per global iteration over ``(elements, quadrature
points)``; scikit-fem assembles the internal force from the stress and the tangent
stiffness from the consistent tangent (``_fe_skfem.py``). ``pytest -s`` prints the
residual sequences, their quadratic constants and the time per global iteration.
"""

from __future__ import annotations

import numpy as np
import torch
from _fe_newton import BOUND, check_quadratic, last_constant, rate_table
from _fe_skfem import Host, bar, plane_plate, thin_plate
from skfem import condense, solve
from skfem.models.elasticity import lame_parameters, linear_elasticity

import neml2
from neml2.models import PlaneStress

#: nominal axial strains of the end face per step: elastic, into plasticity, unloading
#: through reverse yield, and back (two load reversals)
PATH = (0.3e-3, 1.5e-3, 3e-3, 4.5e-3, 2e-3, -1e-3, -3e-3, 0.0)


class Recording:
    """A material point that records the strain shape of every update."""

    def __init__(self, mp) -> None:
        self.mp, self.shapes = mp, []

    def __getattr__(self, name):
        return getattr(self.mp, name)

    def update(self, strain, *args, **kwargs):
        self.shapes.append(tuple(strain.shape))
        return self.mp.update(strain, *args, **kwargs)


def _scale(host: Host) -> float:
    """The force scale of the rate check: the largest reaction of the path."""
    return max(abs(f) for _, f in host.curve)


def _plastic_strain(host: Host) -> torch.Tensor:
    """The equivalent plastic strain at every quadrature point, ``(E, Q)``."""
    return host.last.state["equivalent_plastic_strain"]


def test_elastic_step_equals_linear_elasticity(j2_point, j2_constants):
    """The first, elastic step equals scikit-fem's own linear elasticity
    (``skfem.models.elasticity``) with the model's E and nu."""
    body = bar()
    host = Host(body, j2_point)
    disp = PATH[0] * 3.0
    assert host.step(disp) == 0
    assert float(_plastic_strain(host).abs().max()) == 0.0, "the first step must be elastic"

    lam, mu = lame_parameters(j2_constants["E"], j2_constants["nu"])
    K = linear_elasticity(lam, mu).assemble(body.basis)
    u_lin = solve(*condense(K, np.zeros(body.basis.N), x=body.prescribed(disp), D=body.fixed))
    du = float(np.abs(host.u - u_lin).max() / np.abs(u_lin).max())

    eps = body.strain(u_lin)
    tr = eps[..., :3].sum(-1, keepdim=True)
    sigma_lin = 2.0 * mu * eps + lam * tr * torch.tensor([1.0, 1, 1, 0, 0, 0], dtype=eps.dtype)
    ds = float((host.last.stress - sigma_lin).abs().max() / sigma_lin.abs().max())
    print(
        f"\nelastic step vs skfem linear elasticity: |du|/|u| = {du:.1e}, "
        f"|dsigma|/|sigma| = {ds:.1e}"
    )
    assert du <= 1e-12 and ds <= 1e-12, (du, ds)


def test_newton_is_quadratic_into_plasticity_and_back(j2_point):
    """The global Newton with the consistent tangent converges quadratically at every
    plastic step of a path with two load reversals; one batched call per iteration."""
    body = bar()
    mp = Recording(j2_point)
    host = Host(body, mp)
    epbar = []
    for strain in PATH:
        assert host.step(strain * 3.0) == 0, host.log[-1].failure
        epbar.append(float(_plastic_strain(host).sum()))
    scale = _scale(host)
    sequences = [log.residuals for log in host.log]
    t = host.timings
    print(
        f"\nskfem bar {body.batch_shape}, force scale {scale:.1f} N:\n"
        f"{rate_table(sequences, scale)}"
    )
    print(
        f"per global iteration ({t.iterations}): neml2 update "
        f"{1e3 * t.material / t.iterations:.1f} ms, the rest "
        f"{1e3 * (t.total - t.material) / t.iterations:.1f} ms (py-eager)"
    )
    print("curve (disp, reaction):", [(round(d, 5), round(f, 3)) for d, f in host.curve])

    # plasticity on the way out, reverse plasticity on the way back (the summed
    # equivalent plastic strain grows)
    assert epbar[0] == 0.0 and epbar[1] > 0.0
    assert epbar[4] > epbar[3] and epbar[6] > epbar[5], epbar
    forces = [f for _, f in host.curve]
    assert forces[4] > 0 and forces[5] < 0 and forces[8] > 0, forces
    # one call per global iteration, batched over (elements, quadrature points)
    assert len(mp.shapes) == t.iterations
    assert set(mp.shapes) == {(*body.batch_shape, 6)} and body.batch_shape == (24, 8)
    check_quadratic(sequences, scale, at_least=6)


def test_modified_newton_fails_the_rate_check(j2_point):
    """The rate check can fail: the elastic tangent kept at every iteration (a modified
    Newton) converges linearly, and its last constant is far above the bound."""
    body = bar()
    elastic = j2_point.update(
        torch.zeros(*body.batch_shape, 6, dtype=torch.float64),
        j2_point.initial_state(body.batch_shape),
    ).tangent
    host = Host(body, j2_point, tangent=elastic, max_iterations=30)
    host.step(PATH[0] * 3.0)
    log = host.try_step(PATH[1] * 3.0)
    c = last_constant(log.residuals, scale=200.0)
    print(f"\nmodified Newton: C = {c:.2e}\n{rate_table([log.residuals], 200.0)}")
    assert c is not None and c > 10 * BOUND, rate_table([log.residuals], 200.0)


def test_step_cutting_after_a_local_failure(j2_point, j2_input):
    """A step too large for the local solve (the host allows it 2 iterations) fails at
    some points, is cut in half and succeeds; the result equals that of the halves
    taken directly with the model's own settings."""
    tight = neml2.MaterialPoint(neml2.load_model(j2_input, "model", ["Solvers/newton/max_its=2"]))
    body = bar()
    host = Host(body, tight)
    end = 1e-2 * 3.0
    cuts = host.step(end)
    first = host.log[0]
    print(f"\nstep cutting: {cuts} cut(s); attempts:")
    for log in host.log:
        print(f"  disp {log.disp:.4f}: {'converged' if log.converged else log.failure}")
    assert cuts == 1 and not first.converged, [(g.disp, g.failure) for g in host.log]
    assert first.failure.startswith("local solve failed"), first.failure
    assert [g.converged for g in host.log[1:]] == [True, True]

    halves = Host(body, j2_point)
    halves.step(end / 2)
    halves.step(end)
    f, g = host.curve[-1][1], halves.curve[-1][1]
    assert abs(f - g) <= 1e-9 * abs(g), (f, g)
    np.testing.assert_allclose(host.u, halves.u, rtol=0, atol=1e-9 * np.abs(halves.u).max())


def test_plane_stress_plate_agrees_with_a_thin_3d_plate(j2_point):
    """A 2-D plane-stress plate (``neml2.models.PlaneStress``, 6 x 2 quadrilaterals)
    against a thin 3-D plate (6 x 2 x 1 hexahedra, thickness 1/50 of the width), on a
    path into plasticity and back: the reactions per unit thickness agree within the
    discretisation error, measured as the change of the 2-D result under one refinement.
    Plane strain instead would be about 10 % stiffer in the elastic step."""
    thickness = 0.02
    plate = Host(thin_plate(thickness=thickness), j2_point)
    flat = Host(plane_plate(), PlaneStress(j2_point))
    fine = Host(plane_plate(nx=12, ny=4), PlaneStress(j2_point))
    path = (0.3e-3, 1.5e-3, 3e-3, 1.5e-3, -1e-3)
    for strain in path:
        for host in (plate, flat, fine):
            assert host.step(strain * 3.0) == 0, host.log[-1].failure
    f3 = np.array([f for _, f in plate.curve[1:]]) / thickness
    f2 = np.array([f for _, f in flat.curve[1:]])
    f2h = np.array([f for _, f in fine.curve[1:]])
    scale = np.abs(f2).max()
    gap = float(np.abs(f3 - f2).max() / scale)
    disc = float(np.abs(f2h - f2).max() / scale)
    print(f"\nplane stress: 3-D plate {f3.round(3)}\n              2-D plate {f2.round(3)}")
    print(f"|3-D - 2-D| / F = {gap:.2e}; 2-D under refinement {disc:.2e}")
    print(f"2-D plane stress:\n{rate_table([g.residuals for g in flat.log], scale)}")
    assert gap <= 2.0 * disc and gap <= 5e-3, (gap, disc)
    check_quadratic([g.residuals for g in flat.log], scale, at_least=3)
