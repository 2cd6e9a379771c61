"""Helpers for values laid out on a 1-D cell axis (the last sub-batch axis)."""

from __future__ import annotations

from neml2.tensors import FatalError, Scalar, cat


def n_cells(x: Scalar) -> int | None:
    """The size of ``x``'s cell axis (its last sub-batch axis), ``None`` without one."""
    return int(x.sub_batch_shape[-1]) if x.sub_batch_ndim else None


def on_cells(x: Scalar, n: int) -> Scalar:
    """``x`` with a cell axis of size ``n``: a value without one is repeated on every cell."""
    if x.sub_batch_ndim == 0:
        x = x.sub_batch.unsqueeze(-1)
    lead = tuple(x.sub_batch_shape[:-1])
    return x.sub_batch.expand(*lead, n)


def cells(x: Scalar, start: int | None, stop: int | None) -> Scalar:
    """``x[start:stop]`` along the cell axis."""
    n = x.sub_batch_ndim
    return x.sub_batch[(slice(None),) * (n - 1) + (slice(start, stop),)]


def require_cells(x: Scalar, label: str, what: str, at_least: int = 1) -> int:
    """The cell count of ``x``; an error naming ``what`` when it has too few cells."""
    n = n_cells(x)
    if n is None or n < at_least:
        raise FatalError(
            f"{label}: {what} needs a cell axis (its last sub-batch axis) of at least "
            f"{at_least} entries (got shape {tuple(x.shape)}, sub_batch_ndim {x.sub_batch_ndim}); "
            "give it as Scalar(..., sub_batch_ndim=1)"
        )
    return n


def cat_cells(a: Scalar, b: Scalar) -> Scalar:
    """``a`` and ``b`` joined along the cell axis (the other batch axes broadcast)."""
    s = max(a.sub_batch_ndim, b.sub_batch_ndim)
    parts = []
    for x in (a, b):
        while x.sub_batch_ndim < s:
            x = x.sub_batch.unsqueeze(0)
        parts.append(x.sub_batch.retag(0))
    last = max(p.dynamic_ndim for p in parts) - 1
    return cat(parts, last).sub_batch.retag(s)
