"""Sums, means and differences along a batch axis: dynamic (``*Dynamic*``) or sub-batch
(``*Intermediate*``, e.g. the grains of an aggregate or the slip systems of a crystal)."""

from __future__ import annotations

from neml2.models._block_seeds import expand_block_mean, uses_block_seeds
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option
from neml2.models.common._fields import variable
from neml2.tensors import SR2, FatalError, TensorWrapper


def _check_dim(model: Model, x: TensorWrapper, dim: int, ndim: int, region: str) -> None:
    if not -ndim <= dim < ndim:
        raise FatalError(
            f"{model._label()}: dim {dim} is out of range for the {ndim} {region} axes of "
            f"input '{model.var['from']}' (shape {tuple(x.shape)}, sub_batch_ndim "
            f"{x.sub_batch_ndim})"
        )


class DynamicReduction(Model):
    """Reduce the dynamic batch axis ``dim`` of ``from`` (``(*B, *S, *base)``).

    ``dim`` counts within the dynamic batch axes ``B`` only (negative from the
    last); the output has one dynamic axis fewer.
    """

    fields = (option("dim", int, doc="the dynamic batch axis to reduce"),)

    def _reduce(self, x: TensorWrapper, dim: int) -> TensorWrapper:  # pragma: no cover
        raise NotImplementedError

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        dim = self.opts["dim"]
        _check_dim(self, x, dim, x.dynamic_ndim, "dynamic batch")
        return self._reduce(x, dim)


class DynamicSum(DynamicReduction):
    """``to = Σ_k from_k`` over the dynamic batch axis ``dim``.

    ``dim`` counts within the dynamic batch axes only (negative from the last);
    the output has one dynamic axis fewer.
    """

    def _reduce(self, x: TensorWrapper, dim: int) -> TensorWrapper:
        return x.dynamic_batch.sum(dim)


class DynamicMean(DynamicReduction):
    """``to = (1/n) Σ_k from_k`` over the dynamic batch axis ``dim`` (of size ``n``).

    ``dim`` counts within the dynamic batch axes only (negative from the last);
    the output has one dynamic axis fewer.
    """

    def _reduce(self, x: TensorWrapper, dim: int) -> TensorWrapper:
        return x.dynamic_batch.mean(dim)


def _need_sub_batch(model: Model, x: TensorWrapper, what: str) -> None:
    if x.sub_batch_ndim == 0:
        raise FatalError(
            f"{model._label()}: input '{model.var['from']}' has no sub-batch axis to {what} "
            f"(shape {tuple(x.shape)}, sub_batch_ndim 0)"
        )


class IntermediateSum(Model):
    """``to = Σ_k from_k`` over the last sub-batch axis of ``from``.

    The output has one sub-batch axis fewer than the input. ``reduces`` names
    the summed axis (e.g. ``grain``) for the reader; axes carry no labels here,
    so it is not checked.
    """

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        _need_sub_batch(self, x, "sum")
        if x.sub_batch_ndim == 1 and x.tangents2 is None and uses_block_seeds(x):
            # the shared per-entry seeds of a block-structured Jacobian: the sum is n
            # times the mean, whose tangents expand into one column per entry
            n = x.sub_batch_shape[-1]
            return expand_block_mean(x, x.sub_batch.mean(-1)) * float(n)
        return x.sub_batch.sum(-1)


class IntermediateDiff(Model):
    """``n``-th forward difference along the sub-batch axis ``dim`` of ``from``.

    ``Δx_k = x_{k+1} - x_k`` applied ``n`` times (like ``numpy.diff``): the axis
    shrinks from ``m`` to ``m - n`` entries, the other axes are kept. ``dim``
    counts within the sub-batch axes (default ``-1``, the last). ``reduces``
    names the axis for the reader (not checked).
    """

    fields = (
        option("dim", int, -1, doc="the sub-batch axis to difference"),
        option("n", int, 1, bounds="[1, inf)", doc="the order of the difference"),
    )

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        _need_sub_batch(self, x, "difference")
        s = x.sub_batch_ndim
        dim = self.opts["dim"]
        _check_dim(self, x, dim, s, "sub-batch")
        dim %= s
        n = self.opts["n"]
        m = x.sub_batch_shape[dim]
        if m <= n:
            raise FatalError(
                f"{self._label()}: sub-batch axis {dim} of input '{self.var['from']}' has "
                f"{m} entries, too few for a difference of order {n}"
            )
        head = (slice(None),) * dim
        for _ in range(n):
            x = x.sub_batch[(*head, slice(1, None))] - x.sub_batch[(*head, slice(None, -1))]
        return x


def _fields(typ: type, what: str) -> tuple:
    return (
        variable("from", typ, doc=f"the {typ.__name__} to {what}"),
        variable("to", typ, output=True, doc="the result"),
    )


_REDUCES = option("reduces", str, "", doc="label of the reduced sub-batch axis (informative)")


@register()
class SR2DynamicSum(DynamicSum):
    __doc__ = DynamicSum.__doc__
    fields = _fields(SR2, "sum")


@register()
class SR2DynamicMean(DynamicMean):
    __doc__ = DynamicMean.__doc__
    fields = _fields(SR2, "average")


@register()
class SR2IntermediateSum(IntermediateSum):
    __doc__ = IntermediateSum.__doc__
    fields = (*_fields(SR2, "sum"), _REDUCES)


@register()
class SR2IntermediateDiff(IntermediateDiff):
    __doc__ = IntermediateDiff.__doc__
    fields = (*_fields(SR2, "difference"), _REDUCES)
