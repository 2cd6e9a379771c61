"""``run_loop`` under torch.export: carried state with broadcast (stride-0) tensors.

The J2 radial-return benchmark input failed to export with "Expected body_fn_output and
carried_inputs to have same metadata ... stride: (1,) vs (0,)": one of the tensors the
Newton loop carries was a batch-broadcast view. No AOT Inductor compile here (cheap).
"""

from __future__ import annotations

import torch

from neml2.solvers.newton import run_loop

F64 = torch.float64


class _Loop(torch.nn.Module):
    """Three passes of ``y <- y + s`` where ``s`` is a scalar broadcast over the batch."""

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        s_b = s.expand(x.shape[0])  # stride (0,): what tripped the export

        def cond(i, y, c):
            return i < 3

        def body(i, y, c):
            return i + 1, y + c, c

        return run_loop(cond, body, (torch.zeros((), dtype=torch.int64), x, s_b))[1]


def test_broadcast_carried_input_exports_and_runs():
    x = torch.arange(5, dtype=F64)
    s = torch.tensor(0.5, dtype=F64)
    b = torch.export.Dim("b", min=1)
    ep = torch.export.export(_Loop(), (x, s), dynamic_shapes=({0: b}, None), strict=False)
    torch.testing.assert_close(ep.module()(x, s), x + 1.5)
    # a batch of one through the same program (no 0/1 specialization)
    x1 = torch.tensor([2.0], dtype=F64)
    torch.testing.assert_close(ep.module()(x1, s), x1 + 1.5)


def test_eager_loop_is_the_same_function():
    x = torch.arange(5, dtype=F64)
    torch.testing.assert_close(_Loop()(x, torch.tensor(0.5, dtype=F64)), x + 1.5)


def _atan(u):
    """r = atan(u) per component: full Newton steps diverge from |u0| > 1.39."""
    return torch.atan(u), torch.diag_embed(1.0 / (1.0 + u * u))


class _Solve(torch.nn.Module):
    def __init__(self, solver):
        super().__init__()
        self.solver = solver

    def forward(self, u0: torch.Tensor) -> torch.Tensor:
        return self.solver.solve(_atan, u0).u


def _count(ep, target) -> int:
    return sum(
        1
        for gm in ep.graph_module.modules()
        if isinstance(gm, torch.fx.GraphModule)
        for n in gm.graph.nodes
        if n.op == "call_function" and n.target is target
    )


def test_line_search_is_two_loops_in_the_graph():
    """The trial points of the line search are passes of an inner loop, not an unrolled
    sequence: the residual appears twice in the program however many trials are allowed
    (``fn`` at the accepted points in the Newton loop's body, whose first pass evaluates
    the initial guess; the residual alone in the search loop's body), also exported under
    ``no_grad`` (as ``ImplicitUpdate`` solves), and the traced solve equals the eager one
    bit for bit, at batch 3 and 1."""
    from neml2.solvers import NewtonWithLineSearch

    u0 = torch.tensor([[3.0, -4.0], [0.1, 10.0], [2.0, 0.5]], dtype=F64)
    b = torch.export.Dim("b", min=1)
    for trials in (5, 10):
        m = _Solve(NewtonWithLineSearch(max_linesearch_iterations=trials, max_its=30))
        with torch.no_grad():
            ep = torch.export.export(m, (u0,), dynamic_shapes=({0: b},), strict=False)
        assert _count(ep, torch.ops.aten.atan.default) == 2
        u = m(u0)
        assert u.abs().max() < 1e-8  # converged where plain Newton diverges
        torch.testing.assert_close(ep.module()(u0), u, rtol=0, atol=0)
        torch.testing.assert_close(ep.module()(u0[1:2]), m(u0[1:2]), rtol=0, atol=0)


