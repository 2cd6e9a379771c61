"""NewtonWithLineSearch, written once: the same passes eagerly and traced.

A batch of scalar systems ``atan(u) = 0`` (full Newton steps diverge from
``|u0| > 1.39``) is solved and checked against the batched rule written out with
Python floats: the trial points of every search (so its step lengths), the iteration
count, the converged flags, the residual norms. Some points need cut-backs, others accept
the full step, and with few trials allowed a search runs out. Eagerly, the evaluations
are counted: with ``residual`` given a rejected trial costs a residual evaluation only.
``torch.compile(fullgraph=True)`` gives the same answers (a coupled two-unknown system
too).
"""

from __future__ import annotations

import math

import pytest
import torch

from neml2.solvers import NewtonWithLineSearch

F64 = torch.float64

# full step at 0.5 and -0.3; cut-backs at 3, -2 and 20; 0 is converged from the start
U0 = [0.5, 3.0, -2.0, 20.0, -0.3, 0.0]

OPTIONS = {
    "default": {},
    "few trials": {"max_linesearch_iterations": 3, "linesearch_cutback": 3.0, "max_its": 8},
    "strong wolfe": {"linesearch_type": "STRONG_WOLFE", "linesearch_stopping_criteria": 0.1},
}


def _atan(u):
    return torch.atan(u), torch.diag_embed(1.0 / (1.0 + u * u))


class _Recorder:
    """``_atan`` as ``fn`` (r and J) and as ``residual`` (r alone), logging each call's
    kind and point."""

    def __init__(self):
        self.calls: list[tuple[str, torch.Tensor]] = []

    def fn(self, u):
        self.calls.append(("fn", u.clone()))
        return _atan(u)

    def residual(self, u):
        self.calls.append(("residual", u.clone()))
        return torch.atan(u)

    def kinds(self) -> list[str]:
        return [k for k, _ in self.calls]


def _reference(u0: list[float], opts: dict) -> dict:
    """The batched line search on scalar ``atan`` systems, with Python floats.

    Returns:
        ``searches``: per iteration, the points evaluated by each trial (lists of
        floats); ``alphas``: the step lengths of each trial; ``u``, ``nr``, ``nr0``:
        per point; ``converged``: per point.
    """
    s = NewtonWithLineSearch(**opts).opts
    atol, rtol, max_its = s["abs_tol"], s["rel_tol"], s["max_its"]
    c, cut = s["linesearch_stopping_criteria"], s["linesearch_cutback"]
    wolfe = s["linesearch_type"] == "STRONG_WOLFE"
    max_trials = max(s["max_linesearch_iterations"] - 1, 1)
    u = list(u0)
    r = [math.atan(x) for x in u]
    nr0 = [abs(x) for x in r]

    def converged(i):
        return abs(r[i]) < atol or abs(r[i]) < rtol * nr0[i]

    # a point that converges while others have not takes that step too, then holds
    searches, alphas, done = [], [], [False] * len(u)
    while len(searches) < max_its and not all(converged(i) or done[i] for i in range(len(u))):
        du = [
            0.0 if done[i] else -ri * (1.0 + ui * ui)
            for i, (ui, ri) in enumerate(zip(u, r, strict=True))
        ]
        done = [done[i] or converged(i) for i in range(len(u))]
        alpha = [1.0] * len(u)
        points, steps = [], []
        for t in range(max_trials):
            u_try = [ui + a * d for ui, a, d in zip(u, alpha, du, strict=True)]
            r_try = [math.atan(x) for x in u_try]
            stop = []
            for i in range(len(u)):
                r2, nr2 = r[i] * r[i], r_try[i] * r_try[i]
                crit = (
                    (1.0 - c * alpha[i]) * r2 if wolfe else r2 + 2.0 * c * alpha[i] * r[i] * du[i]
                )
                stop.append(nr2 <= crit or nr2 <= atol * atol)
            points.append(u_try)
            steps.append(list(alpha))
            if all(stop) or t + 1 >= max_trials:
                break
            alpha = [a if st else a / cut for a, st in zip(alpha, stop, strict=True)]
        searches.append(points)
        alphas.append(steps)
        u, r = u_try, r_try
    nr = [abs(x) for x in r]
    return {
        "searches": searches,
        "alphas": alphas,
        "u": u,
        "nr": nr,
        "nr0": nr0,
        "converged": [converged(i) for i in range(len(u))],
    }


def _calls_with_residual(searches: list) -> list[tuple[str, list[float]]]:
    """The evaluations of an eager solve given ``residual``, as ``(kind, point)``: ``fn``
    at ``u0``; a search's first trial with ``fn`` when the search before it accepted its
    first trial (``u0`` counts as such), any other trial with ``residual``; then ``fn``
    at the accepted point where the accepted trial was evaluated with ``residual``."""
    calls, full_first = [("fn", U0)], True
    for points in searches:
        for t, p in enumerate(points):
            calls.append(("fn" if t == 0 and full_first else "residual", p))
        if calls[-1][0] == "residual":
            calls.append(("fn", points[-1]))
        full_first = len(points) == 1
    return calls


