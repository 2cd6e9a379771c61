"""Newton's method (optionally with a backtracking line search) over a batch of systems.

The loop is written once with ``torch._higher_order_ops.while_loop`` (a
data-dependent stop), so the same code runs eagerly, under ``torch.compile`` and
inside an exported graph. Convergence is judged per batch point:
``‖r‖ < abs_tol`` or ``‖r‖ / ‖r0‖ < rel_tol``; a non-finite residual never counts
as converged. Every batch point is solved on its own (the norms, the line search's
step lengths and the linear solves are per point), so a point whose residual is NaN
or infinite fails alone: it cannot recover (its next iterate is NaN), so the loop
stops once every point has converged or gone non-finite, and the finite points are
solved as if it were not there. A point that settles (converges or goes non-finite)
while others go on takes that pass's step too, and holds once it has settled at two
iterates in a row: eagerly it leaves the batch the solver works on, traced its later
steps are zero (:func:`_holds`).
:meth:`Newton.check` reports the failed points in a
:class:`~neml2.tensors.ConvergenceError` (indices, iterations, worst residual).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch._higher_order_ops import while_loop

from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.solvers.linear import DenseLU, LinearSolver
from neml2.tensors import ConvergenceError, FatalError
from neml2.tensors._tangents import _tracing

#: ``fn(u, *args) -> (r, J)``: residual ``(*B, n)`` and Jacobian ``(*B, n, n)`` at ``u``.
ResidualFn = Callable[..., tuple[torch.Tensor, torch.Tensor]]


@dataclass
class NewtonResult:
    """The solution and the per-point status of a batched Newton solve.

    A solve does not raise when points fail; :meth:`Newton.check` does.

    Attributes:
        u: the last iterate, ``(*B, n)``.
        iterations: the Newton iterations the loop ran (one count for the
            whole batch), a 0-dim ``int64`` tensor.
        converged: whether each point converged, ``(*B,)`` bool.
        residual_norm: ``‖r‖`` at ``u``, ``(*B,)``.
        initial_norm: ``‖r‖`` at the initial guess, ``(*B,)``.
    """

    u: torch.Tensor
    iterations: torch.Tensor  # () int64
    converged: torch.Tensor  # (*B,) bool
    residual_norm: torch.Tensor  # (*B,)
    initial_norm: torch.Tensor  # (*B,)


def run_loop(cond, body, state: tuple):
    """``while cond(*state): state = body(*state)``.

    Traced (torch.compile / torch.export): the ``while_loop`` higher-order op,
    so the data-dependent loop lives inside the graph. Eager: the same two
    functions in a Python loop (eager ``while_loop`` would re-trace them on
    every call).
    """
    if _tracing():

        def body_no_alias(*s):
            out = body(*s)
            # while_loop outputs may not alias its inputs
            return tuple(o.clone() if any(o is x for x in s) else o for o in out)

        # carried tensors must keep their metadata through the body: a broadcast
        # (stride-0) input would come back from the body with dense strides; and no two
        # may be one tensor (AOT Inductor refuses a loop whose inputs alias each other)
        carried: list[torch.Tensor] = []
        for s in state:
            s = s.contiguous()
            carried.append(s.clone() if any(s is c for c in carried) else s)
        # A loop that runs zero times returns its initial buffers, and Inductor (torch
        # 2.13) may hand such a buffer to a later kernel as its output while the loop's
        # result still points at it: wrong results, no error (seen with J2 radial return
        # in a transient run, whose predictor is often already converged). Counting the
        # passes and selecting the initial value when there were none keeps every
        # initial buffer alive until it has been read.
        passes0 = torch.zeros((), dtype=torch.int64, device=carried[0].device)
        passes, *out = while_loop(
            lambda n, *s: cond(*s),
            lambda n, *s: (n + 1, *body_no_alias(*s)),
            (passes0, *carried),
        )
        ran = passes > 0
        return tuple(torch.where(ran, o, s) for o, s in zip(out, carried, strict=True))
    while bool(cond(*state)):
        state = body(*state)
    return state


def _choose(pred: bool | torch.Tensor, if_true, if_false) -> tuple:
    """``if_true()`` or ``if_false()`` (tuples of tensors of equal shapes) by *pred* (a
    bool, or a 0-dim bool tensor): eagerly only the chosen branch runs (a Python ``if``);
    traced, both run and each output is selected with ``torch.where`` (no data-dependent
    control flow in the graph)."""
    if not _tracing():
        return if_true() if bool(pred) else if_false()
    return tuple(torch.where(pred, a, b) for a, b in zip(if_true(), if_false(), strict=True))


def _converged(nr, nr0, atol, rtol):
    # a relative test needs a finite first norm (rtol * inf would pass any finite norm)
    return torch.isfinite(nr) & ((nr < atol) | ((nr < rtol * nr0) & torch.isfinite(nr0)))


def _threshold(nr0, atol, rtol):
    """``(*B,)``: the residual norm below which a point has converged, ``abs_tol`` or, where
    ``‖r0‖`` *nr0* is finite and it is larger, ``rel_tol ‖r0‖``: :func:`_converged` is
    ``nr < _threshold(nr0, ...)`` (a NaN or inf norm compares false), one comparison per
    iteration instead of seven operations."""
    return torch.where(torch.isfinite(nr0), torch.clamp(rtol * nr0, min=atol), atol)


def _likely_last(nr, nr_prev, thr) -> bool:
    """Whether the next Newton iterate will likely settle every point (eager only).

    Newton's residual near a root falls as ``r_next ≈ C r²``; with ``C`` estimated from
    the last step (``r / r_prev²``), ``r_next ≈ r³ / r_prev²``, asked to lie a decade
    below the point's tolerance *thr* (:func:`_threshold`). A wrong guess costs one
    residual evaluation, never a different iterate (the caller evaluates the Jacobian at
    that iterate after all). None before the first step: ``False``. Chaboche 2 (three
    iterations per step): one evaluation with tangents in four becomes one without.
    """
    if nr_prev is None:
        return False
    return bool((nr * nr * nr <= 0.1 * thr * nr_prev * nr_prev).all())


def _settled(nr, nr0, atol, rtol):
    """Points that need no further iteration: converged, or non-finite (lost for good)."""
    return _converged(nr, nr0, atol, rtol) | ~torch.isfinite(nr)


def _holds(done: torch.Tensor, prev: torch.Tensor, settled: torch.Tensor) -> torch.Tensor:
    """The points ``(*B,)`` that hold from this pass on: those *done* already, and those
    *settled* at this iterate that had settled at the previous one (*prev*).

    The rule, the same on every route: a point that settles at a pass where others have
    not takes that pass's step too (near a root Newton's step squares the error, so the
    point ends more accurate than the tolerance that stopped it: as accurate as where the
    loop over all points had it go on). If it is still settled after that step it holds
    from then on; if the step left the tolerance (a loose ``abs_tol`` in float32, a kink
    in the residual), it goes on as any other point. So a held point's residual is always
    one that settled, an eager solve that drops the held points
    (:meth:`Newton._iterate_active`) and a traced loop over all of them give the same
    iterates."""
    return done | (settled & prev)


def _held(hold: torch.Tensor, du: torch.Tensor) -> torch.Tensor:
    """The step *du* ``(*B, n)``, zero at the points that *hold* ``(*B,)``."""
    return torch.where(hold.unsqueeze(-1), torch.zeros_like(du), du)


def _check_tolerances(opts: dict, where: str) -> None:
    """A FatalError at *where* when ``abs_tol`` and ``rel_tol`` are both 0: no point
    would ever count as converged (each alone may be 0, to judge by the other)."""
    if opts.get("abs_tol", 1.0) == 0.0 and opts.get("rel_tol", 1.0) == 0.0:
        raise FatalError(
            f"{where}: abs_tol and rel_tol are both 0, so no point could converge; "
            "set at least one of them > 0"
        )


@register()
class Newton:
    """Newton-Raphson: ``u ← u - J(u)⁻¹ r(u)`` until every point converges.

    A point has converged when ``‖r‖ < abs_tol`` or ``‖r‖ / ‖r0‖ < rel_tol``
    (a non-finite residual never counts); the loop stops when every point has
    converged or gone non-finite, or after ``max_its`` iterations. ``max_its`` is at
    least 1; the tolerances are finite and ``>= 0``, not both 0 (a load error otherwise).

    Attributes:
        opts: the option values, defaults filled in (``dict``).
        linear: the linear solver of each step ``J du = -r``.
    """

    SECTION = "Solvers"
    fields = (
        option(
            "abs_tol",
            float,
            1e-10,
            bounds="[0, inf)",
            doc="absolute tolerance on the residual norm (0: only rel_tol counts)",
        ),
        option(
            "rel_tol",
            float,
            1e-8,
            bounds="[0, inf)",
            doc="tolerance on the residual norm relative to the first (0: only abs_tol counts)",
        ),
        option("max_its", int, 25, bounds="[1, inf)", doc="maximum number of iterations"),
        option("linear_solver", str, "", doc="[Solvers] block of the linear solver (DenseLU)"),
        option("verbose", bool, False, doc="print the residual norm per iteration"),
    )
    hit_name: str | None = None

    def __init__(self, linear: LinearSolver | None = None, **values):
        """Make a solver from a linear solver and option values.

        Args:
            linear: the solver of ``J du = -r`` (default ``None``: a
                :class:`~neml2.solvers.DenseLU`).
            **values (Any): the options, each with its default: ``abs_tol``
                (``1e-10``), ``rel_tol`` (``1e-8``), ``max_its`` (25),
                ``verbose`` (``False``: print the residual norm per iteration
                when ``True``), ``linear_solver`` (the name of a ``[Solvers]``
                block; :meth:`from_hit` builds it, here it is only recorded).
                :class:`NewtonWithLineSearch` adds its line-search options.

        Raises:
            FatalError: an option the class does not have.
        """
        self.opts = Schema.of(type(self)).fill_defaults(values, type(self).__name__)
        _check_tolerances(self.opts, type(self).__name__)
        self.linear = linear or DenseLU()
        # the last eager solve over active points stopped after at most one iteration
        # (_solve_active then evaluates the first iterate without the Jacobian)
        self._one_step = False

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the solver of a ``[Solvers]`` block of an input file.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built.

        Returns:
            (Newton): The solver, an instance of *cls*; its linear solver is the block
                that ``linear_solver`` names, built first, or a
                :class:`~neml2.solvers.DenseLU`.

        Raises:
            FatalError: an unknown option or a bad value, or a
                ``linear_solver`` block that is missing or is not a linear
                solver; the message names the location.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        _check_tolerances(values, f"{node.location}: [{node.fullpath}]")
        linear = None
        if values.get("linear_solver"):
            p = node.param("linear_solver")
            linear = ctx.object("Solvers", values["linear_solver"], p.location)
            if not isinstance(linear, LinearSolver):
                raise ctx_error(p, f"'{values['linear_solver']}' is not a linear solver")
        return cls(linear=linear, **values)

    # ------------------------------------------------------------------ the loop
    def solve(
        self,
        fn: ResidualFn,
        u0: torch.Tensor,
        *args: torch.Tensor,
        residual: Callable[..., torch.Tensor] | None = None,
        per_point: tuple[bool, ...] | None = None,
    ) -> NewtonResult:
        """Solve ``r(u) = 0`` at every batch point, starting from ``u0``.

        Every pass of the loop evaluates ``r`` and ``J`` at the current iterate, tests
        convergence, and takes the Newton step unless it stops. So a traced graph holds
        one copy of the residual and Jacobian evaluation (in the loop body) instead of
        two (one before the loop for ``r0``): smaller compiled code, and 15-25 % shorter
        cold AOTI compiles of the benchmark models (docs/aoti.md). Eagerly the stopping
        pass skips the linear solve; traced, it solves and discards the step, unless
        *residual* is given: then the traced loop evaluates ``J`` only where a step is
        due (:meth:`_solve_traced`).

        Args:
            fn: ``fn(u, *args) -> (r, J)``: the residual ``(*B, n)`` and its
                Jacobian ``(*B, n, n)`` at ``u`` ``(*B, n)``.
            u0: the initial guess, ``(*B, n)``.
            *args: tensors passed through to *fn* (and carried through the loop
                when traced).
            residual: the residual alone, ``residual(u, *args) -> r``: an eager
                solve over active points (*per_point*) evaluates with it the iterates
                likely to be the last (see :meth:`_solve_active`); a traced solve,
                every residual (see :meth:`_solve_traced`); otherwise not used.
            per_point: one flag per arg, ``True`` where the arg holds one entry per
                point (its first axis is ``u0``'s, and ``u0`` is ``(N, n)``). With
                it, an eager solve iterates only the points not yet settled (see
                :meth:`_solve_active`); without it (the default), every point takes
                the Newton steps until all have settled.

        Returns:
            The last iterate and the per-point status. Points that did not
                converge are reported there, not raised; see :meth:`check`.
        """
        if per_point is not None and not _tracing():
            return self._solve_active(fn, u0, args, per_point, residual)
        if residual is not None and _tracing():
            return self._solve_traced(fn, residual, u0, args)
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        verbose = self.opts["verbose"] and not _tracing()
        zero = torch.zeros((), dtype=torch.int64, device=u0.device)
        nan = torch.full(u0.shape[:-1], torch.nan, dtype=u0.dtype, device=u0.device)

        def cond(it, passes, stop, done, prev, u, r, nr0, *args):
            return ~stop

        def body(it, passes, stop, done, prev, u, r, nr0, *args):
            r, J = fn(u, *args)
            nr = torch.linalg.vector_norm(r, dim=-1)
            nr0 = torch.where(passes == 0, nr, nr0)
            if verbose and int(passes) > 0:
                print(f"  Newton it {int(it)}: max |r| = {float(nr.max()):.3e}")
            settled = _settled(nr, nr0, atol, rtol)
            done = _holds(done, prev, settled)
            stop = (it >= max_its) | (settled | done).all()
            # no step once stopped (traced: solved and discarded; a torch.cond in the loop
            # body does not export under no_grad, torch 2.13: "'<lambda>' object has no
            # attribute 'true_graph_0'" in the set-grad pass); a done point holds
            (du,) = _choose(
                stop,
                lambda: (torch.zeros_like(r),),
                lambda: (_held(done, self.linear.solve(J, -r)),),
            )
            u = u + du
            state = (torch.where(stop, it, it + 1), passes + 1, stop, done, settled)
            return (*state, u, r, nr0, *args)

        done = torch.zeros(u0.shape[:-1], dtype=torch.bool, device=u0.device)
        state = (zero, zero, zero.bool(), done, done, u0, torch.zeros_like(u0), nan, *args)
        it, _, _, _, _, u, r, nr0, *_ = run_loop(cond, body, state)
        return self._result(u, it, r, nr0)

    def _solve_traced(self, fn: ResidualFn, residual, u0: torch.Tensor, args) -> NewtonResult:
        """:meth:`solve` traced, with the residual alone at hand: the Jacobian only where a
        step is due.

        The plain loop evaluates ``r`` and ``J`` at every iterate, the last included (a
        graph cannot skip the Jacobian of the pass that finds the batch converged), and
        solves for a step that it discards there. Here the loop carries ``r`` of its
        iterate: *residual* evaluates ``u0`` before the loop and each new iterate at the
        end of a pass, and a pass (taken only while a point needs a step) evaluates ``J``
        and solves once. A solve of ``k`` iterations costs ``k`` Jacobians and linear
        solves and ``k + 1`` residuals instead of ``k + 1`` of each; a predictor that is
        already converged (an elastic step), one residual. The iterates, the holding
        rule (:func:`_holds`) and the stopping test are the plain loop's (the compiled
        benchmark models' 100-step transient results: J2 and Chaboche 2 bit for bit,
        Perzyna to rounding, its residual now generated as a kernel of its own).
        Perzyna, py-aoti, 1e3 points (1.3 iterations per step): 30 % less time per step
        (docs/aoti.md).
        """
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]

        def cond(it, stop, done, prev, u, r, nr0, *args):
            return ~stop

        def body(it, stop, done, prev, u, r, nr0, *args):
            # done: the points that hold at u; prev: those settled at u
            _, J = fn(u, *args)
            u = u + _held(done, self.linear.solve(J, -r))
            r = residual(u, *args)
            settled = _settled(torch.linalg.vector_norm(r, dim=-1), nr0, atol, rtol)
            done = _holds(done, prev, settled)
            it = it + 1
            stop = (it >= max_its) | (settled | done).all()
            return (it, stop, done, settled, u, r, nr0, *args)

        r0 = residual(u0, *args)
        nr0 = torch.linalg.vector_norm(r0, dim=-1)
        settled = _settled(nr0, nr0, atol, rtol)
        zero = torch.zeros((), dtype=torch.int64, device=u0.device)
        stop = (zero >= max_its) | settled.all()
        done = torch.zeros_like(settled)
        state = (zero, stop, done, settled, u0, r0, nr0, *args)
        it, _, _, _, u, r, nr0, *_ = run_loop(cond, body, state)
        return self._result(u, it, r, nr0)

    def _solve_active(
        self, fn: ResidualFn, u0: torch.Tensor, args, per_point, residual=None
    ) -> NewtonResult:
        """:meth:`solve` eagerly, on the points not yet settled (see :meth:`_iterate_active`).

        Where the last solve of this solver stopped after at most one iteration (a J2
        radial return with linear hardening, whose one Newton step is exact, in most
        steps of a transient run), the first iterate is evaluated without its Jacobian
        (*residual*): that iterate is then usually the last, and the Jacobian at it
        would go unused. If it is not, ``fn`` evaluates it again with the Jacobian, and
        the next solve goes back to the plain steps. J2 radial return, py-eager, 1e3
        points, 100 transient steps: a fifth fewer evaluations with tangents. Any
        iterate that :func:`_likely_last` predicts to settle every active point is
        evaluated the same way (see :meth:`_iterate_active`)."""
        probe = [residual is not None and self._one_step]

        def step(u, r, J, args, last):
            u = u + self.linear.solve(J, -r)
            if residual is not None and (probe[0] or last):
                probe[0] = False
                return u, residual(u, *args), None
            return (u, *fn(u, *args))

        res = self._iterate_active(fn, u0, args, per_point, step)
        self._one_step = int(res.iterations) <= 1
        return res

    def _iterate_active(self, fn: ResidualFn, u0: torch.Tensor, args, per_point, step):
        """The eager loop on the active points only: a point leaves the batch that ``fn``,
        the linear solver (and the line search) see once it holds (:func:`_holds`: it
        has settled, converged or gone non-finite, at two iterates in a row).

        The iterates of a point are those of the loop over all points up to the pass at
        which it holds; it then stops there instead of taking the steps that the
        slowest point still needs. So the solution is as accurate as the tolerances ask,
        and the work is the sum of the points' own iteration counts (first step of the
        benchmark workloads at 1e4 points: a third fewer point-evaluations for J2 radial
        return and Perzyna, half for scp; none for Chaboche, whose points all take 15
        iterations).

        Args:
            fn: as for :meth:`solve`; evaluated here at ``u0`` only.
            u0: the initial guess, ``(N, n)``.
            args: the tensors passed to *fn*; those flagged in *per_point* are ``(N, ...)``
                and are gathered with the active points.
            per_point: one flag per arg.
            step: ``step(u, r, J, args, last) -> (u, r, J)``: one iteration from ``u``
                (the active points, with ``r`` and ``J`` there) to the next iterate, with
                the residual and Jacobian there; ``J`` may be None (not evaluated), and
                ``fn`` then evaluates ``r`` and ``J`` there if the loop goes on. *last*:
                the next iterate likely settles every active point (:func:`_likely_last`),
                so that the Jacobian there would go unused (the loop stops).

        Returns:
            As :meth:`solve`: every point's last iterate, the residual there, and the
                iterations of the slowest point.

        Raises:
            ValueError: ``u0`` is not ``(N, n)``, or an arg flagged per point does not
                have ``N`` entries first, or the flags do not match the args.
        """
        if u0.dim() != 2 or len(per_point) != len(args):
            raise ValueError(
                f"per_point needs u0 of shape (N, n) and one flag per arg; got u0 "
                f"{tuple(u0.shape)}, {len(per_point)} flags for {len(args)} args"
            )
        for a, p in zip(args, per_point, strict=True):
            if p and (a.dim() == 0 or a.shape[0] != u0.shape[0]):
                raise ValueError(
                    f"an arg flagged per point has shape {tuple(a.shape)}, not {u0.shape[0]} "
                    "points first"
                )
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        u = u0.clone()
        ua, aa = u, tuple(args)
        r, J = fn(ua, *aa)
        r_all, nr0 = r, torch.linalg.vector_norm(r, dim=-1)
        thr_all = _threshold(nr0, atol, rtol)
        active: torch.Tensor | None = None  # flat indices of the active points; None: all
        # of the active points: settled at the previous iterate (see _holds)
        prev = torch.zeros(u0.shape[0], dtype=torch.bool, device=u0.device)
        nr_prev: torch.Tensor | None = None  # of the active points, at the previous iterate
        it = 0
        while True:
            nr = torch.linalg.vector_norm(r, dim=-1)
            if active is not None:
                r_all[active] = r
            thr = thr_all if active is None else thr_all[active]
            if self.opts["verbose"] and it > 0:
                print(f"  Newton it {it}: max |r| = {float(nr.max()):.3e} ({nr.numel()} points)")
            # _settled, its threshold made once; a norm is >= 0, NaN or +inf, so
            # ~(nr < inf) is ~isfinite(nr) in two operations instead of five
            settled = (nr < thr) | ~(nr < math.inf)
            if it >= max_its or bool(settled.all()):  # the held points are settled
                break
            hold = settled & prev  # _holds, with no point done (the held points are gone)
            if bool(hold.any()):  # settled again after the step that followed: they leave
                keep = (~hold).nonzero().squeeze(-1)
                if active is None:
                    active, r_all = keep, r_all.clone()
                else:
                    active = active[keep]
                ua, r, settled = ua[keep], r[keep], settled[keep]
                nr, thr = nr[keep], thr[keep]
                nr_prev = None if nr_prev is None else nr_prev[keep]
                J = None if J is None else J[keep]
                aa = tuple(a[keep] if p else a for a, p in zip(aa, per_point, strict=True))
            if J is None:  # the step evaluated the residual alone, and the loop goes on
                r, J = fn(ua, *aa)
            last = _likely_last(nr, nr_prev, thr)
            ua, r, J = step(ua, r, J, aa, last)
            if active is None:
                u, r_all = ua, r
            else:
                u[active] = ua
            prev, nr_prev = settled, nr
            it += 1
        return self._result(u, it, r_all, nr0, thr_all)

    def _result(
        self, u: torch.Tensor, it, r: torch.Tensor, nr0: torch.Tensor, thr=None
    ) -> NewtonResult:
        """The result of a solve that stopped at *u* ``(*B, n)`` with residual *r*
        ``(*B, n)`` after *it* iterations (an int or a 0-dim ``int64`` tensor), ``‖r0‖`` =
        *nr0* ``(*B,)``; *thr*: its :func:`_threshold`, where the loop made it."""
        nr = torch.linalg.vector_norm(r, dim=-1)
        if thr is None:
            thr = _threshold(nr0, self.opts["abs_tol"], self.opts["rel_tol"])
        if not isinstance(it, torch.Tensor):
            it = torch.tensor(it, dtype=torch.int64, device=u.device)
        return NewtonResult(u, it, nr < thr, nr, nr0)

    def check(self, res: NewtonResult, what: str) -> None:
        """Raise if any point of a solve did not converge.

        Args:
            res: the result of :meth:`solve`.
            what: what was solved, the start of the error message (e.g. the
                model's name).

        Raises:
            ConvergenceError: some point did not converge. It names the failed
                points (flat batch indices), the iterations and the worst
                residual norm among the failed points (``nan`` if one is), and
                the tolerances (:meth:`describe`).
        """
        if bool(res.converged.all()):
            return
        raise ConvergenceError.at_points(
            what,
            ~res.converged,
            int(res.iterations),
            res.residual_norm,
            detail=self.describe(),
        )

    def describe(self) -> str:
        """Describe the tolerances, as a failure message states them.

        Returns:
            E.g. ``"abs_tol 1e-10, rel_tol 1e-08, max_its 25"``.
        """
        return (
            f"abs_tol {self.opts['abs_tol']:g}, rel_tol {self.opts['rel_tol']:g}, "
            f"max_its {self.opts['max_its']}"
        )


@register()
class NewtonWithLineSearch(Newton):
    """Newton with a backtracking line search (the reference library's criterion).

    With ``du = -J⁻¹ r0``, trial points ``u + α du`` are evaluated for
    ``α = 1, 1/σ, 1/σ², ...`` (``σ = linesearch_cutback``) until
    ``‖r(u + α du)‖² ≤ crit`` or ``‖r‖ ≤ abs_tol``, with
    ``crit = ‖r0‖² + 2 c α r0·du`` (``BACKTRACKING``) or ``(1 - c α) ‖r0‖²``
    (``STRONG_WOLFE``), ``c = linesearch_stopping_criteria``. At most
    ``max_linesearch_iterations - 1`` trial points (at least one) are evaluated; each batch
    point keeps its own ``α``, and the step ends at the last point evaluated for
    it (no error when the search runs out).

    Its options, besides :class:`Newton`'s: ``max_linesearch_iterations``
    (default 10), ``linesearch_cutback`` (``σ``, default 2.0),
    ``linesearch_stopping_criteria`` (``c``, default ``1e-3``),
    ``linesearch_type`` (``"BACKTRACKING"``, the default, or
    ``"STRONG_WOLFE"``), ``check_negative_criterion`` (default ``False``:
    when ``True``, warn on stderr when the criterion becomes negative; eager
    solves only; ``check_negative_critertion`` is the spelling of older NEML2
    inputs).
    """

    fields = (
        option(
            "max_linesearch_iterations",
            int,
            10,
            bounds="[1, inf)",
            doc="maximum number of line-search iterations",
        ),
        option(
            "linesearch_cutback",
            float,
            2.0,
            bounds="(1, inf)",
            doc="factor dividing the step at each cut",
        ),
        option(
            "linesearch_stopping_criteria",
            float,
            1e-3,
            bounds="[0, inf)",
            doc="sufficient-decrease constant (above 1 the criterion can turn negative: see "
            "check_negative_criterion)",
        ),
        option(
            "linesearch_type",
            str,
            "BACKTRACKING",
            choices=("BACKTRACKING", "STRONG_WOLFE"),
            doc="stopping criterion of the line search",
        ),
        option(
            "check_negative_criterion",
            bool,
            False,
            doc="warn when the line-search criterion becomes negative",
        ),
        option(
            "check_negative_critertion",
            bool,
            False,
            doc="the same as check_negative_criterion (the spelling of older NEML2 inputs)",
        ),
    )

    def solve(
        self,
        fn: ResidualFn,
        u0: torch.Tensor,
        *args: torch.Tensor,
        residual: Callable[..., torch.Tensor] | None = None,
        per_point: tuple[bool, ...] | None = None,
    ) -> NewtonResult:
        """Solve ``r(u) = 0`` from ``u0``: each iterate is a Newton step followed by a line search.

        The algorithm is written once and runs eagerly, under ``torch.compile`` and under
        ``torch.export``, as two nested loops:

        * The outer loop makes one pass per iterate. Its first pass takes ``u0`` itself
          (no direction yet), records ``‖r0‖`` and counts no iteration. Every later pass
          solves ``J du = -r`` once, runs the line search, and takes the point it accepts
          as the next iterate (counting an iteration). The loop stops when no iterate is
          due: every point has converged or gone non-finite, or ``max_its`` iterations
          have run.
        * The inner loop is the line search: one trial point ``u + α du`` per pass, with
          ``α = 1`` at the first. It ends once every batch point meets the criterion, or
          when the trials run out; otherwise it cuts ``α`` by ``σ`` where a point does not
          meet it and tries again.

        The residual and Jacobian ``fn`` is evaluated at the accepted points only (one
        copy of it in a traced graph, in the outer loop); a trial is evaluated with the
        residual alone (one copy in the inner loop). So a rejected trial costs no
        Jacobian, on every route; the crystal-plasticity models' searches reject most of
        their trials (scp: 45 of 63).

        Eagerly, the first trial of a search that follows one which accepted ``α = 1``
        (and the first after ``u0``) is evaluated with ``fn`` at once, as it is likely
        accepted. Traced, a pass evaluates ``fn`` at its iterate before the linear solve,
        and the accepted point keeps the residual of its trial: the iterate that ends the
        solve gets no Jacobian (a solve of ``k`` iterations: ``k`` evaluations of ``fn``,
        one residual for ``u0`` and one per trial; Taylor's late transient steps take two
        or three iterations). The iterates are the same either way.

        Args:
            fn: ``fn(u, *args) -> (r, J)``: the residual ``(*B, n)`` and its
                Jacobian ``(*B, n, n)`` at ``u`` ``(*B, n)``.
            u0: the initial guess, ``(*B, n)``.
            *args: tensors passed through to *fn* and *residual* (and carried through
                the loops when traced).
            residual: ``residual(u, *args) -> r`` ``(*B, n)``, the residual
                alone (default ``None``: eagerly, every trial evaluates *fn*;
                traced, the residual part of *fn*).
            per_point: as for :meth:`Newton.solve`: eagerly, only the points not yet
                settled take the next iteration (its linear solve and line search).

        Returns:
            The last iterate and the per-point status; failures are reported
                there, not raised (see :meth:`Newton.check`). When the search runs
                out of trials, the step ends at the last trial point (no error).
        """
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        c, cut, wolfe, max_trials = self._search_options()
        atol2 = atol**2
        tracing = _tracing()
        points = _TrialPoints(fn, residual, tracing)
        warn_negative = not tracing and (
            self.opts["check_negative_criterion"] or self.opts["check_negative_critertion"]
        )
        verbose = self.opts["verbose"] and not tracing
        # eagerly a trial may come with its J (fn evaluated at once): one more slot
        j_slot = () if tracing else (None,)

        # the line search from u along du: trial, alpha (*B,), done, then the last trial
        # point and its residual (and J, eagerly), then what the passes read
        def search_cond(trial, alpha, done, u_try, r_try, *rest):
            return ~done

        def search_body(trial, alpha, done, u_try, r_try, *rest):
            u, du, nr02, slope, *args = rest[len(j_slot) :]
            u_try = u + alpha.unsqueeze(-1) * du
            r_try, J_try = points.evaluate(u_try, trial, args)
            nr2 = (r_try * r_try).sum(-1)
            crit = (1.0 - c * alpha) * nr02 if wolfe else nr02 + 2.0 * c * alpha * slope
            if warn_negative and bool((crit < 0).any()):
                print(
                    "WARNING: the line search criterion became negative; try another "
                    "linesearch_type, a larger linesearch_cutback or a smaller "
                    "linesearch_stopping_criteria",
                    file=sys.stderr,
                )
            # sufficient decrease, per point (a point whose residual is non-finite stops)
            stop = (nr2 <= crit) | (nr2 <= atol2) | ~torch.isfinite(nr02)
            done = stop.all() | (trial + 1 >= max_trials)
            alpha = torch.where(stop | done, alpha, alpha / cut)
            J_out = () if tracing else (J_try,)
            return (trial + 1, alpha, done, u_try, r_try, *J_out, *rest[len(j_slot) :])

        def search(first, u, r, du, args):
            """``(trials, u_try, r_try[, J_try])`` of the search; none on the first pass."""
            nr02 = (r * r).sum(-1)
            slope = (r * du).sum(-1)
            alpha = torch.ones_like(nr02)
            done = torch.as_tensor(first, device=u.device)
            state = (_counter(0, u.device), alpha, done, u, r, *j_slot, u, du, nr02, slope, *args)
            trials, _, _, u_try, r_try, *rest = run_loop(search_cond, search_body, state)
            return (trials, u_try, r_try, *rest[: len(j_slot)])

        if per_point is not None and not tracing:

            def step(u, r, J, args, last):
                points.defer = last
                trials, u_try, r_try, *J_try = search(False, u, r, self.linear.solve(J, -r), args)
                r1, J1 = points.accept(u_try, r_try, J_try[0] if J_try else None, trials - 1, args)
                return u_try, r1, J1

            return self._iterate_active(fn, u0, args, per_point, step)

        def settled_at(r, nr0):
            return _settled(torch.linalg.vector_norm(r, dim=-1), nr0, atol, rtol)

        if tracing:
            # the Jacobian at the start of a pass, so only where a step is due (as
            # Newton._solve_traced): not at the iterate that ends the solve
            def traced_cond(it, done, prev, u, r, nr0, *args):
                return (it < max_its) & ~(settled_at(r, nr0) | done).all()

            def traced_body(it, done, prev, u, r, nr0, *args):
                settled = settled_at(r, nr0)
                hold = _holds(done, prev, settled)
                _, J = fn(u, *args)
                _, u_try, r_try = search(False, u, r, _held(hold, self.linear.solve(J, -r)), args)
                return (it + 1, hold, settled, u_try, r_try, nr0, *args)

            r0 = points.residual(u0, *args)
            none = torch.zeros(u0.shape[:-1], dtype=torch.bool, device=u0.device)
            nr0 = torch.linalg.vector_norm(r0, dim=-1)
            state = (_counter(0, u0.device), none, none, u0, r0, nr0, *args)
            it, _, _, u, r, nr0, *_ = run_loop(traced_cond, traced_body, state)
            return self._result(u, it, r, nr0)

        # passes: outer passes made (0: u0 not yet evaluated); it: iterations accepted;
        # u, r, J: the iterate; nr0 (*B,): ‖r(u0)‖

        def cond(passes, it, done, prev, u, r, J, nr0, *args):
            return (passes == 0) | ((it < max_its) & ~(settled_at(r, nr0) | done).all())

        def body(passes, it, done, prev, u, r, J, nr0, *args):
            first = passes == 0
            # the points that hold from this pass on (u0's pass: none; its r is a placeholder)
            settled = settled_at(r, nr0) & (passes > 0)
            hold = _holds(done, prev, settled)

            def step():
                return search(first, u, r, _held(hold, self.linear.solve(J, -r)), args)

            def stay():  # u0 itself, as if a search had accepted it at its first trial
                return (_counter(1, u.device), u, r, *j_slot)

            trials, u_try, r_try, *J_try = _choose(first, stay, step)
            r1, J1 = points.accept(u_try, r_try, J_try[0] if J_try else None, trials - 1, args)
            (nr0,) = _choose(first, lambda: (torch.linalg.vector_norm(r1, dim=-1),), lambda: (nr0,))
            (it1,) = _choose(first, lambda: (it,), lambda: (it + 1,))
            if verbose and not first:
                nr = torch.linalg.vector_norm(r1, dim=-1)
                print(f"  Newton it {it1}: max |r| = {float(nr.max()):.3e}")
            return (passes + 1, it1, hold, settled, u_try, r1, J1, nr0, *args)

        # (eager only: a traced solve took the loop above) r, J: placeholders until the
        # first pass has evaluated u0 (J a broadcast view, never read)
        n = u0.shape[-1]
        J0 = u0.new_zeros(()).expand(*u0.shape, n)
        zero = _counter(0, u0.device)
        nan = torch.full(u0.shape[:-1], torch.nan, dtype=u0.dtype, device=u0.device)
        done = torch.zeros(u0.shape[:-1], dtype=torch.bool, device=u0.device)
        state = (zero, zero, done, done, u0, torch.zeros_like(u0), J0, nan, *args)
        _, it, _, _, u, r, _, nr0, *_ = run_loop(cond, body, state)
        return self._result(u, it, r, nr0)

    def _search_options(self) -> tuple[float, float, bool, int]:
        """``(c, cutback, strong_wolfe, max_trials)`` of the line search."""
        return (
            self.opts["linesearch_stopping_criteria"],
            self.opts["linesearch_cutback"],
            self.opts["linesearch_type"] == "STRONG_WOLFE",
            max(self.opts["max_linesearch_iterations"] - 1, 1),
        )


class _TrialPoints:
    """How a line-search pass evaluates its trial point and the point it accepts (the
    seam between the eager shortcut and the traced loops).

    Traced: a trial is evaluated with *residual* (the residual part of ``fn`` where none
    is given), and ``fn`` at the accepted point. Eagerly without *residual*: every trial
    with ``fn``. Eagerly with it: a trial with *residual* alone, ``J`` deferred until the
    search accepts the point, except the first trial of a search when the previous search
    accepted its first (``α = 1`` everywhere; ``u0`` counts as such): that one is
    evaluated with ``fn`` at once, as it is likely accepted; and unless the search's
    point likely ends the solve (*defer*): then no ``J`` at all, the solve's loop asks
    ``fn`` for it if the loop goes on after all.

    Attributes:
        full_first: whether the next search's first trial is evaluated with ``fn``.
        defer: whether this search's points are evaluated without ``J`` (eager only).
    """

    def __init__(
        self, fn: ResidualFn, residual: Callable[..., torch.Tensor] | None, traced: bool = False
    ):
        self.fn = fn
        self.traced = traced
        if traced and residual is None:
            residual = self._residual_of_fn
        self.residual = residual
        self.full_first = True
        self.defer = False

    def _residual_of_fn(self, u, *args):
        return self.fn(u, *args)[0]

    def evaluate(
        self, u: torch.Tensor, trial: int | torch.Tensor, args
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(r, J)`` at the trial point *u* ``(*B, n)``; ``J`` is ``None`` where deferred."""
        if self.traced:
            return self.residual(u, *args), None
        if self.residual is None or (trial <= 0 and self.full_first and not self.defer):
            return self.fn(u, *args)
        return self.residual(u, *args), None

    def accept(self, u: torch.Tensor, r: torch.Tensor, J, trial: int | torch.Tensor, args):
        """``(r, J)`` at the accepted point *u*, the search's trial number *trial*:
        ``fn`` evaluated now where ``J`` was deferred."""
        if self.residual is not None and not self.traced:
            self.full_first = trial <= 0
            if self.defer:  # the point likely ends the solve: its Jacobian would go unused
                return r, J
        if J is None:
            return self.fn(u, *args)
        return r, J


def _counter(value: int, device: torch.device):
    """An iteration counter: a Python int eagerly (a loop decision costs no device
    sync), a 0-dim ``int64`` tensor traced (carried by the ``while_loop``)."""
    if _tracing():
        return torch.full((), value, dtype=torch.int64, device=device)
    return value


def ctx_error(p, message):
    from neml2.tensors import FatalError

    return FatalError(f"{p.location}: {message}")