def test_newton_evaluates_the_residual_once_in_the_graph():
    """Plain Newton: the residual and Jacobian are evaluated only in the loop body (no
    copy before the loop for the initial residual), also exported under ``no_grad`` (as
    ``ImplicitUpdate`` solves), and the traced solve equals the eager one bit for bit at
    batch 3 and 1, including the iteration count."""
    from neml2.solvers import Newton

    class _Its(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.solver = Newton(max_its=30)

        def forward(self, u0):
            res = self.solver.solve(_atan, u0)
            return res.u, res.iterations, res.initial_norm

    u0 = torch.tensor([[1.0, -0.5], [0.1, 1.2], [0.3, 0.0]], dtype=F64)
    b = torch.export.Dim("b", min=1)
    m = _Its()
    with torch.no_grad():
        ep = torch.export.export(m, (u0,), dynamic_shapes=({0: b},), strict=False)
    assert _count(ep, torch.ops.aten.atan.default) == 1
    for x in (u0, u0[1:2]):
        want = m(x)
        # converged: |atan(u)| below abs_tol or below rel_tol times the first norm
        assert int(want[1]) > 0 and want[0].abs().max() < 1e-8
        for got, w in zip(ep.module()(x), want, strict=True):
            torch.testing.assert_close(got, w, rtol=0, atol=0)


def _atan_alone(u):
    return torch.atan(u)


def test_newton_with_the_residual_alone_takes_jacobians_only_for_steps():
    """Plain Newton traced with ``residual=``: the residual of ``u0`` before the loop and
    of each new iterate in the body, the Jacobian once in the body (for the step), so the
    pass that finds the batch converged evaluates no Jacobian and solves nothing. The
    iterates, the iteration count and the norms equal the eager solve's bit for bit: at
    batch 3 and 1, for a guess already converged (no pass at all), for a point that
    never converges (the loop ends at ``max_its``) and for a NaN point (it settles at
    once, the others go on)."""
    from neml2.solvers import Newton

    class _Its(torch.nn.Module):
        def __init__(self, max_its):
            super().__init__()
            self.solver = Newton(max_its=max_its)

        def forward(self, u0):
            res = self.solver.solve(_atan, u0, residual=_atan_alone)
            return res.u, res.iterations, res.initial_norm, res.residual_norm, res.converged

    u0 = torch.tensor([[1.0, -0.5], [0.1, 1.2], [0.3, 0.0]], dtype=F64)
    cases = {
        30: (
            u0,
            u0[1:2],
            torch.zeros(2, 2, dtype=F64),
            u0.clone().index_fill_(0, torch.tensor([1]), torch.nan),
        ),
        # a Newton step from |u| = 1.5 overshoots (atan's steps diverge from 1.39 on)
        4: (torch.tensor([[1.5, 0.2], [0.2, 0.1]], dtype=F64),),
    }
    b = torch.export.Dim("b", min=1)
    for max_its, inputs in cases.items():
        m = _Its(max_its)
        with torch.no_grad():
            ep = torch.export.export(m, (u0,), dynamic_shapes=({0: b},), strict=False)
        assert _count(ep, torch.ops.aten.diag_embed.default) == 1
        # u0's residual before the loop (the plain loop evaluates u0 in its body)
        top = [n for n in ep.graph.nodes if n.target is torch.ops.aten.atan.default]
        assert len(top) == 1
        for x in inputs:
            want = m(x)
            for got, w in zip(ep.module()(x), want, strict=True):
                torch.testing.assert_close(got, w, rtol=0, atol=0, equal_nan=True)
    # what the cases cover: no pass, a full solve, max_its reached, a NaN point
    assert int(_Its(30)(torch.zeros(2, 2, dtype=F64))[1]) == 0
    assert int(_Its(30)(u0)[1]) > 2
    diverged = _Its(4)(cases[4][0])
    assert int(diverged[1]) == 4 and not bool(diverged[4][0])
    nan = _Its(30)(cases[30][3])
    assert not bool(nan[4][1]) and bool(nan[4][0]) and bool(nan[4][2])


def test_loop_inputs_are_distinct_tensors():
    """One tensor passed twice as carried state becomes two loop inputs (AOT Inductor
    rejects a while_loop whose inputs alias: "cond_fn might be aliasing the input")."""

    class _Twice(torch.nn.Module):
        def forward(self, x):
            i0 = torch.zeros((), dtype=torch.int64)

            def cond(i, j, y):
                return i < 2

            def body(i, j, y):
                return i + 1, j + 2, y * 2

            return run_loop(cond, body, (i0, i0, x))[2]

    b = torch.export.Dim("b", min=1)
    x = torch.arange(3, dtype=F64)
    ep = torch.export.export(_Twice(), (x,), dynamic_shapes=({0: b},), strict=False)
    (loop,) = [n for n in ep.graph.nodes if n.target is torch.ops.higher_order.while_loop]
    carried = loop.args[2]
    # the three given, plus run_loop's own pass counter
    assert len({id(a) for a in carried}) == len(carried) == 4
    torch.testing.assert_close(ep.module()(x), 4 * x)


def test_zero_pass_loop_returns_its_initial_state():
    """A loop whose condition is false at once returns the initial values, read through
    a select on the pass count (so the initial buffers stay alive until read; Inductor
    reused them for later outputs when the loop's result was the bare initial buffer)."""

    class _Maybe(torch.nn.Module):
        def forward(self, x, stop):
            i0 = torch.zeros((), dtype=torch.int64)
            y0 = 2.0 * x

            def cond(i, y):
                return (i < 3) & (y.sum() < stop)

            def body(i, y):
                return i + 1, y + 1.0

            i, y = run_loop(cond, body, (i0, y0))
            return y * 3.0, i

    b = torch.export.Dim("b", min=1)
    x = torch.arange(3, dtype=F64)
    stop = torch.tensor(0.0, dtype=F64)
    ep = torch.export.export(_Maybe(), (x, stop), dynamic_shapes=({0: b}, None), strict=False)
    wheres = _count(ep, torch.ops.aten.where.self)
    assert wheres == 2  # one select per carried tensor
    for s, its in ((0.0, 0), (100.0, 3)):
        y, i = ep.module()(x, torch.tensor(s, dtype=F64))
        assert int(i) == its
        torch.testing.assert_close(y, 3.0 * (2.0 * x + its))
