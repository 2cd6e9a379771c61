"""KWN precipitation: putting a nucleation source on the size-bin (cell) axis."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.tensors import Scalar


@register()
class DumpInSmallestBin(Model):
    """Put a source magnitude entirely into the first (smallest) size bin.

    ``s_1 = m``, ``s_i = 0`` for ``i = 2..N``, with ``N`` the number of cell
    centers (the last sub-batch axis of ``cell_centers``, ``(N,)`` with
    ``sub_batch_ndim = 1``; only its size is used). The magnitude ``m`` is a
    per-point Scalar ``(*B,)``; if it has a cell axis itself, its first entry
    is used. The source ``s`` is ``(*B, N)`` with ``sub_batch_ndim = 1``.
    """

    fields = (
        input("magnitude", Scalar, doc="m, the source magnitude"),
        parameter("cell_centers", Scalar, doc="the cell centers (their count N is used)"),
        output("dumped_source", Scalar, "state/dumped_source", doc="s, the binned source"),
    )

    def forward(self, m: Scalar) -> Scalar:
        centers = self.param("cell_centers")
        if centers.sub_batch_ndim < 1 or centers.sub_batch_shape[-1] < 1:
            raise self.error(
                "needs a cell axis (the last sub-batch axis) of at least one entry; "
                "give the centers as Scalar(..., sub_batch_ndim=1)",
                "cell_centers",
            )
        n = int(centers.sub_batch_shape[-1])
        first = torch.zeros(n, dtype=m.dtype, device=m.device)
        first[0] = 1.0
        selector = Scalar(first, sub_batch_ndim=1)
        if m.sub_batch_ndim > 0:
            lead = (slice(None),) * (m.sub_batch_ndim - 1)
            m = m.sub_batch[(*lead, slice(0, 1))]
        return m * selector
