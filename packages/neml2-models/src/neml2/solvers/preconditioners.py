"""Preconditioners of the Krylov linear solvers (:mod:`neml2.solvers.krylov`).

A preconditioner is a ``[Solvers]`` block that a ``GMRES`` or ``BiCGStab`` block names
in its ``preconditioner`` option. It approximates the inverse of the Newton matrix
``A (*B, n, n)`` at every batch point: :meth:`Preconditioner.setup` builds ``M⁻¹`` from
``A`` once per linear solve, :meth:`Preconditioner.apply` computes ``z = M⁻¹ v``. The
solvers precondition on the right (``A M⁻¹ y = b``, ``x = M⁻¹ y``), so the residual they
test is the residual of the original system.

Every form is plain, fixed-shape torch (no data-dependent branch), so it runs on the
eager routes and traces into the compiled ones. A point where the diagonal, a diagonal
block or the whole matrix is singular takes the identity instead (no inf, no NaN).
"""

from __future__ import annotations

import torch

from neml2.models._registry import register
from neml2.models._schema import Schema
from neml2.tensors import FatalError


class Preconditioner:
    """Base class: the identity, ``M⁻¹ = I``.

    A subclass overrides :meth:`setup` (what it keeps of ``A``) and :meth:`apply`.

    Attributes:
        opts: the option values (none of the built-in preconditioners has options).
        needs_matrix: whether :meth:`setup` reads the entries of ``A``; a solver given
            ``A`` only as a matrix-vector product cannot use such a preconditioner.
    """

    SECTION = "Solvers"
    fields: tuple = ()
    needs_matrix = True

    def __init__(self, **values):
        """Make a preconditioner from option values.

        Args:
            **values (Any): the options of the class's ``fields`` (none for the built-in
                ones).

        Raises:
            FatalError: an option the class does not have.
        """
        self.opts = Schema.of(type(self)).fill_defaults(values, type(self).__name__)

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the preconditioner of a ``[Solvers]`` block of an input file.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built.

        Returns:
            (Preconditioner): The preconditioner, an instance of *cls*.

        Raises:
            FatalError: an unknown option; the message names the location.
        """
        return cls(**Schema.of(cls).read_hit(node, ctx))

    def setup(self, A: torch.Tensor | None):
        """What :meth:`apply` needs of the matrix.

        Args:
            A: the matrices, ``(*B, n, n)``; ``None`` where the solver has only a
                matrix-vector product.

        Returns:
            (torch.Tensor | None): the state :meth:`apply` takes (here ``None``).
        """
        return None

    def apply(self, state, v: torch.Tensor) -> torch.Tensor:
        """``M⁻¹ v`` at every batch point.

        Args:
            state (torch.Tensor | None): what :meth:`setup` returned.
            v: the vectors, ``(*B, n)``.

        Returns:
            (torch.Tensor): ``M⁻¹ v``, ``(*B, n)``.
        """
        return v


def _safe_inverse(blocks: torch.Tensor) -> torch.Tensor:
    """The inverses of square matrices ``(..., m, m)``; the identity where one is singular
    (or not finite), so that no inf or NaN reaches the Krylov iteration."""
    inv, info = torch.linalg.inv_ex(blocks)
    ok = (info == 0) & torch.isfinite(inv).flatten(-2).all(-1)
    eye = torch.eye(blocks.shape[-1], dtype=blocks.dtype, device=blocks.device)
    return torch.where(ok[..., None, None], inv, eye)


def _matvec(M: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``M v`` for ``M (*B, n, n)`` and ``v (*B, n)``."""
    return (M @ v.unsqueeze(-1)).squeeze(-1)


@register()
class NoPreconditioner(Preconditioner):
    """No preconditioning: ``M⁻¹ = I``. The same as leaving ``preconditioner`` unset."""

    needs_matrix = False


