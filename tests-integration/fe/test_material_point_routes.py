"""The material-point API on the compiled routes equals py-eager.

The J2 tutorial model (examples/tutorials/3-implicit-j2/j2.i) is compiled once
(``stress:strain``, the tangent the API returns); py-aoti (the HIT stub that
``neml2.load_model`` and ``neml2.routes.open_model`` open) and cpp-aoti
(``neml2.aoti.Model``, through ``neml2.routes``) run that one artifact. On each: the
state and predictor-only inputs found (the compiled model has no sub-models to read:
the predictor probe decides), a load-reversal history rolled forward against py-eager
to 1e-10, and the per-point status of a point whose solve fails (a compiled route's
error names no points: the failed point is found by halving the batch).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2
import neml2.routes
from neml2.tensors import ConvergenceError

ROOT = Path(__file__).resolve().parents[2]
J2 = ROOT / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"
F64 = torch.float64


@pytest.fixture(scope="session")
def j2_artifact(tmp_path_factory):
    """The J2 tutorial model compiled once (a cold compile takes about 20-60 s)."""
    return neml2.routes.build_artifact(
        J2,
        "model",
        pairs=["stress:strain"],
        output_dir=tmp_path_factory.mktemp("mp-j2"),
        cache_dir=ROOT / "build" / "aoti-cache",
    )


@pytest.fixture(scope="module")
def eager():
    return neml2.MaterialPoint(neml2.load_model(J2, "model"))


def _compiled(how: str, artifact):
    if how == "stub":  # neml2.load_model of the artifact's HIT stub
        return neml2.load_model(artifact.stub_path, "model")
    return neml2.routes.open_model(how, J2, "model", artifact=artifact)


def _history():
    """Three points, nine steps: loading into plasticity, reversal, reverse yielding."""
    amp = torch.tensor([0, 1, 2, 3, 4, 3, 1, -1, -3, -2], dtype=F64) * 2e-3
    dirs = torch.tensor(
        [[1, -0.5, -0.5, 0, 0, 0], [1, 0.2, -0.1, 0.3, 0.1, 0.4], [0, 0, 0, 0, 0, 1.0]],
        dtype=F64,
    )
    return amp[:, None, None] * dirs  # (steps, 3, 6)


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-300))


@pytest.mark.parametrize("how", ["stub", "py-aoti", "cpp-aoti"])
def test_compiled_material_point_equals_py_eager(how, j2_artifact, eager):
    mp = neml2.MaterialPoint(_compiled(how, j2_artifact))
    assert mp.state_names == eager.state_names
    assert mp.state_shapes == eager.state_shapes
    assert mp.predictors == eager.predictors == ["flow_rate~1"]
    E = _history()
    s_c = mp.initial_state((3,))
    s_e = eager.pack(eager.initial_state((3,)))  # the packed form on one side
    worst = 0.0
    for k in range(1, E.shape[0]):
        kw = {"time": float(k), "time_old": float(k - 1)}
        rc = mp.update(E[k], s_c, **kw)
        re = eager.update(E[k], s_e, **kw)
        assert bool(rc.converged.all()) and bool(re.converged.all())
        worst = max(
            worst,
            _rel(rc.stress, re.stress),
            _rel(rc.tangent, re.tangent),
            _rel(mp.pack(rc.state), re.state),
        )
        s_c, s_e = mp.roll(rc.state), eager.roll(re.state)
    print(f"{how}: worst relative difference to py-eager {worst:.2e}")
    assert worst < 1e-10, worst
    assert float(eager.unpack(s_e)["equivalent_plastic_strain"].min()) > 1e-3


@pytest.mark.parametrize("how", ["py-aoti", "cpp-aoti"])
def test_compiled_per_point_status(how, j2_artifact, eager):
    mp = neml2.MaterialPoint(_compiled(how, j2_artifact))
    e = _history()[4].repeat(2, 1)  # six plastic points
    e[4, 1] = float("nan")
    s = mp.initial_state((6,))
    res = mp.update(e, s)
    assert res.converged.tolist() == [True, True, True, True, False, True]
    assert bool(torch.isfinite(res.stress).all()) and bool(torch.isfinite(res.tangent).all())
    keep = [0, 1, 2, 3, 5]
    ref = eager.update(e[keep], eager.initial_state((5,)))
    assert _rel(res.stress[keep], ref.stress) < 1e-10
    assert _rel(res.tangent[keep], ref.tangent) < 1e-10
    with pytest.raises(ConvergenceError, match="1 of 6 points"):
        mp.update(e, s, on_failure="raise")