def _assert_points(calls: list, want: list) -> None:
    assert [k for k, _ in calls] == [k for k, _ in want]
    for (_, got), (_, p) in zip(calls, want, strict=True):
        torch.testing.assert_close(got.squeeze(-1), _t(p), rtol=1e-12, atol=1e-12)


def _t(x: list[float]) -> torch.Tensor:
    return torch.tensor(x, dtype=F64)


def test_the_rule_cuts_back_at_some_points_only():
    """The reference itself, pinned: the first search cuts ``α`` to 1/4 at ``u0 = 3``
    (worked out by hand: ``u = -9.49`` and ``-3.25`` fail, ``-0.12`` passes), to 1/32 at
    ``u0 = 20``, and leaves it at 1 where the full step already decreases ``|r|``;
    later searches take full steps."""
    want = _reference(U0, {})
    assert [len(points) for points in want["searches"]] == [6, 1, 1, 1, 1]
    assert want["alphas"][0][-1] == [1.0, 0.25, 0.5, 1 / 32, 1.0, 1.0]
    assert all(want["converged"])


@pytest.mark.parametrize("name", list(OPTIONS))
def test_eager_passes_follow_the_rule(name):
    """Eager, with and without ``residual``: every evaluation's kind and point in order,
    the iteration count, the converged flags and the residual norms."""
    opts = OPTIONS[name]
    want = _reference(U0, opts)
    searches = want["searches"]
    u0 = _t(U0).unsqueeze(-1)
    solver = NewtonWithLineSearch(**opts)
    every = _Recorder()
    res = solver.solve(every.fn, u0)
    assert int(res.iterations) == len(searches)
    assert res.converged.tolist() == want["converged"]
    # without residual, every trial (and u0) is evaluated with fn
    _assert_points(every.calls, [("fn", p) for search in [[U0], *searches] for p in search])
    torch.testing.assert_close(res.u.squeeze(-1), _t(want["u"]), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(res.residual_norm, _t(want["nr"]), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(res.initial_norm, _t(want["nr0"]), rtol=1e-15, atol=0.0)

    lean = _Recorder()
    got = solver.solve(lean.fn, u0, residual=lean.residual)
    expected_calls = _calls_with_residual(searches)
    _assert_points(lean.calls, expected_calls)
    # every case cuts back somewhere: the rejected trials cost no Jacobian
    assert any(len(points) > 1 for points in searches)
    assert lean.kinds().count("fn") < every.kinds().count("fn")
    for a, b in (
        (got.u, res.u),
        (got.iterations, res.iterations),
        (got.converged, res.converged),
        (got.residual_norm, res.residual_norm),
        (got.initial_norm, res.initial_norm),
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_eager_evaluation_counts():
    """The counts of the default case, written out: ``fn`` at u0; a first search of 6
    trials (the first with ``fn``, five with ``residual``, then ``J`` at the accepted
    point); the second search follows one that cut back, so its one trial is evaluated
    with ``residual`` and ``J`` after; the three searches after that follow a full step
    and evaluate their one trial with ``fn`` at once. 7 ``fn`` instead of 11."""
    c = _Recorder()
    NewtonWithLineSearch().solve(c.fn, _t(U0).unsqueeze(-1), residual=c.residual)
    first = ["fn", *["residual"] * 5, "fn"]
    assert c.kinds() == ["fn", *first, "residual", "fn", "fn", "fn", "fn"]
    every = _Recorder()
    NewtonWithLineSearch().solve(every.fn, _t(U0).unsqueeze(-1))
    assert every.kinds() == ["fn"] * (1 + 6 + 4)


def _coupled(u):
    """``r = (atan(u0 + u1/2), u1³/3 + u1 - u0/5)``: two unknowns, coupled."""
    a = u[..., 0] + 0.5 * u[..., 1]
    r = torch.stack([torch.atan(a), u[..., 1] ** 3 / 3 + u[..., 1] - 0.2 * u[..., 0]], -1)
    d = 1.0 / (1.0 + a * a)
    J = torch.stack(
        [
            torch.stack([d, 0.5 * d], -1),
            torch.stack([torch.full_like(d, -0.2), u[..., 1] ** 2 + 1], -1),
        ],
        -2,
    )
    return r, J


@pytest.mark.parametrize(
    ("fn", "u0", "name"),
    [
        (_atan, _t(U0).unsqueeze(-1), "few trials"),
        (_coupled, _t([[4.0, 3.0], [0.1, -0.2], [-5.0, 2.0], [0.0, 0.0]]), "default"),
    ],
    ids=["atan", "coupled"],
)
def test_compiled_solve_gives_the_eager_answers(fn, u0, name):
    """``torch.compile(fullgraph=True)`` (the ``while_loop`` graph) against the eager
    solve: the same iterates, iteration count and converged flags; norms to rounding
    (Inductor fuses the norm its own way)."""
    solver = NewtonWithLineSearch(**OPTIONS[name])

    def solve(u):
        res = solver.solve(fn, u)
        return res.u, res.iterations, res.converged, res.residual_norm, res.initial_norm

    want = solve(u0)
    assert int(want[1]) > 1
    torch._dynamo.reset()
    got = torch.compile(solve, fullgraph=True)(u0)
    for a, b in zip(got[:3], want[:3], strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    for a, b in zip(got[3:], want[3:], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-14, atol=1e-300)
