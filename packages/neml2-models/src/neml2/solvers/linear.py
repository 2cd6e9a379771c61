"""Batched dense linear solvers for the Newton update ``J du = -r``.

``torch.linalg.solve_ex`` (not ``solve``) keeps the graph exportable: a singular
point yields non-finite values there, which Newton then reports as not
converged, instead of an exception from inside the graph.
"""

from __future__ import annotations

import torch

from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.tensors import FatalError


class LinearSolver:
    """Solve ``A x = b`` for ``A (*B, n, n)``, ``b (*B, n)`` or ``(*B, n, k)``."""

    SECTION = "Solvers"
    fields: tuple = ()
    hit_name: str | None = None

    def __init__(self, **values):
        self.opts = Schema.of(type(self)).fill_defaults(values, type(self).__name__)

    @classmethod
    def from_hit(cls, node, ctx):
        return cls(**Schema.of(cls).read_hit(node, ctx))

    def solve(self, A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError


@register()
class DenseLU(LinearSolver):
    """Dense LU factorization with partial pivoting (batched)."""

    def solve(self, A, b):
        vec = b.dim() == A.dim() - 1
        x, _ = torch.linalg.solve_ex(A, b.unsqueeze(-1) if vec else b)
        return x.squeeze(-1) if vec else x


@register()
class SchurComplement(LinearSolver):
    """Two-group block elimination: solve the primary block, then its Schur complement.

    With unknowns split ``[u_p; u_s]`` (``unknown_primary_group``) and residual
    rows ``[r_p; r_s]`` (``residual_primary_group``):
    ``S = A_ss - A_sp A_pp⁻¹ A_ps``, ``x_s = S⁻¹ (b_s - A_sp A_pp⁻¹ b_p)``,
    ``x_p = A_pp⁻¹ (b_p - A_ps x_s)``. The group sizes are set by the nonlinear
    system (``split``) before solving.
    """

    fields = (
        option("residual_primary_group", int, 0, doc="index of the primary residual group"),
        option("unknown_primary_group", int, 0, doc="index of the primary unknown group"),
        option("primary_solver", str, "", doc="[Solvers] block for the primary block"),
        option("schur_solver", str, "", doc="[Solvers] block for the Schur complement"),
    )

    def __init__(self, primary: LinearSolver | None = None, schur=None, **values):
        super().__init__(**values)
        self.primary = primary or DenseLU()
        self.schur = schur or DenseLU()
        self.n_primary: int | None = None

    @classmethod
    def from_hit(cls, node, ctx):
        values = Schema.of(cls).read_hit(node, ctx)
        subs = {}
        for key in ("primary_solver", "schur_solver"):
            if values.get(key):
                subs[key] = ctx.object("Solvers", values[key], node.param(key).location)
        return cls(primary=subs.get("primary_solver"), schur=subs.get("schur_solver"), **values)

    def split(self, n_primary: int) -> None:
        self.n_primary = n_primary

    def solve(self, A, b):
        if self.n_primary is None:
            raise FatalError("SchurComplement: the equation system did not set the group sizes")
        p = self.n_primary
        vec = b.dim() == A.dim() - 1
        B = b.unsqueeze(-1) if vec else b
        App, Aps = A[..., :p, :p], A[..., :p, p:]
        Asp, Ass = A[..., p:, :p], A[..., p:, p:]
        bp, bs = B[..., :p, :], B[..., p:, :]
        # one primary solve for both A_ps and b_p
        Y = self.primary.solve(App, torch.cat([Aps, bp], dim=-1))
        Z, y = Y[..., :, : Ass.shape[-1]], Y[..., :, Ass.shape[-1] :]
        S = Ass - Asp @ Z
        xs = self.schur.solve(S, bs - Asp @ y)
        xp = y - Z @ xs
        x = torch.cat([xp, xs], dim=-2)
        return x.squeeze(-1) if vec else x
