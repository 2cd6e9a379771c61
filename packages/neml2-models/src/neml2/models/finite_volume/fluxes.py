"""Edge fluxes from cell-averaged values: gradient (diffusive) and upwinded advective."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output, parameter
from neml2.models.finite_volume._cells import cells, require_cells
from neml2.tensors import Scalar, abs


@register()
class FiniteVolumeGradient(Model):
    """Prefactor-weighted gradient at the interior cell edges (first order).

    ``g_i = -p_i (u_{i+1} - u_i) / Δx_i``, ``i = 0 .. N-2``: ``u`` a Scalar with the cell
    axis (size N) as its last sub-batch axis; ``p`` (``prefactor``, default 1) and
    ``Δx`` (``dx``, the distance between the centers of cells i and i+1) Scalars
    with an edge axis of size N - 1 or without one (the same on every edge); the
    output ``g`` (``grad_u``) has N - 1 entries. With ``p = D`` it is Fick's
    diffusive flux; applied to edge fluxes with ``Δx`` the cell widths it is the
    negative flux divergence ``-(J_{i+1} - J_i)/Δx_i``.
    """

    fields = (
        input("u", Scalar, doc="the cell-averaged field u (N cells)"),
        output("grad_u", Scalar, doc="the edge values g = -p du/dx (N - 1 edges)"),
        parameter("prefactor", Scalar, 1.0, doc="the edge prefactor p (default 1)"),
        parameter(
            "dx", Scalar, bounds="(0, inf)", doc="the spacing Δx between adjacent cell centers"
        ),
    )

    def forward(self, u: Scalar) -> Scalar:
        require_cells(u, self._label(), f"u '{self.var['u']}'", at_least=2)
        du = cells(u, 1, None) - cells(u, None, -1)
        return -self.param("prefactor") * du / self.param("dx")


@register()
class FiniteVolumeUpwindedAdvectiveFlux(Model):
    """First-order upwinded advective flux at the interior cell edges.

    ``J_i = v_i⁺ u_i + v_i⁻ u_{i+1}``, ``v⁺ = (v + |v|)/2``, ``v⁻ = (v - |v|)/2``,
    ``i = 0 .. N-2``: the value is taken from the cell the velocity comes from.
    ``u`` a Scalar with the cell axis (size N) as its last sub-batch axis; ``v``
    (``v_edge``) a Scalar with an edge axis of size N - 1 (or without one: the same
    velocity on every edge); the output ``J`` (``flux``) has N - 1 entries.
    """

    fields = (
        input("u", Scalar, doc="the cell-averaged field u (N cells)"),
        input("v_edge", Scalar, doc="the edge velocity v (N - 1 edges)"),
        output("flux", Scalar, doc="the edge flux J (N - 1 edges)"),
    )

    def forward(self, u: Scalar, v: Scalar) -> Scalar:
        require_cells(u, self._label(), f"u '{self.var['u']}'", at_least=2)
        va = abs(v)
        return 0.5 * (v + va) * cells(u, None, -1) + 0.5 * (v - va) * cells(u, 1, None)
