"""A failed implicit solve names its points: ConvergenceError's fields, per-point NaN.

Newton judges every batch point on its own. A point whose residual is NaN cannot
recover, so it fails alone: the loop stops once every other point has converged (it
used to run to ``max_its``), and the error lists that point with a worst residual of
``nan`` (it used to say ``inf``).
"""

from __future__ import annotations

import math
import pickle
import textwrap

import pytest
import torch
from test_block_seeds import _given
from test_implicit_chunks import _model
from test_jit import J2, _j2_inputs

from neml2.models import load_model
from neml2.solvers import Newton, NewtonWithLineSearch
from neml2.tensors import ConvergenceError

F64 = torch.float64


def _atan(u):
    """r = atan(u) per component (root 0); full Newton steps diverge from |u0| > 1.39."""
    return torch.atan(u), torch.diag_embed(1.0 / (1.0 + u * u))


def _u0(nan_row: int = 2) -> torch.Tensor:
    u0 = torch.tensor([[0.5, -0.3], [0.2, 0.1], [0.4, 0.4], [-0.6, 0.9]], dtype=F64)
    u0[nan_row, 1] = math.nan
    return u0


@pytest.mark.parametrize("solver", [Newton(), NewtonWithLineSearch()], ids=["newton", "ls"])
def test_a_nan_point_fails_alone_and_does_not_hold_the_loop(solver):
    res = solver.solve(_atan, _u0())
    assert res.converged.tolist() == [True, True, False, True]
    finite = res.u[[0, 1, 3]]
    assert bool((finite.abs() < 1e-10).all()), finite
    # the finite points converge in a handful of iterations; nothing waits for max_its
    assert 0 < int(res.iterations) < 10 < solver.opts["max_its"]
    with pytest.raises(ConvergenceError) as e:
        solver.check(res, "atan")
    err = e.value
    assert err.failed_indices == (2,)
    assert err.failed_mask.tolist() == [False, False, True, False]
    assert err.n_points == 4
    assert err.iterations == int(res.iterations)
    assert math.isnan(err.worst_residual)
    assert "atan: Newton did not converge at 1 of 4 points after" in str(err)
    assert "worst residual norm nan (failed points 2; abs_tol" in str(err)


def test_the_same_points_converge_with_and_without_the_nan_point():
    good = Newton().solve(_atan, _u0()[[0, 1, 3]])
    mixed = Newton().solve(_atan, _u0())
    torch.testing.assert_close(mixed.u[[0, 1, 3]], good.u, rtol=0, atol=1e-12)


def test_a_diverging_point_is_reported_with_its_residual():
    """Full Newton from u0 = 3 overshoots to infinity: a non-finite residual fails."""
    u0 = torch.tensor([[0.5], [3.0], [0.1]], dtype=F64)
    res = Newton().solve(_atan, u0)
    assert res.converged.tolist() == [True, False, True]
    with pytest.raises(ConvergenceError) as e:
        Newton().check(res, "atan")
    assert e.value.failed_indices == (1,)
    assert not (e.value.worst_residual <= 1.0)  # nan or large: never "small"


def _j2(tmp_path):
    p = tmp_path / "j2.i"
    p.write_text(textwrap.dedent(J2).lstrip())
    return load_model(p, "model")


def test_implicit_update_names_the_failed_points(tmp_path):
    model = _j2(tmp_path)
    x = _j2_inputs(6, seed=3)
    x["E"][4, 0] = math.nan
    x["E"][1, 2] = math.nan
    with torch.no_grad(), pytest.raises(ConvergenceError) as e:
        model.forward(x)
    err = e.value
    assert err.recoverable
    assert err.failed_indices == (1, 4)
    assert err.failed_mask.tolist() == [False, True, False, False, True, False]
    assert err.n_points == 6
    assert math.isnan(err.worst_residual)
    assert err.iterations is not None and err.iterations < 25
    assert "did not converge at 2 of 6 points" in str(err)
    assert "(failed points 1, 4;" in str(err)
    # the fields survive pickling (a worker process hands the error back)
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, ConvergenceError)
    assert str(back) == str(err)
    assert back.failed_indices == (1, 4) and back.iterations == err.iterations
    assert math.isnan(back.worst_residual)
    # and the finite points alone solve
    with torch.no_grad():
        model.forward({k: v[[0, 2, 3, 5]] for k, v in x.items()})


def test_a_multi_axis_batch_gets_flat_indices(tmp_path):
    model = _j2(tmp_path)
    x = {k: v.reshape(2, 3, *v.shape[1:]) for k, v in _j2_inputs(6, seed=4).items()}
    x["E"][1, 0, 0] = math.nan  # flat index 3
    with torch.no_grad(), pytest.raises(ConvergenceError) as e:
        model.forward(x)
    assert e.value.failed_indices == (3,)
    assert tuple(e.value.failed_mask.shape) == (2, 3)


def test_a_failed_chunk_reports_indices_into_the_whole_batch(tmp_path):
    """Points [7, 14) are solved together; the NaN at point 9 fails there, and the error
    names point 9 of the 20 (not point 2 of the chunk)."""
    model, _, _ = _model(tmp_path, "max_points_per_solve = 7")
    given = _given((20,))
    given["f"].data[9, 1] = math.nan
    with pytest.raises(ConvergenceError) as e:
        model(*[given[n] for n in model.input_spec])
    err = e.value
    assert err.failed_indices == (9,)
    assert err.n_points == 20
    assert "did not converge at 1 of 20 points" in str(err)
    assert "points [7, 14) of 20: solved 7 at a time" in str(err)
    assert "later points not attempted" in str(err)


def test_recorded_solves_report_status_instead_of_raising_when_unchecked(tmp_path):
    """The one mechanism the traced routes use (py-jit, neml2-compile's graphs and its
    sub-batch probe): the implicit updates log each solve; unchecked, a failed solve is
    logged, not raised; stopping turns the check back on."""
    from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording

    model = _j2(tmp_path)
    updates = implicit_updates(model)
    assert len(updates) == 1
    x = _j2_inputs(6, seed=3)
    x["E"][4, 0] = math.nan
    (log,) = record_solves(updates, check=False)
    try:
        with torch.no_grad():
            model.forward(x)  # no ConvergenceError
    finally:
        stop_recording(updates)
    assert len(log) >= 1
    converged, norms, iterations = log[0]
    assert converged.tolist() == [True, True, True, True, False, True]
    assert math.isnan(float(norms[4])) and int(iterations) >= 1
    with torch.no_grad(), pytest.raises(ConvergenceError):
        model.forward(x)  # checked again
    assert updates[0].solve_status.log is None
