"""Mean over the last sub-batch (intermediate) axis, e.g. over the grains of an aggregate."""

from __future__ import annotations

from typing import ClassVar

from neml2.models._block_seeds import expand_block_mean, uses_block_seeds
from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option
from neml2.models.common._fields import variable
from neml2.tensors import R2, SR2, FatalError, Scalar, TensorWrapper, Vec


class IntermediateMean(Model):
    """``to = mean_k from_k`` over the last sub-batch axis of ``from``.

    The output has one sub-batch axis fewer than the input. ``reduces``
    names the reduced axis (e.g. ``grain``) for the reader; axes carry no
    labels here, so it is not checked.
    """

    TYPE: ClassVar[type] = Scalar

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        if x.sub_batch_ndim == 0:
            raise FatalError(
                f"{self._label()}: input '{self.var['from']}' has no sub-batch axis to "
                f"average (shape {tuple(x.shape)}, sub_batch_ndim 0)"
            )
        mean = x.sub_batch.mean(-1)
        if x.sub_batch_ndim == 1 and x.tangents2 is None and uses_block_seeds(x):
            # the tangents of a Jacobian's shared per-grain seeds: the columns per grain
            return expand_block_mean(x, mean)
        return mean


def _fields(typ: type) -> tuple:
    return (
        variable("from", typ, doc=f"the {typ.__name__} to average"),
        variable("to", typ, output=True, doc="the mean"),
        option("reduces", str, "", doc="label of the averaged sub-batch axis (informative)"),
    )


@register()
class ScalarIntermediateMean(IntermediateMean):
    __doc__ = IntermediateMean.__doc__
    TYPE = Scalar
    fields = _fields(Scalar)


@register()
class VecIntermediateMean(IntermediateMean):
    __doc__ = IntermediateMean.__doc__
    TYPE = Vec
    fields = _fields(Vec)


@register()
class SR2IntermediateMean(IntermediateMean):
    __doc__ = IntermediateMean.__doc__
    TYPE = SR2
    fields = _fields(SR2)


@register()
class R2IntermediateMean(IntermediateMean):
    __doc__ = IntermediateMean.__doc__
    TYPE = R2
    fields = _fields(R2)
