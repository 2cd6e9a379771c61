"""Eager solves on the active points only (``per_point``): a point leaves the batch once it
has settled, and the answer is the one of the loop over all points, bit for bit.

The systems are ``atan(u - a) * s = 0`` with a per-point shift ``a`` and a shared scale
``s``: the points start at different distances from their roots, so they settle after
different numbers of iterations (and, with the line search, some need cut-backs).
"""

from __future__ import annotations

import pytest
import torch

from neml2.solvers import Newton, NewtonWithLineSearch

F64 = torch.float64

# full Newton steps diverge from |u - a| > 1.39: U0 for the line search, U0_NEAR for both
U0 = torch.tensor([[0.5], [3.0], [-2.0], [20.0], [-0.3], [0.0], [1.0]], dtype=F64)
U0_NEAR = torch.tensor([[0.5], [1.3], [-1.4], [1.6], [-0.3], [0.0], [1.0]], dtype=F64)
SHIFT = torch.tensor([[0.0], [0.1], [-0.2], [0.3], [0.0], [0.0], [1.0]], dtype=F64)
SCALE = torch.tensor([2.0], dtype=F64)


class _Recorder:
    """``fn`` and ``residual`` of the shifted, scaled ``atan``, logging the points each
    call saw (how many)."""

    def __init__(self):
        self.sizes: list[int] = []

    def fn(self, u, a, s):
        self.sizes.append(u.shape[0])
        x = u - a
        return torch.atan(x) * s, torch.diag_embed(s / (1.0 + x * x))

    def residual(self, u, a, s):
        self.sizes.append(u.shape[0])
        return torch.atan(u - a) * s


