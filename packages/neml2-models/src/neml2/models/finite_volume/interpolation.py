"""Linear interpolation of cell-centered values to the interior cell edges."""

from __future__ import annotations

from neml2.models._domain import require
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import output, parameter
from neml2.models.finite_volume._cells import cells, n_cells, on_cells
from neml2.tensors import Scalar


@register()
class LinearlyInterpolateToCellEdges(Model):
    """Linear interpolation from the cell centers to the interior cell edges.

    ``q_e,i = ((x_{i+1} - e_{i+1}) q_i + (e_{i+1} - x_i) q_{i+1}) / (x_{i+1} - x_i)``,
    ``i = 0 .. N-2``: ``q`` (``cell_values``) and ``x`` (``cell_centers``) Scalars on
    N cells, ``e`` (``cell_edges``) on N + 1 edges, each with its axis as the last
    sub-batch axis (a value without one is the same everywhere); the output
    ``q_e`` (``edge_values``) has N - 1 entries (the boundary edges are left out).
    N is read from ``cell_centers``, else ``cell_edges``, else ``cell_values``. The
    cell centers must increase strictly: an eager call where they do not is an error
    naming the points (:mod:`neml2.models._domain`).
    """

    fields = (
        parameter("cell_values", Scalar, doc="the cell-centered values q (N cells)"),
        parameter("cell_centers", Scalar, doc="the cell-center positions x (N cells)"),
        parameter("cell_edges", Scalar, doc="the cell-edge positions e (N + 1 edges)"),
        output("edge_values", Scalar, doc="the interior edge values (N - 1 edges)"),
    )

    def forward(self) -> Scalar:
        q, x, e = (self.param(n) for n in ("cell_values", "cell_centers", "cell_edges"))
        n = n_cells(x)
        if n is None:
            ne = n_cells(e)
            n = ne - 1 if ne is not None else n_cells(q)
        if n is None or n < 2:
            raise self.error(
                "needs at least two cells on the last sub-batch axis of cell_centers, "
                "cell_edges or cell_values (give them as Scalar(..., sub_batch_ndim=1))",
                "cell_centers",
            )
        sizes = (("cell_values", q, n), ("cell_centers", x, n), ("cell_edges", e, n + 1))
        for name, v, size in sizes:
            got = n_cells(v)
            if got is not None and got not in (1, size):
                raise self.error(f"has {got} entries on its cell axis, expected {size}", name)
        q, x, e = on_cells(q, n), on_cells(x, n), on_cells(e, n + 1)
        xl, xr, xe = cells(x, None, -1), cells(x, 1, None), cells(e, 1, -1)
        ql, qr = cells(q, None, -1), cells(q, 1, None)
        h = xr - xl
        require(
            self,
            "the spacing x_{i+1} - x_i of parameter 'cell_centers'",
            h,
            "(0, inf)",
            "the cell centers must increase strictly (the interpolation divides by the spacing)",
        )
        return (xr - xe) / h * ql + (xe - xl) / h * qr
