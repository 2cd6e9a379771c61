"""Batched dense linear solvers for the Newton update ``J du = -r``.

Where the runtime (neml2-aoti-runtime) is installed, :class:`DenseLU` calls its operator
``neml2::dense_lu_solve``, a batched LU vectorized across the systems; otherwise, and for
systems it does not take, ``torch.linalg.solve_ex``. Both, unlike ``solve``, keep the
graph exportable: a singular point yields non-finite values there, which Newton then
reports as not converged, instead of an exception from inside the graph.
"""

from __future__ import annotations

import torch

from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.solvers._block_jacobian import BlockJacobian
from neml2.tensors import FatalError, use_cpu_kernels
from neml2.tensors._tangents import _tracing


class LinearSolver:
    """Base class of the batched linear solvers: ``A x = b`` for ``A (*B, n, n)``.

    A subclass lists its options in ``fields`` and implements :meth:`solve`;
    the registered ones are built from ``[Solvers]`` blocks of an input file.

    Attributes:
        opts: the option values, defaults filled in (``dict``).
    """

    SECTION = "Solvers"
    fields: tuple = ()
    hit_name: str | None = None

    def __init__(self, **values):
        """Make a solver from option values.

        Args:
            **values (Any): the options of the class's ``fields`` by name; options
                left out take their defaults.

        Raises:
            FatalError: an option the class does not have, or a required one
                is missing.
        """
        self.opts = Schema.of(type(self)).fill_defaults(values, type(self).__name__)

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the solver of a ``[Solvers]`` block of an input file.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built.

        Returns:
            (LinearSolver): The solver, an instance of *cls*.

        Raises:
            FatalError: an unknown option or a value of the wrong type; the
                message names the file, line and column.
        """
        return cls(**Schema.of(cls).read_hit(node, ctx))

    def solve(self, A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        """Solve ``A x = b`` at every batch point.

        Args:
            A: the matrices, ``(*B, n, n)``.
            b: the right-hand sides: one vector ``(*B, n)`` or ``k`` columns
                ``(*B, n, k)`` per batch point.

        Returns:
            ``x``, the shape of *b*. Where ``A`` is singular the values are
                non-finite (no exception, so the graph stays exportable).

        Raises:
            NotImplementedError: the base class does not solve.
        """
        raise NotImplementedError


_UNRESOLVED = object()
_operator = _UNRESOLVED
#: ``torch.ops.neml2.dense_lu_solve_blocks``, resolved with :data:`_operator`
_blocks_operator = None


def dense_lu_operator():
    """``torch.ops.neml2.dense_lu_solve``, or ``None`` where this process cannot have it.

    The operator lives in libneml2 (neml2-aoti-runtime, ``cpp/ops``): a batched LU solve
    of many small systems, vectorized across the systems, several times faster than
    LAPACK's one-matrix routines on 7 x 7 to 64 x 64. Importing the runtime's binding loads
    libneml2, which registers it. Without the runtime installed, ``None``: the solvers
    then call ``torch.linalg.solve_ex``. Resolved once; :class:`DenseLU` resolves it when
    it is made, outside any trace (an import that fails inside a ``torch.compile`` trace
    breaks the graph).

    The same resolution installs libneml2's eager kernels of the typed tensors
    (:func:`neml2.tensors.use_cpu_kernels`): ``neml2::small_mm`` for the ``R2`` products
    and the ``SR2`` / ``WR2`` storage conversions, the same values as the torch forms,
    several times faster on a batch of small matrices.
    """
    global _operator, _blocks_operator
    if _operator is _UNRESOLVED:
        try:  # the one import of the runtime in neml2-models (tests-integration/test_layering.py)
            from neml2.aoti import _ops
        except (ImportError, OSError):  # not installed, or its libneml2 does not load
            _ops = None
        _operator = None if _ops is None else _ops.dense_lu_solve
        _blocks_operator = None if _ops is None else _ops.dense_lu_solve_blocks
        if _ops is not None:
            use_cpu_kernels(_ops.cpu_kernels)
    return _operator


def block_lu_applies(u: torch.Tensor, n: int) -> bool:
    """Whether an eager Newton step at the iterate *u* may hand :class:`DenseLU` its
    Jacobian (``n x n`` systems) as a
    :class:`~neml2.solvers._block_jacobian.BlockJacobian`: ``neml2::dense_lu_solve_blocks``
    is there and solves them with its CPU kernel (1 < n <= 64, float32 or float64), and
    neither autograd, a trace nor vmap (the operator has no rules for them) is at work."""
    if u.device.type != "cpu" or u.dtype not in (torch.float32, torch.float64):
        return False
    if not 1 < n <= 64 or torch.is_grad_enabled():
        return False
    if _tracing():
        return False
    if torch._C._functorch.is_functorch_wrapped_tensor(u):
        return False
    return dense_lu_operator() is not None and _blocks_operator is not None


def _operator_applies(A: torch.Tensor, B: torch.Tensor) -> bool:
    """Whether ``neml2::dense_lu_solve`` may solve ``A X = B`` (matrix right-hand sides)."""
    if A.device.type != "cpu" or A.dtype not in (torch.float32, torch.float64):
        return False
    if A.dtype != B.dtype or A.shape[:-2] != B.shape[:-2]:
        return False
    if torch.is_grad_enabled() and (A.requires_grad or B.requires_grad):
        return False  # the operator has no autograd formula
    traced = _tracing()
    functorch = torch._C._functorch.is_functorch_wrapped_tensor  # (not traceable)
    if not traced and (functorch(A) or functorch(B)):
        return False  # nor a vmap rule
    return dense_lu_operator() is not None


@register()
class DenseLU(LinearSolver):
    """Dense LU factorization with partial pivoting (batched). It has no options."""

    def __init__(self, **values):
        """Make the solver; it has no options.

        Args:
            **values (Any): none are accepted.

        Raises:
            FatalError: an option was given.
        """
        super().__init__(**values)
        dense_lu_operator()  # resolved now, outside any trace

    def solve(self, A, b):
        """Solve ``A x = b`` at every batch point: ``neml2::dense_lu_solve`` where it
        applies (see the module docstring), else ``torch.linalg.solve_ex``.

        A 1x1 system (one scalar unknown: the consistency parameter of a radial return)
        is a division, which the compiled routes fuse into the surrounding kernel: no LU
        factorization and triangular solve per point.

        Args:
            A (torch.Tensor): the matrices, ``(*B, n, n)``; or an eager Newton step's
                :class:`~neml2.solvers._block_jacobian.BlockJacobian` (``B = (N,)``),
                solved by ``neml2::dense_lu_solve_blocks`` from its blocks.
            b (torch.Tensor): the right-hand sides, ``(*B, n)`` or ``(*B, n, k)``.

        Returns:
            (torch.Tensor): ``x``, the shape of *b*; non-finite at a point where ``A`` is
                singular (no exception).
        """
        if isinstance(A, BlockJacobian):  # an eager Newton step's (block_lu_applies)
            vec = b.dim() == 2
            x = A.solve_with(_blocks_operator, b.unsqueeze(-1) if vec else b)
            return x.squeeze(-1) if vec else x
        vec = b.dim() == A.dim() - 1
        if A.shape[-1] == 1:
            return b / (A[..., 0] if vec else A)
        B = b.unsqueeze(-1) if vec else b
        if _operator_applies(A, B):
            x, _ = dense_lu_operator()(A, B)
        else:
            x, _ = torch.linalg.solve_ex(A, B)
        return x.squeeze(-1) if vec else x


@register()
class SchurComplement(LinearSolver):
    """Two-group block elimination: solve the primary block, then its Schur complement.

    With unknowns split ``[u_p; u_s]`` (``unknown_primary_group``) and residual
    rows ``[r_p; r_s]`` (``residual_primary_group``):
    ``S = A_ss - A_sp A_pp⁻¹ A_ps``, ``x_s = S⁻¹ (b_s - A_sp A_pp⁻¹ b_p)``,
    ``x_p = A_pp⁻¹ (b_p - A_ps x_s)``. The group sizes are set by the nonlinear
    system (``split``) before solving.

    Attributes:
        primary: the solver of the primary block ``A_pp``.
        schur: the solver of the Schur complement ``S``.
        n_primary: the size of the primary block (entries of the flat unknown
            vector), ``None`` until :meth:`split` is called.
        grains: ``(rows, cols)``, two ``(G, m)`` integer tensors, where the primary block
            is block-diagonal over ``G`` grains (set by :meth:`split`), else ``None``.
    """

    fields = (
        option("residual_primary_group", int, 0, doc="index of the primary residual group"),
        option("unknown_primary_group", int, 0, doc="index of the primary unknown group"),
        option("primary_solver", str, "", doc="[Solvers] block for the primary block"),
        option("schur_solver", str, "", doc="[Solvers] block for the Schur complement"),
    )

    def __init__(self, primary: LinearSolver | None = None, schur=None, **values):
        """Make a Schur-complement solver from two sub-solvers and its options.

        Args:
            primary: the solver of the primary block ``A_pp`` (default ``None``:
                a :class:`DenseLU`).
            schur (LinearSolver | None): the solver of the Schur complement ``S`` (default ``None``:
                a :class:`DenseLU`).
            **values (Any): the options: ``residual_primary_group`` and
                ``unknown_primary_group`` (``int``, default 0),
                ``primary_solver`` and ``schur_solver`` (names of ``[Solvers]``
                blocks; :meth:`from_hit` builds them, here they are only
                recorded).

        Raises:
            FatalError: an unknown option.
        """
        super().__init__(**values)
        self.primary = primary or DenseLU()
        self.schur = schur or DenseLU()
        self.n_primary: int | None = None
        self.grains: tuple[torch.Tensor, torch.Tensor] | None = None

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the solver of a ``[Solvers]`` block, with its sub-solvers.

        ``primary_solver`` and ``schur_solver``, where given, name other
        ``[Solvers]`` blocks, which are built first.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built.

        Returns:
            (SchurComplement): The solver.

        Raises:
            FatalError: an unknown option, or a sub-solver block that is
                missing or cannot be built; the message names the location.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        subs = {}
        for key in ("primary_solver", "schur_solver"):
            if values.get(key):
                subs[key] = ctx.object("Solvers", values[key], node.param(key).location)
        return cls(primary=subs.get("primary_solver"), schur=subs.get("schur_solver"), **values)

    def split(self, n_primary: int, grains=None) -> None:
        """Set the size of the primary block (``ImplicitUpdate`` calls this before a solve).

        Args:
            n_primary: the number of entries of the flat unknown vector in the
                primary group: the first *n_primary* rows and columns of ``A``
                form ``A_pp``.
            grains (tuple[torch.Tensor, torch.Tensor] | None): ``(rows, cols)``, two
                ``(G, m)`` integer tensors (positions in ``A_pp``) where ``A_pp`` is
                block-diagonal over ``G`` grains: the rows ``rows[g]`` have their
                non-zeros in the columns ``cols[g]`` only, and ``cols`` lists every
                column once. ``A_pp`` is then solved as ``G`` systems of ``m x m`` per
                point (a Taylor model of 5 grains, 10 unknowns each: 5 LUs of 10 x 10
                instead of one of 50 x 50). ``None`` (the default): one dense solve.
        """
        self.n_primary = n_primary
        self.grains = grains

    def _solve_primary(self, App: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """``A_pp⁻¹ B`` for ``B (*B, p, k)``: dense, or grain by grain (:meth:`split`)."""
        if self.grains is None:
            return self.primary.solve(App, B)
        rows, cols = self.grains
        G, m = rows.shape
        p = App.shape[-1]
        # a gather on the flattened matrices: 1.5x faster than advanced indexing and 2x
        # faster than index_select (1000 Taylor points, 5 grains of 10: 2.4 ms)
        entries = (rows.unsqueeze(-1) * p + cols.unsqueeze(-2)).flatten()
        flat = App.reshape(-1, p * p)
        A = torch.gather(flat, 1, entries.expand(flat.shape[0], -1))
        A = A.reshape(*App.shape[:-2], G, m, m)
        Bg = B.index_select(-2, rows.flatten()).unflatten(-2, (G, m))
        X = self.primary.solve(A, Bg)  # (*B, G, m, k), at the columns cols
        return X.flatten(-3, -2).index_select(-2, torch.argsort(cols.flatten()))

    def solve(self, A, b):
        """Solve ``A x = b`` at every batch point by block elimination.

        Args:
            A (torch.Tensor): the matrices, ``(*B, n, n)``, primary unknowns and
                rows first.
            b (torch.Tensor): the right-hand sides, ``(*B, n)`` or ``(*B, n, k)``.

        Returns:
            (torch.Tensor): ``x = [x_p; x_s]``, the shape of *b*.

        Raises:
            FatalError: :meth:`split` was not called.
        """
        if self.n_primary is None:
            raise FatalError("SchurComplement: the equation system did not set the group sizes")
        p = self.n_primary
        vec = b.dim() == A.dim() - 1
        B = b.unsqueeze(-1) if vec else b
        App, Aps = A[..., :p, :p], A[..., :p, p:]
        Asp, Ass = A[..., p:, :p], A[..., p:, p:]
        bp, bs = B[..., :p, :], B[..., p:, :]
        # one primary solve for both A_ps and b_p
        Y = self._solve_primary(App, torch.cat([Aps, bp], dim=-1))
        Z, y = Y[..., :, : Ass.shape[-1]], Y[..., :, Ass.shape[-1] :]
        S = Ass - Asp @ Z
        xs = self.schur.solve(S, bs - Asp @ y)
        xp = y - Z @ xs
        x = torch.cat([xp, xs], dim=-2)
        return x.squeeze(-1) if vec else x
