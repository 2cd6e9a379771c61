"""Flat vectors <-> typed variables, and Jacobian assembly from forward tangents.

A nonlinear system works on one vector per batch point: the unknowns
``u_1 ... u_m`` (each ``(*B, *sub_i, *base_i)``) are flattened and concatenated
along the last axis to ``(*B, n)``; residuals likewise. Jacobian blocks come from
the typed tangents of the residuals with respect to identity seeds on the
unknowns (one seed leaf per unknown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from neml2.tensors import TensorWrapper


@dataclass(frozen=True)
class Slot:
    """One variable of a layout: its type and the shape of its (sub-batch, base) part."""

    name: str
    type: type
    sub: tuple[int, ...]
    base: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.sub) * math.prod(self.base)

    @property
    def trailing(self) -> tuple[int, ...]:
        return (*self.sub, *self.base)


class Layout:
    """The order and shapes of variables packed into one flat vector."""

    def __init__(self, slots: list[Slot]):
        self.slots = slots
        self.offsets = [0]
        for s in slots:
            self.offsets.append(self.offsets[-1] + s.size)

    @property
    def size(self) -> int:
        return self.offsets[-1]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.slots]

    @staticmethod
    def of(values: dict[str, TensorWrapper], names: list[str]) -> Layout:
        slots = []
        for n in names:
            v = values[n]
            nsub = v.sub_batch_ndim
            sub = tuple(v.batch_shape[v.batch_ndim - nsub :]) if nsub else ()
            slots.append(Slot(n, type(v), sub, tuple(v.base_shape)))
        return Layout(slots)

    def flatten(self, values: dict[str, TensorWrapper], batch: tuple[int, ...]) -> torch.Tensor:
        """``(*batch, n)``: every variable broadcast to ``batch`` and packed."""
        parts = []
        for s in self.slots:
            d = values[s.name].data
            d = d.expand(*batch, *s.trailing) if tuple(d.shape) != (*batch, *s.trailing) else d
            parts.append(d.reshape(*batch, s.size))
        return torch.cat(parts, dim=-1)

    def unflatten(self, vec: torch.Tensor) -> dict[str, TensorWrapper]:
        """Typed variables from ``(*batch, n)`` (any leading axes count as batch)."""
        out = {}
        shape = vec.shape[:-1]
        for s, a, b in zip(self.slots, self.offsets, self.offsets[1:], strict=False):
            d = vec[..., a:b].reshape((*shape, *s.trailing))
            out[s.name] = s.type(d, len(s.sub))
        return out

    def seeds(self, dtype, device) -> dict[str, TensorWrapper]:
        """Identity seeds ``(n_i, *sub_i, *base_i)`` per variable (leaf = the variable)."""
        out = {}
        for s in self.slots:
            eye = torch.eye(s.size, dtype=dtype, device=device).reshape(s.size, *s.trailing)
            out[s.name] = s.type(eye, len(s.sub))
        return out

    def block_rows(
        self,
        tangents: dict[str, dict[str, TensorWrapper]],
        seed_layout: Layout,
        batch,
        like,
        prefix: str = "",
        extra=None,
    ) -> torch.Tensor:
        """Assemble ``(*batch, n_self, n_seed)`` from ``tangents[row][prefix + seed]``.

        Functional (no writes into a preallocated matrix): one concatenation, which a
        traced graph fuses into a single pass over the result. *extra*, where given, is
        ``extra(row_slot, seed_slot) -> (*batch, row size, seed size) | None``: a block
        added to (or standing in for an absent) tangent block, e.g. the grain diagonal
        of block-seeded tangents (:func:`neml2.models._block_seeds.block_diagonal`).
        """
        rows = []
        for s in self.slots:
            cols = []
            t_row = tangents.get(s.name, {})
            for c in seed_layout.slots:
                t = t_row.get(prefix + c.name)
                add = extra(s, c) if extra is not None else None
                if t is None:
                    cols.append(add if add is not None else like.new_zeros(*batch, s.size, c.size))
                    continue
                d = t.data.expand(c.size, *batch, *s.trailing).reshape(c.size, *batch, s.size)
                d = d.movedim(0, -1)
                cols.append(d if add is None else add + d)
            rows.append(torch.cat(cols, dim=-1))
        return torch.cat(rows, dim=-2)

    def tangent_rows(
        self, tangents: dict[str, dict[str, TensorWrapper]], leaf: str, k: int, batch, like
    ) -> torch.Tensor | None:
        """``(K, *batch, n_self)`` of every row's tangent w.r.t. *leaf*, None if all absent."""
        parts = []
        found = False
        for s in self.slots:
            t = tangents.get(s.name, {}).get(leaf)
            if t is None:
                parts.append(like.new_zeros(k, *batch, s.size))
                continue
            found = True
            parts.append(t.data.expand(k, *batch, *s.trailing).reshape(k, *batch, s.size))
        return torch.cat(parts, dim=-1) if found else None
