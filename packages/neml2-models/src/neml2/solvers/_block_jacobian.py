"""The Jacobian of an eager Newton step kept as its blocks, for the batched LU to read.

An implicit update's ``∂r/∂u`` comes from forward-mode tangents: one tensor per residual
and unknown, ``(K, N, *trailing)`` (``K`` the unknown's seeds). Assembling them into one
``(N, n, n)`` matrix is a pass over the whole Jacobian that only feeds the LU, which then
reads it once more. :class:`BlockJacobian` keeps the tangents as they are, and
``neml2::dense_lu_solve_blocks`` reads them straight into its interleaved scratch.
Chaboche with 4 back stresses (31 unknowns), 3334 points, 2 threads: the block copies
were a fifth of an eager Newton step.
"""

from __future__ import annotations

import torch


class BlockJacobian:
    """``∂r/∂u`` of ``N`` systems, ``(N, n, n)``, given by its blocks.

    Block ``(r0, c0, d)`` holds rows ``[r0, r0 + rs)`` and columns ``[c0, c0 + cs)`` of
    every system: entry ``(r0 + i, c0 + j)`` of system ``p`` is ``d[j, p, i]``, with
    ``d`` of shape ``(cs, N, rs)`` (a stride of 0 along ``N`` where the block is the same
    for every system). Entries no block covers are 0; blocks do not overlap.

    Only what an eager Newton loop does with its Jacobian is offered: take the rows of
    some points (``J[index]``) and hand it to :class:`neml2.solvers.DenseLU`, which solves
    with it as it is; :meth:`dense` assembles the matrix for anything else.
    """

    __slots__ = ("blocks", "n", "points")

    def __init__(self, blocks: list[tuple[int, int, torch.Tensor]], n: int, points: int):
        """Args:
        blocks: ``(r0, c0, d)`` per block, ``d`` ``(cs, N, rs)``.
        n: the systems' size.
        points: ``N``.
        """
        self.blocks = blocks
        self.n = n
        self.points = points

    @property
    def shape(self) -> torch.Size:
        return torch.Size((self.points, self.n, self.n))

    @property
    def dtype(self) -> torch.dtype:
        return self.blocks[0][2].dtype

    @property
    def device(self) -> torch.device:
        return self.blocks[0][2].device

    def __getitem__(self, index: torch.Tensor) -> BlockJacobian:
        """The Jacobian of the points *index* (1-D integer indices into ``N``)."""
        m = int(index.numel())
        blocks = []
        for r0, c0, d in self.blocks:
            if d.stride(1) == 0:  # the same for every point: stays shared
                d = d[:, :1].expand(d.shape[0], m, d.shape[2])
            else:
                d = d[:, index]
            blocks.append((r0, c0, d))
        return BlockJacobian(blocks, self.n, m)

    def dense(self) -> torch.Tensor:
        """The assembled ``(N, n, n)`` matrix."""
        A = self.blocks[0][2].new_zeros((self.points, self.n, self.n))
        for r0, c0, d in self.blocks:
            A[:, r0 : r0 + d.shape[2], c0 : c0 + d.shape[0]] = d.permute(1, 2, 0)
        return A

    def solve_with(self, operator, B: torch.Tensor) -> torch.Tensor:
        """``X`` of ``A X = B`` (``B`` ``(N, n, k)``) by the block LU *operator*
        (``torch.ops.neml2.dense_lu_solve_blocks``)."""
        tensors = [d for _, _, d in self.blocks]
        rows = [r0 for r0, _, _ in self.blocks]
        cols = [c0 for _, c0, _ in self.blocks]
        x, _ = operator(tensors, rows, cols, B.contiguous())
        return x


def as_dense(J) -> torch.Tensor:
    """*J* as a tensor: a :class:`BlockJacobian` assembled, a tensor as it is."""
    return J.dense() if isinstance(J, BlockJacobian) else J
