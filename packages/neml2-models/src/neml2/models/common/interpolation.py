"""Piecewise-linear tables: linear interpolation in one argument, bilinear in two.

The table lives on the sub-batch (intermediate) axes of the parameters: an abscissa
``X`` of sub-batch ``(..., N)`` and an ordinate ``Y`` of sub-batch ``(..., N)`` (linear)
or ``(..., N1, N2)`` (bilinear) plus the base of its type. The argument is read
against the last abscissa axis (its own sub-batch axes, if any, broadcast with the
abscissa's leading ones). A point ``x`` falls in the cell ``X_i < x <= X_{i+1}``
(exclusive lower bound, as in the reference library); an argument outside
``(X_0, X_{N-1}]`` is an error in eager mode.
"""

from __future__ import annotations

from typing import ClassVar

from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._block_output import BlockNamedOutput
from neml2.models.common._fields import variable
from neml2.tensors import SR2, FatalError, Scalar, TensorWrapper, Vec, where
from neml2.tensors._tangents import _tracing


def _last(x: TensorWrapper, sl: slice) -> TensorWrapper:
    """``x`` sliced along its last sub-batch axis."""
    n = x.sub_batch_ndim
    return x.sub_batch[(slice(None),) * (n - 1) + (sl,)]


def _pair(x: TensorWrapper, n_lead: int, sl1: slice, sl2: slice) -> TensorWrapper:
    """``x`` sliced along its last two sub-batch axes."""
    return x.sub_batch[(slice(None),) * n_lead + (sl1, sl2)]


_LO, _HI = slice(None, -1), slice(1, None)


def cell_coordinate(X: Scalar, x: Scalar, label: str, what: str) -> tuple[Scalar, Scalar]:
    """Cell mask and parametric coordinate of ``x`` on the abscissa ``X``.

    Returns ``(inside, xi)`` over the ``N - 1`` cells (a new last sub-batch axis):
    ``inside`` is the bool ``X_i < x <= X_{i+1}`` and ``xi = (x - X_i) / (X_{i+1} - X_i)``.
    """
    if X.sub_batch_ndim == 0 or X.sub_batch_shape[-1] < 2:
        raise FatalError(
            f"{label}: {what} needs a sub-batch axis of at least two abscissa values "
            f"(got shape {tuple(X.shape)}, sub_batch_ndim {X.sub_batch_ndim}); retag it "
            "with .sub_batch.retag(1)"
        )
    lo, hi = _last(X, _LO), _last(X, _HI)
    xu = x.sub_batch.unsqueeze(-1)
    above, below = xu > lo, xu <= hi
    if not _tracing():
        hits = (above.data & below.data).sum(-1)
        if not bool((hits == 1).all()):
            n_out = int((hits != 1).sum())
            raise FatalError(
                f"{label}: {what} falls out of bounds at {n_out} of {hits.numel()} points; "
                "an argument must satisfy X[0] < x <= X[-1] (note the exclusive lower bound)"
            )
    inside = Scalar(above.data & below.data, above.sub_batch_ndim)
    return inside, (xu - lo) / (hi - lo)


class LinearInterpolation(BlockNamedOutput):
    """Piecewise-linear interpolation ``p(x) = Y_i + (x - X_i)/(X_{i+1} - X_i) (Y_{i+1} - Y_i)``.

    ``x`` (``argument``) a Scalar; ``X`` (``abscissa``) a Scalar with the table on its
    last sub-batch axis (size N, increasing); ``Y`` (``ordinate``) of the output type
    with the same last sub-batch axis; ``i`` is the cell with ``X_i < x <= X_{i+1}``.
    The output (named after the block unless ``output`` is given) has the batch shape of
    ``x`` broadcast with the remaining sub-batch axes of the table.
    """

    TYPE: ClassVar[type] = Scalar

    def forward(self, x: Scalar) -> TensorWrapper:
        X, Y = self.param("abscissa"), self.param("ordinate")
        inside, xi = cell_coordinate(X, x, self._label(), "the argument")
        if Y.sub_batch_ndim == 0 or Y.sub_batch_shape[-1] != X.sub_batch_shape[-1]:
            raise self.error(
                f"the ordinate's last sub-batch axis (sub-batch {tuple(Y.sub_batch_shape)}) "
                f"must match the abscissa's (sub-batch {tuple(X.sub_batch_shape)})",
                "ordinate",
            )
        y0, y1 = _last(Y, _LO), _last(Y, _HI)
        cell = y0 + xi * (y1 - y0)
        return where(inside, cell, 0.0).sub_batch.sum(-1)