SOLVERS = {
    "newton": (lambda: Newton(max_its=40), U0_NEAR),
    "line search": (lambda: NewtonWithLineSearch(max_its=40), U0),
    "few iterations": (lambda: NewtonWithLineSearch(max_its=3), U0),
}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_active_points_give_the_full_loops_answer(name):
    """Every field of the result equals the loop over all points (rtol = atol = 0),
    while the later passes evaluate fewer points: a point is evaluated once after the
    step that follows its convergence, then never again, so the last passes see only
    the slowest."""
    make, u0 = SOLVERS[name]
    solver = make()
    full, active = _Recorder(), _Recorder()
    want = solver.solve(full.fn, u0, SHIFT, SCALE, residual=full.residual)
    got = solver.solve(
        active.fn, u0, SHIFT, SCALE, residual=active.residual, per_point=(True, False)
    )
    if name != "few iterations":
        assert bool(want.converged.all())
    for a, b in (
        (got.u, want.u),
        (got.iterations, want.iterations),
        (got.converged, want.converged),
        (got.residual_norm, want.residual_norm),
        (got.initial_norm, want.initial_norm),
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert set(full.sizes) == {U0.shape[0]}
    assert active.sizes[0] == U0.shape[0]
    assert active.sizes[-1] < U0.shape[0]
    assert sum(active.sizes) < sum(full.sizes)


def test_converged_points_take_one_more_step_then_hold():
    """In the loop over all points, a point that converges while others go on takes that
    pass's step and then no other: with ``max_its`` cut at each count, its iterate
    changes at the pass after its convergence, and never after."""
    runs = [Newton(max_its=k).solve(_Recorder().fn, U0_NEAR, SHIFT, SCALE) for k in range(1, 8)]
    counts = [int(r.iterations) for r in runs]
    # point 0 (u0 = 0.5, a = 0) converges before point 3 (u0 = 1.6, a = 0.3)
    conv0 = next(k for k, r in enumerate(runs) if bool(r.converged[0]))
    assert not bool(runs[conv0].converged[3]) and counts[conv0] == conv0 + 1
    moved = runs[conv0 + 1].u[0] != runs[conv0].u[0]
    assert bool(moved)
    for r in runs[conv0 + 1 :]:
        assert r.u[0].item() == runs[conv0 + 1].u[0].item()
    # the point at its root from the start: its step is zero, it stays exactly there
    assert runs[-1].u[-1, 0].item() == 1.0 and bool(runs[-1].converged.all())


def test_a_point_that_goes_non_finite_leaves_alone():
    """A NaN point settles (lost) at the first pass and leaves after one more: the others
    still converge, and the result reports it alone, as the full loop does."""
    u0 = U0_NEAR.clone()
    u0[2, 0] = torch.nan
    rec = _Recorder()
    got = Newton().solve(rec.fn, u0, SHIFT, SCALE, per_point=(True, False))
    want = Newton().solve(_Recorder().fn, u0, SHIFT, SCALE)
    assert got.converged.tolist() == want.converged.tolist()
    assert got.converged.tolist() == [True, True, False, True, True, True, True]
    assert rec.sizes[1] == U0.shape[0] and rec.sizes[2] < U0.shape[0]
    torch.testing.assert_close(got.u, want.u, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize(
    ("u0", "args", "flags", "match"),
    [
        (U0.reshape(7), (SHIFT,), (True,), r"u0 of shape \(N, n\)"),
        (U0, (SHIFT, SCALE), (True,), "one flag per arg"),
        (U0, (SHIFT[:3], SCALE), (True, False), r"has shape \(3, 1\), not 7 points first"),
    ],
)
def test_bad_per_point_flags_are_refused(u0, args, flags, match):
    with pytest.raises(ValueError, match=match):
        Newton().solve(lambda u, *a: (u, u), u0, *args, per_point=flags)


def _kinked(u, kind):
    """Point kind 0: ``r = u`` (u >= 0) or ``3u`` (u < 0), with a Jacobian of 0.5 where
    u >= 0 (twice the true slope: the step there overshoots the root into u < 0, where the
    Jacobian is exact); kind 1: ``atan(u)``, exact."""
    r = torch.where(kind > 0, torch.atan(u), torch.where(u >= 0, u, 3.0 * u))
    dr = torch.where(kind > 0, 1.0 / (1.0 + u * u), torch.where(u >= 0, 0.5, 3.0))
    return r, torch.diag_embed(dr)


def test_a_point_whose_extra_step_leaves_the_tolerance_goes_on():
    """A point that has settled takes one more step while others go on; when that step
    takes it out of the tolerance (here: a loose abs_tol and a kink, as float32 and a
    yield surface give), it is not held there but iterates on, and the solve converges
    everywhere. The eager active-point loop and the loop over all points agree."""
    u0 = torch.tensor([[0.09], [1.3]], dtype=F64)  # point 0 starts inside abs_tol
    kind = torch.tensor([[0.0], [1.0]], dtype=F64)
    solver = Newton(abs_tol=0.1, rel_tol=1e-12, max_its=20)
    one = Newton(abs_tol=0.1, rel_tol=1e-12, max_its=1).solve(_kinked, u0, kind)
    # its step after settling took it out of the tolerance (u = -0.09, r = -0.27)
    assert not bool(one.converged[0]) and abs(one.u[0].item() + 0.09) < 1e-15
    want = solver.solve(_kinked, u0, kind)
    got = solver.solve(_kinked, u0, kind, per_point=(True,))
    assert bool(want.converged.all()) and bool(got.converged.all())
    assert abs(want.u[0].item()) < 1e-15  # the root, reached from u < 0
    for a, b in ((got.u, want.u), (got.iterations, want.iterations)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def _fields(res):
    return [
        getattr(res, f) for f in ("u", "iterations", "converged", "residual_norm", "initial_norm")
    ]


class _Linear:
    """``r = s (u - a)``: one Newton step is exact. Logs which function each call was."""

    def __init__(self):
        self.calls: list[str] = []

    def fn(self, u, a, s):
        self.calls.append("fn")
        return (u - a) * s, torch.diag_embed(s.expand_as(u))

    def residual(self, u, a, s):
        self.calls.append("residual")
        return (u - a) * s


def test_after_a_one_step_solve_the_first_iterate_has_no_jacobian():
    """A solve that stopped after one iteration arms the next one to evaluate its first
    iterate with ``residual`` alone (its Jacobian would go unused when it is the last):
    the same answer, bit for bit, with one evaluation with the Jacobian fewer."""
    solver, sys = Newton(), _Linear()
    u0 = torch.zeros(7, 1, dtype=F64)
    pp = (True, False)
    first = solver.solve(sys.fn, u0, SHIFT, SCALE, residual=sys.residual, per_point=pp)
    assert sys.calls == ["fn", "fn"] and int(first.iterations) == 1
    sys.calls.clear()
    second = solver.solve(sys.fn, u0, SHIFT, SCALE, residual=sys.residual, per_point=pp)
    assert sys.calls == ["fn", "residual"]
    for a, b in zip(_fields(first), _fields(second), strict=True):
        assert torch.equal(a, b)


def test_a_probe_that_does_not_settle_goes_on_with_the_jacobian():
    """Armed by a one-step solve, a solve that needs more iterations evaluates the first
    iterate again with ``fn`` and goes on as the plain loop does (the same answer bit
    for bit); it then disarms the next solve."""
    solver, lin, atan = Newton(max_its=40), _Linear(), _Recorder()
    pp = (True, False)
    solver.solve(
        lin.fn, torch.zeros(7, 1, dtype=F64), SHIFT, SCALE, residual=lin.residual, per_point=pp
    )
    calls = []
    fn = lambda *a: (calls.append("fn"), atan.fn(*a))[1]  # noqa: E731
    res = lambda *a: (calls.append("residual"), atan.residual(*a))[1]  # noqa: E731
    got = solver.solve(fn, U0_NEAR, SHIFT, SCALE, residual=res, per_point=pp)
    # the probe, then fn again there; the last iterate, predicted, has no Jacobian either
    assert calls[:3] == ["fn", "residual", "fn"] and calls.count("residual") == 2
    assert calls[-1] == "residual"
    want = Newton(max_its=40).solve(
        atan.fn, U0_NEAR, SHIFT, SCALE, residual=atan.residual, per_point=pp
    )
    for a, b in zip(_fields(got), _fields(want), strict=True):
        assert torch.equal(a, b)
    calls.clear()
    solver.solve(fn, U0_NEAR, SHIFT, SCALE, residual=res, per_point=pp)
    # disarmed (the last solve took more than one iteration): fn at the first iterate
    assert calls[:2] == ["fn", "fn"] and calls.count("residual") == 1


@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("prediction", ["model", "always", "never"])
def test_a_predicted_last_iterate_has_no_jacobian(name, prediction, monkeypatch):
    """An iterate that Newton's quadratic convergence predicts to settle every active
    point is evaluated with ``residual`` alone (its Jacobian would go unused: the loop
    stops there); a wrong prediction (forced: "always") costs ``fn`` at that iterate
    afterwards. The answer is the plain loop's, bit for bit, either way."""
    import neml2.solvers.newton as newton

    make, u0 = SOLVERS[name]
    want_rec = _Recorder()
    monkeypatch.setattr(newton, "_likely_last", lambda *a: False)
    want = make().solve(
        want_rec.fn, u0, SHIFT, SCALE, residual=want_rec.residual, per_point=(True, False)
    )
    monkeypatch.undo()
    if prediction != "model":
        monkeypatch.setattr(newton, "_likely_last", lambda *a: prediction == "always")
    calls = []
    rec = _Recorder()
    fn = lambda *a: (calls.append("fn"), rec.fn(*a))[1]  # noqa: E731
    res = lambda *a: (calls.append("residual"), rec.residual(*a))[1]  # noqa: E731
    got = make().solve(fn, u0, SHIFT, SCALE, residual=res, per_point=(True, False))
    for a, b in zip(_fields(got), _fields(want), strict=True):
        assert torch.equal(a, b)
    if prediction == "model" and name == "newton":  # quadratic from the start
        assert calls[-1] == "residual"  # the settling iterate, predicted
        assert calls.count("fn") == len(want_rec.sizes) - 1
    if prediction == "always" and name == "newton":
        # every iterate but the last is a wrong guess, followed by fn at that iterate
        assert calls == ["fn"] + ["residual", "fn"] * (len(want_rec.sizes) - 2) + ["residual"]


def test_likely_last_extrapolates_quadratic_convergence():
    from neml2.solvers.newton import _likely_last, _threshold

    nr0 = torch.tensor([1.0, 1.0, float("inf")], dtype=F64)
    thr = _threshold(nr0, 1e-10, 1e-8)
    assert thr.tolist() == [1e-8, 1e-8, 1e-10]  # rel_tol |r0|, or abs_tol without a finite |r0|
    prev = torch.tensor([1e-2, 1e-2, 1e-2], dtype=F64)
    # 1e-5 after 1e-2: next ~1e-11, a decade below every point's threshold
    assert _likely_last(torch.tensor([1e-5, 1e-5, 1e-5], dtype=F64), prev, thr)
    # one point converging slowly: not yet
    assert not _likely_last(torch.tensor([1e-5, 5e-3, 1e-5], dtype=F64), prev, thr)
    # 2e-5 after 1e-2: next ~8e-11, a decade below 1e-8 but not below abs_tol = 1e-10
    two = torch.tensor([2e-5, 2e-5, 2e-5], dtype=F64)
    assert _likely_last(two[:2], prev[:2], thr[:2])
    assert not _likely_last(two, prev, thr)
    assert not _likely_last(torch.tensor([1e-5], dtype=F64), None, thr[:1])
    assert not _likely_last(torch.tensor([float("nan")], dtype=F64), prev[:1], thr[:1])


@pytest.mark.parametrize("atol,rtol", [(1e-10, 1e-8), (0.0, 1e-8), (1e-10, 0.0), (0.3, 0.5)])
def test_threshold_is_the_convergence_test(atol, rtol):
    """``nr < _threshold(nr0)`` decides as :func:`_converged` does, NaN and inf included."""
    from neml2.solvers.newton import _converged, _threshold

    vals = [0.0, 1e-12, 1e-9, 1e-7, 0.2, 0.4, 1.0, 3.0, float("inf"), float("nan")]
    nr = torch.tensor(vals, dtype=F64).repeat_interleave(len(vals))
    nr0 = torch.tensor(vals, dtype=F64).repeat(len(vals))
    assert torch.equal(nr < _threshold(nr0, atol, rtol), _converged(nr, nr0, atol, rtol))
