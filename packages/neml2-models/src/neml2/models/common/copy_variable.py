"""``Copy<T>``: ``to = from`` for a variable of any primitive tensor type."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models.common._fields import variable
from neml2.tensors import MRP, R2, SR2, SSR4, WR2, MillerIndex, Scalar, TensorWrapper, Vec


class CopyVariable(Model):
    """``to = from``: the value of one variable under another name (``d to/d from = I``).

    Both are of the same type ``T`` (Scalar, Vec, SR2, R2, WR2, SSR4, MRP or
    MillerIndex), shape ``(*B, *base_T)``.
    """

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        return x


def _fields(typ: type) -> tuple:
    return (
        variable("from", typ, doc=f"the {typ.__name__} variable to copy"),
        variable("to", typ, output=True, doc="the copy"),
    )


@register()
class CopyScalar(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(Scalar)


@register()
class CopyVec(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(Vec)


@register()
class CopySR2(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(SR2)


@register()
class CopyR2(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(R2)


@register()
class CopyWR2(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(WR2)


@register()
class CopySSR4(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(SSR4)


@register()
class CopyMRP(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(MRP)


@register()
class CopyMillerIndex(CopyVariable):
    __doc__ = CopyVariable.__doc__
    fields = _fields(MillerIndex)
