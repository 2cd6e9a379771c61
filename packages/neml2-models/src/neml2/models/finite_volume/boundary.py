"""Boundary values appended to a cell-edge field."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._fields import variable
from neml2.models.finite_volume._cells import cat_cells, require_cells
from neml2.tensors import Scalar


@register()
class FiniteVolumeAppendBoundaryCondition(Model):
    """Append a boundary value to one end of the cell axis.

    ``side = left``: ``y = [b, u_0, ..., u_{N-1}]``; ``side = right``:
    ``y = [u_0, ..., u_{N-1}, b]``. ``u`` (``input``) is a Scalar with the cell axis as
    its last sub-batch axis (size N), ``b`` (``bc_value``) a Scalar without a cell axis
    (one value) or with one (its entries are appended in order); the output ``y`` has
    N + 1 (or N + size of ``b``) entries on the cell axis, the other batch axes
    broadcast. Typically closes the N - 1 interior edge fluxes with the two boundary
    fluxes. The output is named ``output``, by default ``<input>_with_bc_left`` or
    ``<input>_with_bc_right``.
    """

    fields = (
        variable("input", Scalar, doc="the cell-axis field u to extend"),
        parameter("bc_value", Scalar, doc="the boundary value b"),
        option("side", str, "left", choices=("left", "right"), doc="where b goes: left or right"),
        option("output", str, "", doc="output name (default: <input>_with_bc_<side>)"),
    )

    def setup(self) -> None:
        side = self.opts["side"]
        if side not in ("left", "right"):
            raise self.error(f"side = '{side}': expected left or right", "side")
        name = self.opts["output"] or f"{self.var['input']}_with_bc_{side}"
        self.declare_output(name, Scalar)

    def forward(self, u: Scalar) -> Scalar:
        require_cells(u, self._label(), f"input '{self.var['input']}'")
        b = self.param("bc_value")
        if b.sub_batch_ndim == 0:
            b = b.sub_batch.unsqueeze(-1)
        return cat_cells(b, u) if self.opts["side"] == "left" else cat_cells(u, b)
