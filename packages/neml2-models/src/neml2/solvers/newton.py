"""Newton's method (optionally with a backtracking line search) over a batch of systems.

The loop is written once with ``torch._higher_order_ops.while_loop`` (a
data-dependent stop), so the same code runs eagerly, under ``torch.compile`` and
inside an exported graph. Convergence is judged per batch point:
``‖r‖ < abs_tol`` or ``‖r‖ / ‖r0‖ < rel_tol``; a non-finite residual never counts
as converged. Every batch point is solved on its own (the norms, the line search's
step lengths and the linear solves are per point), so a point whose residual is NaN
or infinite fails alone: it cannot recover (its next iterate is NaN), so the loop
stops once every point has converged or gone non-finite, and the finite points are
solved as if it were not there. :meth:`Newton.check` reports the failed points in a
:class:`~neml2.tensors.ConvergenceError` (indices, iterations, worst residual).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch._higher_order_ops import while_loop

from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.solvers.linear import DenseLU, LinearSolver
from neml2.tensors import ConvergenceError

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


def _tracing() -> bool:
    return torch.compiler.is_compiling() or torch.compiler.is_exporting()


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


def _converged(nr, nr0, atol, rtol):
    # a relative test needs a finite first norm (rtol * inf would pass any finite norm)
    return torch.isfinite(nr) & ((nr < atol) | ((nr < rtol * nr0) & torch.isfinite(nr0)))


def _settled(nr, nr0, atol, rtol):
    """Points that need no further iteration: converged, or non-finite (lost for good)."""
    return _converged(nr, nr0, atol, rtol) | ~torch.isfinite(nr)


@register()
class Newton:
    """Newton-Raphson: ``u ← u - J(u)⁻¹ r(u)`` until every point converges.

    A point has converged when ``‖r‖ < abs_tol`` or ``‖r‖ / ‖r0‖ < rel_tol``
    (a non-finite residual never counts); the loop stops when every point has
    converged or gone non-finite, or after ``max_its`` iterations.

    Attributes:
        opts: the option values, defaults filled in (``dict``).
        linear: the linear solver of each step ``J du = -r``.
    """

    SECTION = "Solvers"
    fields = (
        option("abs_tol", float, 1e-10, doc="absolute tolerance on the residual norm"),
        option("rel_tol", float, 1e-8, doc="tolerance on the residual norm relative to the first"),
        option("max_its", int, 25, doc="maximum number of iterations"),
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
        self.linear = linear or DenseLU()

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
    ) -> NewtonResult:
        """Solve ``r(u) = 0`` at every batch point, starting from ``u0``.

        Every pass of the loop evaluates ``r`` and ``J`` at the current iterate, tests
        convergence, and takes the Newton step unless it stops. So a traced graph holds
        one copy of the residual and Jacobian evaluation (in the loop body) instead of
        two (one before the loop for ``r0``): smaller compiled code, and 15-25 % shorter
        cold AOTI compiles of the benchmark models (docs/aoti.md). Eagerly the stopping
        pass skips the linear solve; traced, it solves and discards the step.

        Args:
            fn: ``fn(u, *args) -> (r, J)``: the residual ``(*B, n)`` and its
                Jacobian ``(*B, n, n)`` at ``u`` ``(*B, n)``.
            u0: the initial guess, ``(*B, n)``.
            *args: tensors passed through to *fn* (and carried through the loop
                when traced).
            residual: the residual alone, ``residual(u, *args) -> r``. Not used
                here (every iterate needs ``J``); it is accepted so that every
                solver takes the same arguments.

        Returns:
            The last iterate and the per-point status. Points that did not
                converge are reported there, not raised; see :meth:`check`.
        """
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        verbose = self.opts["verbose"] and not _tracing()
        zero = torch.zeros((), dtype=torch.int64, device=u0.device)
        nan = torch.full(u0.shape[:-1], torch.nan, dtype=u0.dtype, device=u0.device)

        def cond(it, passes, stop, u, r, nr0, *args):
            return ~stop

        def body(it, passes, stop, u, r, nr0, *args):
            r, J = fn(u, *args)
            nr = torch.linalg.vector_norm(r, dim=-1)
            nr0 = torch.where(passes == 0, nr, nr0)
            if verbose and int(passes) > 0:
                print(f"  Newton it {int(it)}: max |r| = {float(nr.max()):.3e}")
            stop = (it >= max_its) | _settled(nr, nr0, atol, rtol).all()
            # no step once stopped (traced: solved and discarded; a torch.cond in the loop
            # body does not export under no_grad, torch 2.13: "'<lambda>' object has no
            # attribute 'true_graph_0'" in the set-grad pass)
            (du,) = _choose(
                stop, lambda: (torch.zeros_like(r),), lambda: (self.linear.solve(J, -r),)
            )
            u = u + du
            return (torch.where(stop, it, it + 1), passes + 1, stop, u, r, nr0, *args)

        state = (zero, zero, zero.bool(), u0, torch.zeros_like(u0), nan, *args)
        it, _, _, u, r, nr0, *_ = run_loop(cond, body, state)
        nr = torch.linalg.vector_norm(r, dim=-1)
        return NewtonResult(u, it, _converged(nr, nr0, atol, rtol), nr, nr0)

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
            "max_linesearch_iterations", int, 10, doc="maximum number of line-search iterations"
        ),
        option("linesearch_cutback", float, 2.0, doc="factor dividing the step at each cut"),
        option("linesearch_stopping_criteria", float, 1e-3, doc="sufficient-decrease constant"),
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
    ) -> NewtonResult:
        """Solve ``r(u) = 0`` from ``u0``: each iterate is a Newton step followed by a line search.

        Eagerly, trial points the search may reject are evaluated with
        *residual* when it is given, so a rejected trial costs a residual
        evaluation only and ``J`` is evaluated at the accepted point.

        Traced, the search is written as one loop in which every pass evaluates one trial
        point.

        A pass first solves for the Newton direction if it starts a new iterate (eagerly
        only then; traced, every pass solves and the result is selected), evaluates the
        trial ``u + α du``, then either accepts it (every point stopped, or the trials ran
        out) or cuts ``α`` where a point has not stopped. The first pass evaluates ``u0``
        itself (``trial = -1``: no direction yet) and accepts it without counting an
        iteration. So a traced graph holds a single copy of the residual and Jacobian
        evaluation, however many trials are allowed, instead of one per trial plus one
        for ``u0`` (the crystal-plasticity models evaluate a large Jacobian per trial).

        Args:
            fn: ``fn(u, *args) -> (r, J)``: the residual ``(*B, n)`` and its
                Jacobian ``(*B, n, n)`` at ``u`` ``(*B, n)``.
            u0: the initial guess, ``(*B, n)``.
            *args: tensors passed through to *fn* and *residual*.
            residual: ``residual(u, *args) -> r`` ``(*B, n)``, the residual
                alone (default ``None``: every trial evaluates *fn*). Used
                eagerly only.

        Returns:
            The last iterate and the per-point status; failures are reported
                there, not raised (see :meth:`Newton.check`). When the search runs
                out of trials, the step ends at the last trial point (no error).
        """
        if not _tracing():
            return self._solve_eager(fn, residual, u0, args)
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        c, cut, wolfe, max_trials = self._search_options()
        atol2 = atol**2
        zero = torch.zeros((), dtype=torch.int64, device=u0.device)
        ones = torch.ones(u0.shape[:-1], dtype=u0.dtype, device=u0.device)
        n = u0.shape[-1]

        def cond(it, trial, alpha, u, r, J, du, nr0, *args):
            nr = torch.linalg.vector_norm(r, dim=-1)
            return (trial < 0) | ((it < max_its) & ~_settled(nr, nr0, atol, rtol).all())

        def body(it, trial, alpha, u, r, J, du, nr0, *args):
            first = trial < 0
            (du,) = _choose(
                first,
                lambda: (torch.zeros_like(u),),
                lambda: _choose(trial == 0, lambda: (self.linear.solve(J, -r),), lambda: (du,)),
            )
            nr02 = (r * r).sum(-1)
            u_try = u + alpha.unsqueeze(-1) * du
            r_try, J_try = fn(u_try, *args)
            nr2 = (r_try * r_try).sum(-1)
            if wolfe:
                crit = (1.0 - c * alpha) * nr02
            else:
                crit = nr02 + 2.0 * c * alpha * (r * du).sum(-1)
            stop = (nr2 <= crit) | (nr2 <= atol2) | ~torch.isfinite(nr02)
            nr0 = torch.where(first, torch.linalg.vector_norm(r_try, dim=-1), nr0)

            def accept():
                it1 = torch.where(first, it, it + 1)
                return (it1, trial * 0, torch.ones_like(alpha), u_try, r_try, J_try, du)

            def backtrack():
                return (it, trial + 1, torch.where(stop, alpha, alpha / cut), u, r, J, du)

            done = first | stop.all() | (trial + 1 >= max_trials)
            return (*_choose(done, accept, backtrack), nr0, *args)

        # r, J, du: placeholders until the first pass has evaluated u0 (trial -1)
        r0 = torch.zeros_like(u0)
        J0 = torch.zeros((*u0.shape, n), dtype=u0.dtype, device=u0.device)
        state = (zero, zero - 1, ones, u0, r0, J0, torch.zeros_like(u0), ones * torch.nan, *args)
        it, _, _, u, r, _, _, nr0, *_ = run_loop(cond, body, state)
        nr = torch.linalg.vector_norm(r, dim=-1)
        return NewtonResult(u, it, _converged(nr, nr0, atol, rtol), nr, nr0)

    def _search_options(self) -> tuple[float, float, bool, int]:
        """``(c, cutback, strong_wolfe, max_trials)`` of the line search."""
        return (
            self.opts["linesearch_stopping_criteria"],
            self.opts["linesearch_cutback"],
            self.opts["linesearch_type"] == "STRONG_WOLFE",
            max(self.opts["max_linesearch_iterations"] - 1, 1),
        )

    def _solve_eager(self, fn: ResidualFn, residual, u0: torch.Tensor, args) -> NewtonResult:
        """The eager solve: the same iterates, trials and iteration count as the traced
        loop, but a rejected trial point costs a residual evaluation only.

        ``J`` is needed only at the point a search accepts. So trial points are evaluated
        with *residual* and ``J`` afterwards at the accepted one, except that while the
        searches accept their first trial (``α = 1`` everywhere), the first trial is
        evaluated with ``fn`` at once (``r`` and ``J`` together, no second evaluation).
        Which of the two a search starts with follows the previous search. Without
        *residual*, every trial evaluates ``fn`` (as traced).
        """
        atol, rtol = self.opts["abs_tol"], self.opts["rel_tol"]
        max_its = self.opts["max_its"]
        c, cut, wolfe, max_trials = self._search_options()
        atol2 = atol**2
        warn_negative = (
            self.opts["check_negative_criterion"] or self.opts["check_negative_critertion"]
        )
        verbose = self.opts["verbose"]
        u = u0
        r, J = fn(u, *args)
        nr0 = torch.linalg.vector_norm(r, dim=-1)
        it = 0
        first_accepted = True  # did the previous search accept alpha = 1 everywhere?
        while it < max_its and not bool(
            _settled(torch.linalg.vector_norm(r, dim=-1), nr0, atol, rtol).all()
        ):
            du = self.linear.solve(J, -r)
            nr02 = (r * r).sum(-1)
            slope = (r * du).sum(-1)
            alpha = torch.ones_like(nr02)
            for trial in range(max_trials):
                u_try = u + alpha.unsqueeze(-1) * du
                if residual is None or (trial == 0 and first_accepted):
                    r_try, J_try = fn(u_try, *args)
                else:
                    r_try, J_try = residual(u_try, *args), None
                nr2 = (r_try * r_try).sum(-1)
                crit = (1.0 - c * alpha) * nr02 if wolfe else nr02 + 2.0 * c * alpha * slope
                if warn_negative and bool((crit < 0).any()):
                    print(
                        "WARNING: the line search criterion became negative; try another "
                        "linesearch_type, a larger linesearch_cutback or a smaller "
                        "linesearch_stopping_criteria",
                        file=sys.stderr,
                    )
                stop = (nr2 <= crit) | (nr2 <= atol2) | ~torch.isfinite(nr02)
                if bool(stop.all()) or trial + 1 >= max_trials:
                    break
                alpha = torch.where(stop, alpha, alpha / cut)
            first_accepted = trial == 0
            if J_try is None:
                r_try, J_try = fn(u_try, *args)
            u, r, J = u_try, r_try, J_try
            it += 1
            if verbose:
                nr = torch.linalg.vector_norm(r, dim=-1)
                print(f"  Newton it {it}: max |r| = {float(nr.max()):.3e}")
        nr = torch.linalg.vector_norm(r, dim=-1)
        it_t = torch.tensor(it, dtype=torch.int64, device=u0.device)
        return NewtonResult(u, it_t, _converged(nr, nr0, atol, rtol), nr, nr0)


def _choose(pred: torch.Tensor, if_true, if_false) -> tuple:
    """``if_true()`` or ``if_false()`` (tuples of tensors of equal shapes) by the 0-dim
    bool *pred*: eagerly only the chosen branch runs; traced, both run and each output is
    selected with ``torch.where`` (no data-dependent control flow in the graph)."""
    if not _tracing():
        return if_true() if bool(pred) else if_false()
    return tuple(torch.where(pred, a, b) for a, b in zip(if_true(), if_false(), strict=True))


def ctx_error(p, message):
    from neml2.tensors import FatalError

    return FatalError(f"{p.location}: {message}")
