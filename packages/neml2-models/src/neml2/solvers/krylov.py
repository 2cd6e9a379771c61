"""Krylov linear solvers for the Newton step: restarted ``GMRES`` and ``BiCGStab``.

Each batch point is its own small system ``A x = b`` (``A (*B, n, n)``, ``b (*B, n)``),
solved by the same iteration at every point with a per-point stop: a point whose
residual meets its tolerance,

.. math::
    \\lVert b - A x \\rVert \\le \\max(\\text{abs\\_tol},\\ \\text{rel\\_tol}\\,\\lVert b \\rVert),

stops updating while the others go on (the initial guess is ``x = 0``). The iteration
touches ``A`` only through products ``A v``: ``A`` may be given as a callable (a
Jacobian-vector product), and then only a preconditioner that does not read the
entries of ``A`` (``NoPreconditioner``) applies.

Both loops are fixed-shape torch: eagerly a Python loop that stops once every point has
converged; traced (``torch.compile``, ``torch.export``) the
:func:`~neml2.solvers.newton.run_loop` ``while_loop``, which carries every tensor the
body reads. Zero denominators (a converged or broken-down point) are guarded: such a
point stops updating instead of producing a NaN.

A solve that autograd records (the one Newton step ``ImplicitUpdate`` takes for a
parameter gradient) goes to a dense LU instead: the iterations have no adjoint here.
"""

from __future__ import annotations

import math

import torch

from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.solvers._block_jacobian import BlockJacobian
from neml2.solvers.linear import LinearSolver
from neml2.solvers.newton import run_loop
from neml2.solvers.preconditioners import NoPreconditioner, Preconditioner
from neml2.tensors import FatalError
from neml2.tensors._tangents import _tracing