class BilinearInterpolation(BlockNamedOutput):
    """Bilinear interpolation on a 2-D table.

    ``p = Y00 + (Y10 - Y00) ξ + (Y01 - Y00) η + (Y11 - Y10 - Y01 + Y00) ξ η`` in the
    cell ``X1_i < x1 <= X1_{i+1}``, ``X2_j < x2 <= X2_{j+1}``, with
    ``ξ = (x1 - X1_i)/(X1_{i+1} - X1_i)``, ``η = (x2 - X2_j)/(X2_{j+1} - X2_j)`` and
    ``Yab = Y[i+a, j+b]``. ``abscissa1`` (N1) and ``abscissa2`` (N2) are Scalars with
    the table on sub-batch axis ``dim``; ``ordinate`` has sub-batch axes ``dim`` and
    ``dim + 1`` of sizes (N1, N2) plus the base of the output type. ``argument1`` and
    ``argument2`` are Scalars. The output is named after the block unless ``output``
    is given.
    """

    TYPE: ClassVar[type] = Scalar

    def forward(self, x1: Scalar, x2: Scalar) -> TensorWrapper:
        d = self.opts["dim"]
        X1, X2, Y = self.param("abscissa1"), self.param("abscissa2"), self.param("ordinate")
        for name, v, need in (("abscissa1", X1, 1), ("abscissa2", X2, 1), ("ordinate", Y, 2)):
            if v.sub_batch_ndim < d + need:
                raise self.error(
                    f"{name} has {v.sub_batch_ndim} sub-batch axes; dim = {d} needs at least "
                    f"{d + need}",
                    name,
                )
        X1 = X1.sub_batch.movedim(d, -1)
        X2 = X2.sub_batch.movedim(d, -1)
        Y = Y.sub_batch.movedim(d, -1).sub_batch.movedim(d, -1)
        n1, n2 = X1.sub_batch_shape[-1], X2.sub_batch_shape[-1]
        if tuple(Y.sub_batch_shape[-2:]) != (n1, n2):
            raise self.error(
                f"the ordinate's table axes {tuple(Y.sub_batch_shape[-2:])} do not match the "
                f"abscissae sizes ({n1}, {n2})",
                "ordinate",
            )
        in1, xi = cell_coordinate(X1, x1, self._label(), "argument1")
        in2, eta = cell_coordinate(X2, x2, self._label(), "argument2")
        # cell axes (..., N1-1, 1) and (..., 1, N2-1)
        in1, xi = in1.sub_batch.unsqueeze(-1), xi.sub_batch.unsqueeze(-1)
        in2, eta = in2.sub_batch.unsqueeze(-2), eta.sub_batch.unsqueeze(-2)
        lead = Y.sub_batch_ndim - 2
        y00 = _pair(Y, lead, _LO, _LO)
        y01 = _pair(Y, lead, _LO, _HI)
        y10 = _pair(Y, lead, _HI, _LO)
        y11 = _pair(Y, lead, _HI, _HI)
        cell = y00 + (y10 - y00) * xi + (y01 - y00) * eta + (y11 - y10 - y01 + y00) * (xi * eta)
        picked = where(in1, where(in2, cell, 0.0), 0.0)
        return picked.sub_batch.sum((-2, -1))


def _linear_fields(typ: type) -> tuple:
    name = typ.__name__
    return (
        variable("argument", Scalar, doc="argument x used to query the table"),
        parameter("abscissa", Scalar, doc="abscissa values X on the last sub-batch axis"),
        parameter("ordinate", typ, doc=f"{name} ordinate values Y on the last sub-batch axis"),
        variable(
            "output",
            typ,
            output=True,
            default="output",
            doc=f"the interpolated {name} (default: the block name)",
        ),
    )


def _bilinear_fields(typ: type) -> tuple:
    name = typ.__name__
    return (
        variable("argument1", Scalar, doc="argument along the first table axis"),
        variable("argument2", Scalar, doc="argument along the second table axis"),
        parameter("abscissa1", Scalar, doc="abscissa values of the first table axis"),
        parameter("abscissa2", Scalar, doc="abscissa values of the second table axis"),
        parameter("ordinate", typ, doc=f"{name} ordinate values on the (N1, N2) table axes"),
        option(
            "dim",
            int,
            0,
            bounds="[0, inf)",
            doc="sub-batch axis of the table (the ordinate's first of two)",
        ),
        variable(
            "output",
            typ,
            output=True,
            default="output",
            doc=f"the interpolated {name} (default: the block name)",
        ),
    )


@register()
class ScalarLinearInterpolation(LinearInterpolation):
    __doc__ = LinearInterpolation.__doc__
    TYPE = Scalar
    fields = _linear_fields(Scalar)


@register()
class VecLinearInterpolation(LinearInterpolation):
    __doc__ = LinearInterpolation.__doc__
    TYPE = Vec
    fields = _linear_fields(Vec)


@register()
class SR2LinearInterpolation(LinearInterpolation):
    __doc__ = LinearInterpolation.__doc__
    TYPE = SR2
    fields = _linear_fields(SR2)


@register()
class ScalarBilinearInterpolation(BilinearInterpolation):
    __doc__ = BilinearInterpolation.__doc__
    TYPE = Scalar
    fields = _bilinear_fields(Scalar)


@register()
class VecBilinearInterpolation(BilinearInterpolation):
    __doc__ = BilinearInterpolation.__doc__
    TYPE = Vec
    fields = _bilinear_fields(Vec)


@register()
class SR2BilinearInterpolation(BilinearInterpolation):
    __doc__ = BilinearInterpolation.__doc__
    TYPE = SR2
    fields = _bilinear_fields(SR2)
