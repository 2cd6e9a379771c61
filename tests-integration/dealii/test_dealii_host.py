"""deal.II as the host: ``examples/dealii/dealii_bar.cc`` (a 12 x 4 x 4 bar of trilinear
hexahedra, 1536 quadrature points, one batched ``neml2::MaterialPoint::update`` per
global iteration on the compiled J2/Voce model, displacement control into plasticity
and back) against the same problem in Python.

* the global Newton converges quadratically (the rate check of ``_fe_newton.py``);
* its reactions equal scikit-fem's on the same mesh, quadrature, loading and stopping
  rule around ``neml2.MaterialPoint`` on py-eager (``_fe_skfem.py``);
* at the last step, py-eager's ``MaterialPoint`` at the program's strains and old states
  gives the program's stresses and new states.

``pytest -s`` prints the residual sequences, the agreement and the time per iteration.
"""

from __future__ import annotations

import numpy as np
import torch
from _fe_newton import check_quadratic, rate_table

#: the reactions of the two hosts agree to this, relative to the largest reaction
REACTION_RTOL = 1e-8
#: the program's stresses and states agree with py-eager's to this (relative)
POINT_RTOL = 1e-10


def _scale(run: dict) -> float:
    """The force scale of the rate check: the largest reaction of the path."""
    return max(abs(s["reaction"]) for s in run["steps"])


def test_newton_is_quadratic_into_plasticity_and_back(dealii_run):
    """Every load step converges, and every plastic one quadratically (>= 5 solves with
    a pair above round-off: the path has 8 steps, the first elastic)."""
    sequences = [s["residuals"] for s in dealii_run["steps"]]
    scale = _scale(dealii_run)
    print(f"\n{dealii_run['stdout']}")
    print(
        f"deal.II bar {tuple(dealii_run['batch_shape'])}, force scale {scale:.1f} N:\n"
        f"{rate_table(sequences, scale)}"
    )
    assert tuple(dealii_run["batch_shape"]) == (12 * 4 * 4, 8)
    assert len(sequences) == 8 and all(sequences)
    check_quadratic(sequences, scale, at_least=5)
    # the path goes into plasticity, so some steps take more than one correction
    assert max(len(s) for s in sequences) >= 3, rate_table(sequences, scale)


def test_reactions_equal_scikit_fem(dealii_run, j2_point):
    """scikit-fem on the same bar (trilinear hexahedra, 2 x 2 x 2 Gauss points, same
    Dirichlet faces, same Newton stopping rule) gives the same reactions."""
    from _fe_skfem import Host, bar

    nx, ny, nz = dealii_run["mesh"]
    body = bar(nx=nx, ny=ny, nz=nz, length=dealii_run["length"], width=dealii_run["width"])
    assert body.batch_shape == tuple(dealii_run["batch_shape"])
    host = Host(body, j2_point)
    for s in dealii_run["steps"]:
        assert host.step(s["disp"]) == 0, host.log[-1].failure
    ours = np.array([s["reaction"] for s in dealii_run["steps"]])
    theirs = np.array([f for _, f in host.curve[1:]])
    scale = _scale(dealii_run)
    gap = float(np.abs(ours - theirs).max() / scale)
    print(
        f"\nreactions deal.II {np.round(ours, 3).tolist()}\n"
        f"          skfem   {np.round(theirs, 3).tolist()}\n"
        f"max |difference| / {scale:.1f} N = {gap:.2e}"
    )
    print(f"scikit-fem residuals:\n{rate_table([g.residuals for g in host.log], scale)}")
    # plastic: the unloaded bar keeps a residual force (the last step's reaction at zero
    # end displacement is not zero)
    assert not (abs(ours[-1]) <= 1e-3 * scale), ours
    assert gap <= REACTION_RTOL, f"deal.II {ours} vs scikit-fem {theirs}: {gap:.2e}"


def test_last_step_equals_python_material_point(dealii_run, j2_point):
    """py-eager's MaterialPoint at the program's last-step strains and old states gives
    its stresses and new states (the C++ notation conversions and MaterialPoint)."""
    last = dealii_run["last"]
    assert last["state_names"] == list(j2_point.state_names)
    batch = tuple(dealii_run["batch_shape"])

    def as_tensor(key: str) -> torch.Tensor:
        return torch.tensor(last[key], dtype=torch.float64).reshape(*batch, -1)

    strain, stress = as_tensor("strain"), as_tensor("stress")
    old, new = as_tensor("state_old"), as_tensor("state_new")
    n = len(dealii_run["steps"])
    res = j2_point.update(strain, j2_point.unpack(old), time=float(n), time_old=float(n - 1))
    assert bool(res.converged.all())
    e_stress = float((res.stress - stress).abs().max() / stress.abs().max())
    e_state = float((j2_point.pack(res.state) - new).abs().max() / new.abs().max())
    print(f"\nlast step vs py-eager: stress {e_stress:.2e}, state {e_state:.2e} (relative)")
    # plastic flow at the last step: the state changed
    assert not (float((new - old).abs().max()) <= 1e-8), "no plastic flow at the last step"
    assert e_stress <= POINT_RTOL and e_state <= POINT_RTOL, (e_stress, e_state)