_CACHE = ("none", "chord", "max_its")


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a · b`` along the last axis."""
    return (a * b).sum(-1)


def _div(num: torch.Tensor, den: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
    """``num / den`` where *ok*, else 0 (no inf or NaN where *den* is 0)."""
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(num))


class KrylovSolver(LinearSolver):
    """Base of the Krylov solvers: options, operator and preconditioner plumbing.

    Attributes:
        preconditioner: the :class:`~neml2.solvers.preconditioners.Preconditioner`
            (a :class:`~neml2.solvers.preconditioners.NoPreconditioner` where none is named).
    """

    fields = (
        option("max_its", int, 1000, doc="maximum Krylov iterations per solve", bounds="[1, inf)"),
        option("abs_tol", float, 0.0, doc="absolute residual tolerance", bounds="[0, inf)"),
        option(
            "rel_tol",
            float,
            1e-4,
            doc="residual tolerance relative to the right-hand side's norm",
            bounds="[0, inf)",
        ),
        option("preconditioner", str, "", doc="[Solvers] block of the preconditioner (none)"),
        option(
            "cache_strategy",
            str,
            "none",
            doc="when the preconditioner is rebuilt across Newton iterations",
            choices=_CACHE,
        ),
        option(
            "cache_max_its",
            int,
            10,
            doc="iterations that trigger a rebuild under cache_strategy = max_its",
            bounds="[1, inf)",
        ),
    )

    def __init__(self, preconditioner: Preconditioner | None = None, **values):
        """Make a solver from its options.

        Args:
            preconditioner: the preconditioner (default ``None``: none); the
                ``preconditioner`` option (a ``[Solvers]`` block name) is resolved by
                :meth:`from_hit`, not here.
            **values (Any): the options by name (``max_its``, ``abs_tol``, ``rel_tol``,
                ``cache_strategy``, ``cache_max_its``; ``restart`` for GMRES).

        Raises:
            FatalError: an unknown option or a bad value.
        """
        super().__init__(**values)
        self.preconditioner = preconditioner or NoPreconditioner()
        if preconditioner is not None and not self.opts["preconditioner"]:
            self.opts["preconditioner"] = type(preconditioner).__name__

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the solver of a ``[Solvers]`` block, with the preconditioner it names.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built.

        Returns:
            (KrylovSolver): The solver.

        Raises:
            FatalError: an unknown option, or a ``preconditioner`` block that is missing
                or not a preconditioner; the message names the location.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        pre = None
        if values.get("preconditioner"):
            p = node.param("preconditioner")
            pre = ctx.object("Solvers", values["preconditioner"], p.location)
            if not isinstance(pre, Preconditioner):
                raise FatalError(
                    f"{p.location}: option 'preconditioner': '{values['preconditioner']}' "
                    "is not a preconditioner"
                )
        name = values.pop("preconditioner", "")
        solver = cls(preconditioner=pre, **values)
        solver.opts["preconditioner"] = name
        return solver

    def set_blocks(self, sizes) -> None:
        """Hand the unknowns' block sizes to a block preconditioner (``ImplicitUpdate``
        calls this before a solve).

        Args:
            sizes (Sequence[int]): the sizes of the unknowns, in order.
        """
        if hasattr(self.preconditioner, "set_blocks"):
            self.preconditioner.set_blocks(sizes)

    def solve(self, A, b):
        """Solve ``A x = b`` at every batch point.

        Args:
            A (torch.Tensor | Callable): the matrices ``(*B, n, n)`` (or an eager Newton
                step's :class:`~neml2.solvers._block_jacobian.BlockJacobian`), or a
                callable ``v -> A v`` on ``(*B, n)`` vectors.
            b (torch.Tensor): the right-hand sides, ``(*B, n)`` or ``(*B, n, k)``.

        Returns:
            (torch.Tensor): ``x``, the shape of *b*: converged to the tolerances, or the
                last iterate where ``max_its`` ran out.

        Raises:
            FatalError: a preconditioner that reads ``A`` with ``A`` given as a callable.
        """
        if isinstance(A, BlockJacobian):
            A = A.dense()
        dense = isinstance(A, torch.Tensor)
        if dense and torch.is_grad_enabled() and (A.requires_grad or b.requires_grad):
            vec = b.dim() == A.dim() - 1
            x, _ = torch.linalg.solve_ex(A, b.unsqueeze(-1) if vec else b)
            return x.squeeze(-1) if vec else x
        if dense:
            vec = b.dim() == A.dim() - 1
            Aop = lambda v: (A @ v.unsqueeze(-1)).squeeze(-1)  # noqa: E731
        else:
            vec = True
            Aop = A
        if not dense and self.preconditioner.needs_matrix:
            raise FatalError(
                f"{type(self).__name__}: {type(self.preconditioner).__name__} needs the "
                "matrix; it was given only as a matrix-vector product"
            )
        state = self.preconditioner.setup(A if dense else None)
        if vec:
            return self._solve(Aop, b, state)
        cols = [self._solve(Aop, b[..., j], state) for j in range(b.shape[-1])]
        return torch.stack(cols, dim=-1)

    def _threshold(self, b: torch.Tensor) -> torch.Tensor:
        """The per-point residual tolerance, ``max(abs_tol, rel_tol ||b||)``."""
        nb = torch.linalg.vector_norm(b, dim=-1)
        return torch.clamp(self.opts["rel_tol"] * nb, min=self.opts["abs_tol"])

    def _solve(self, Aop, b, state):  # pragma: no cover
        raise NotImplementedError

    def describe(self) -> str:
        """One line naming the solver, its tolerances and its preconditioner.

        Returns:
            (str): e.g. ``GMRES(rel_tol=0.0001, abs_tol=0, max_its=1000,
                preconditioner=NoPreconditioner)``.
        """
        return (
            f"{type(self).__name__}(rel_tol={self.opts['rel_tol']:g}, "
            f"abs_tol={self.opts['abs_tol']:g}, max_its={self.opts['max_its']}, "
            f"preconditioner={type(self.preconditioner).__name__})"
        )


@register()
class GMRES(KrylovSolver):
    """Restarted GMRES(m), right-preconditioned, batched over points.

    Each cycle builds an orthonormal basis ``V`` of the Krylov space of ``A M⁻¹`` from
    the current residual (Arnoldi with classical Gram-Schmidt done twice), reduces the
    Hessenberg matrix with Givens rotations and updates ``x += M⁻¹ V y`` with the
    least-squares ``y`` of that cycle. A cycle has ``m = min(restart, n, max_its)``
    steps; cycles repeat until every point has converged or ``max_its`` iterations have
    run. Within a cycle a point stops adding basis vectors once its residual estimate
    meets the tolerance or the Arnoldi process breaks down (the space is invariant: the
    solution is in it).
    """

    fields = (
        option("restart", int, 40, doc="Krylov space size between restarts", bounds="[1, inf)"),
        *KrylovSolver.fields,
    )

    def _solve(self, Aop, b, state):
        pre = self.preconditioner
        n = b.shape[-1]
        m = min(self.opts["restart"], n, self.opts["max_its"])
        cycles = math.ceil(self.opts["max_its"] / m)
        thr = self._threshold(b)
        eps = torch.finfo(b.dtype).eps
        traced = _tracing()

        def cycle(x):
            r = b - Aop(x)
            beta = torch.linalg.vector_norm(r, dim=-1)
            active = beta > thr
            V = [_div(r, beta.unsqueeze(-1), active.unsqueeze(-1))]
            g = beta
            cols, rhs = [], []
            cs: list[torch.Tensor] = []
            sn: list[torch.Tensor] = []
            for j in range(m):
                if not traced and j and not bool(active.any()):
                    break
                w = Aop(pre.apply(state, V[j]))
                w0 = torch.linalg.vector_norm(w, dim=-1)
                Vs = torch.stack(V, dim=-2)  # (*B, j+1, n)
                h = (Vs @ w.unsqueeze(-1)).squeeze(-1)
                w = w - (h.unsqueeze(-2) @ Vs).squeeze(-2)
                h2 = (Vs @ w.unsqueeze(-1)).squeeze(-1)  # the second Gram-Schmidt pass
                w = w - (h2.unsqueeze(-2) @ Vs).squeeze(-2)
                h = h + h2
                hn = torch.linalg.vector_norm(w, dim=-1)
                hs = list(h.unbind(-1))
                for i in range(j):  # the earlier rotations
                    hi, hk = hs[i], hs[i + 1]
                    hs[i] = cs[i] * hi + sn[i] * hk
                    hs[i + 1] = -sn[i] * hi + cs[i] * hk
                den = torch.sqrt(hs[j] * hs[j] + hn * hn)
                ok = active & (den > 0) & torch.isfinite(den)
                c = _div(hs[j], den, ok) + (~ok).to(b.dtype)
                s = _div(hn, den, ok)
                hs[j] = torch.where(ok, den, torch.ones_like(den))
                col = torch.stack(hs + [torch.zeros_like(den)] * (m - j - 1), dim=-1)
                e = torch.zeros(m, dtype=b.dtype, device=b.device)
                e[j] = 1.0
                cols.append(torch.where(ok.unsqueeze(-1), col, e))
                rhs.append(torch.where(ok, c * g, torch.zeros_like(g)))
                g = -s * g
                cs.append(c)
                sn.append(s)
                active = ok & (g.abs() > thr) & (hn > eps * w0)
                V.append(_div(w, hn.unsqueeze(-1), active.unsqueeze(-1)))
            k = len(cols)
            R = torch.stack(cols, dim=-1)[..., :k, :]  # (*B, k, k), upper triangular
            y = torch.linalg.solve_triangular(
                R, torch.stack(rhs, dim=-1).unsqueeze(-1), upper=True
            ).squeeze(-1)
            dx = (y.unsqueeze(-2) @ torch.stack(V[:k], dim=-2)).squeeze(-2)
            return x + pre.apply(state, dx)

        def cond(it, x):
            r = b - Aop(x)
            more = torch.linalg.vector_norm(r, dim=-1) > thr
            return (it < cycles) & more.any()

        def body(it, x):
            return it + 1, cycle(x)

        it0 = torch.zeros((), dtype=torch.int64, device=b.device) if traced else 0
        _, x = run_loop(cond, body, (it0, torch.zeros_like(b)))
        return x


@register()
class BiCGStab(KrylovSolver):
    """BiCGStab, right-preconditioned, batched over points.

    Two products with ``A`` and two preconditioner applications per iteration and a
    fixed amount of memory (no growing basis, so no restart width). A point whose
    bi-orthogonality breaks down (``r̂ · r = 0`` or ``r̂ · A p = 0``, the latter up to
    round-off) restarts from its current iterate with ``r + A M⁻¹ p`` as the new shadow
    vector; a point that has converged keeps its iterate. Convergence is decided on the
    true residual ``b - A x``: where the recursively updated one claims it, the true one
    replaces it (one more product with ``A`` per iteration). The loop ends when every
    point has converged or after ``max_its`` iterations.
    """

    def _solve(self, Aop, b, state):
        pre = self.preconditioner
        thr = self._threshold(b)
        max_its = self.opts["max_its"]
        eps = torch.finfo(b.dtype).eps
        traced = _tracing()

        def norm(v):
            return torch.linalg.vector_norm(v, dim=-1)

        def cond(it, x, r, rhat, p, v, rho, alpha, omega):
            return (it < max_its) & (norm(r) > thr).any()

        def body(it, x, r, rhat, p, v, rho, alpha, omega):
            active = norm(r) > thr
            rho_new = _dot(rhat, r)
            restart = active & ((rho_new == 0) | (rho == 0) | (omega == 0))
            # the new shadow vector r + v: v is A M⁻¹ p of the pass that broke down, so
            # that (r + v) · v = r · v + |v|² is nonzero where r · v was 0
            rhat = torch.where(restart.unsqueeze(-1), r + v, rhat)
            rho_new = torch.where(restart, _dot(rhat, r), rho_new)
            beta = _div(rho_new, rho, ~restart) * _div(alpha, omega, ~restart)
            p = r + beta.unsqueeze(-1) * (p - omega.unsqueeze(-1) * v)
            phat = pre.apply(state, p)
            v = Aop(phat)
            rv = _dot(rhat, v)
            small = rv.abs() <= eps * norm(rhat) * norm(v)
            ok = active & ~small & torch.isfinite(rv)
            alpha = _div(rho_new, rv, ok)
            s = r - alpha.unsqueeze(-1) * v
            shat = pre.apply(state, s)
            t = Aop(shat)
            tt = _dot(t, t)
            omega = _div(_dot(t, s), tt, ok & (tt > 0))
            x_new = x + alpha.unsqueeze(-1) * phat + omega.unsqueeze(-1) * shat
            r_new = s - omega.unsqueeze(-1) * t
            ok = ok & torch.isfinite(x_new).all(-1)
            keep = ok.unsqueeze(-1)
            x = torch.where(keep, x_new, x)
            r = torch.where(keep, r_new, r)
            # where the updated residual claims convergence, it is replaced by the true
            # one, b - A x (the two drift apart in round-off); a point still above its
            # tolerance then restarts, as does one that could not step
            claim = norm(r) <= thr
            r_true = b - Aop(x)
            r = torch.where(claim.unsqueeze(-1), r_true, r)
            drift = claim & (norm(r_true) > thr)
            rho = torch.where(ok & ~drift, rho_new, torch.zeros_like(rho))
            return it + 1, x, r, rhat, p, v, rho, alpha, omega

        zeros = torch.zeros_like(b)
        ones = torch.ones_like(b[..., 0])
        it0 = torch.zeros((), dtype=torch.int64, device=b.device) if traced else 0
        state0 = (it0, zeros, b.clone(), b.clone(), zeros, zeros.clone(), ones, ones, ones)
        out = run_loop(cond, body, state0)
        return out[1]