@register()
class JacobiPreconditioner(Preconditioner):
    """Point Jacobi: ``M = diag(A)``, the vector scaled entry by entry, ``z_i = v_i / A_ii``.

    A zero diagonal entry scales by 1.
    """

    def setup(self, A):
        """The inverted diagonal.

        Args:
            A (torch.Tensor): the matrices, ``(*B, n, n)``.

        Returns:
            (torch.Tensor): ``1 / diag(A)``, ``(*B, n)``; 1 where a diagonal entry is 0 or
                not finite.
        """
        d = torch.diagonal(A, dim1=-2, dim2=-1)
        ok = (d != 0) & torch.isfinite(d)
        return torch.where(ok, 1.0 / torch.where(ok, d, torch.ones_like(d)), torch.ones_like(d))

    def apply(self, state, v):
        """``v / diag(A)``.

        Args:
            state (torch.Tensor): ``1 / diag(A)`` from :meth:`setup`, ``(*B, n)``.
            v (torch.Tensor): the vectors, ``(*B, n)``.

        Returns:
            (torch.Tensor): ``v / diag(A)``, ``(*B, n)``.
        """
        return state * v


@register()
class BlockJacobiPreconditioner(Preconditioner):
    """Block Jacobi: ``M = blockdiag(A_11, A_22, ...)``, the diagonal blocks of ``A``.

    The blocks are the unknowns of the equation system, one per variable (an ``SR2``
    unknown a 6 x 6 block, a ``Scalar`` a 1 x 1): ``ImplicitUpdate`` sets them with
    :meth:`set_blocks` before it solves. Until then (a solver used on its own), every
    block is 1 x 1, i.e. point Jacobi. A singular block is replaced by the identity.

    Attributes:
        sizes: the block sizes in the order of the unknowns, summing to ``n``, or
            ``None`` (1 x 1 blocks).
    """

    def __init__(self, **values):
        """Make the preconditioner; it has no options.

        Args:
            **values (Any): none are accepted.

        Raises:
            FatalError: an option was given.
        """
        super().__init__(**values)
        self.sizes: tuple[int, ...] | None = None

    def set_blocks(self, sizes) -> None:
        """Set the diagonal block sizes (``ImplicitUpdate`` calls this before a solve).

        Args:
            sizes (Sequence[int]): the sizes of the unknowns' blocks, in order.
        """
        self.sizes = tuple(int(s) for s in sizes)

    def setup(self, A):
        """The inverted diagonal blocks.

        Args:
            A (torch.Tensor): the matrices, ``(*B, n, n)``.

        Returns:
            (torch.Tensor): ``blockdiag(A_11⁻¹, A_22⁻¹, ...)``, ``(*B, n, n)``.

        Raises:
            FatalError: the block sizes set do not sum to ``n``.
        """
        n = A.shape[-1]
        sizes = self.sizes or (1,) * n
        if sum(sizes) != n:
            raise FatalError(
                f"BlockJacobiPreconditioner: block sizes {list(sizes)} do not sum to the "
                f"system size {n}"
            )
        parts = []
        start = 0
        for m in sizes:
            blk = _safe_inverse(A[..., start : start + m, start : start + m])
            row = [torch.zeros_like(A[..., start : start + m, :start]), blk]
            row.append(torch.zeros_like(A[..., start : start + m, start + m :]))
            parts.append(torch.cat(row, dim=-1))
            start += m
        return torch.cat(parts, dim=-2)

    def apply(self, state, v):
        """``blockdiag(A_kk)⁻¹ v``.

        Args:
            state (torch.Tensor): the inverted blocks from :meth:`setup`, ``(*B, n, n)``.
            v (torch.Tensor): the vectors, ``(*B, n)``.

        Returns:
            (torch.Tensor): ``blockdiag(A_kk)⁻¹ v``, ``(*B, n)``.
        """
        return _matvec(state, v)


@register()
class FullPreconditioner(Preconditioner):
    """The whole matrix: ``M = A``, inverted once per linear solve.

    The Krylov solver then converges in one iteration; the preconditioner does the work
    of a direct solve. Useful as a check, and where the same factor is reused.
    A singular ``A`` at a point is replaced by the identity there.
    """

    def setup(self, A):
        """The inverse of the whole matrix.

        Args:
            A (torch.Tensor): the matrices, ``(*B, n, n)``.

        Returns:
            (torch.Tensor): ``A⁻¹``, ``(*B, n, n)`` (the identity where ``A`` is singular).
        """
        return _safe_inverse(A)

    def apply(self, state, v):
        """``A⁻¹ v``.

        Args:
            state (torch.Tensor): ``A⁻¹`` from :meth:`setup`, ``(*B, n, n)``.
            v (torch.Tensor): the vectors, ``(*B, n)``.

        Returns:
            (torch.Tensor): ``A⁻¹ v``, ``(*B, n)``.
        """
        return _matvec(state, v)
