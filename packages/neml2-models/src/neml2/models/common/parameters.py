"""Parameters as variables and variables as parameters, for every primitive tensor type.

* ``<T>ConstantParameter``: ``p = value``; one value shared by several downstream models.
* ``<T>InputParameter``: ``p = v``; an input variable feeding a parameter slot.
* ``<T>ParameterToVariable``: ``v = p``; a parameter exposed as a variable.

``T`` is one of Scalar, Vec, SR2, R2, WR2, SSR4, MRP, MillerIndex. The output of a
``ConstantParameter`` / ``ParameterToVariable`` is named after its ``[Models]`` block
unless ``parameter`` / ``to`` says otherwise.
"""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import parameter
from neml2.models.common._block_output import BlockNamedOutput
from neml2.models.common._fields import variable
from neml2.tensors import MRP, R2, SR2, SSR4, WR2, MillerIndex, Scalar, TensorWrapper, Vec


class _OutputNamedAfterBlock(BlockNamedOutput):
    """A block-named output (option ``OUTPUT_OPTION``) that must not be empty."""

    def setup(self) -> None:
        if not self.var[self.OUTPUT_OPTION]:
            raise self.error("the output variable needs a name", self.OUTPUT_OPTION)


class ConstantParameter(_OutputNamedAfterBlock):
    """``p = value``: a parameter of type ``T`` (shape ``(*B, *base_T)``) as an output.

    ``value`` is a literal, a ``[Tensors]`` name, another model's output or a
    variable name (then an input of this model, and ``dp/dvalue = I``). The
    output is named by ``parameter`` (default: the block name).
    """

    OUTPUT_OPTION = "parameter"

    def forward(self) -> TensorWrapper:
        return self.param("value")


class ParameterToVariable(_OutputNamedAfterBlock):
    """``to = from``: the parameter ``from`` of type ``T`` as the variable ``to``.

    ``from`` is a literal, a ``[Tensors]`` name, another model's output or a
    variable name (then an input of this model). ``to`` defaults to the block name.
    """

    OUTPUT_OPTION = "to"

    def forward(self) -> TensorWrapper:
        return self.param("from")


class InputParameter(Model):
    """``parameter = variable``: an input variable of type ``T`` passed on as a parameter.

    Input ``from`` (default ``variable``), output ``to`` (default ``parameter``);
    ``d to / d from = I``.
    """

    def forward(self, x: TensorWrapper) -> TensorWrapper:
        return x


def _constant(typ: type) -> tuple:
    name = typ.__name__
    return (
        parameter("value", typ, doc=f"the {name} value (literal, tensor, model or variable)"),
        variable("parameter", typ, output=True, default="", doc="output name (default: block)"),
    )


def _to_variable(typ: type) -> tuple:
    name = typ.__name__
    return (
        parameter("from", typ, doc=f"the {name} parameter (literal, tensor, model or variable)"),
        variable("to", typ, output=True, default="", doc="output name (default: block)"),
    )


def _input(typ: type) -> tuple:
    name = typ.__name__
    return (
        variable("from", typ, default="variable", doc=f"the input {name} variable"),
        variable("to", typ, output=True, default="parameter", doc="the parameter it defines"),
    )


# ---------------------------------------------------------------- ConstantParameter
@register()
class ScalarConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(Scalar)


@register()
class VecConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(Vec)


@register()
class SR2ConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(SR2)


@register()
class R2ConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(R2)


@register()
class WR2ConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(WR2)


@register()
class SSR4ConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(SSR4)


@register()
class MRPConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(MRP)


@register()
class MillerIndexConstantParameter(ConstantParameter):
    __doc__ = ConstantParameter.__doc__
    fields = _constant(MillerIndex)


# ---------------------------------------------------------------- InputParameter
@register()
class ScalarInputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(Scalar)


@register()
class VecInputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(Vec)


@register()
class SR2InputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(SR2)


@register()
class R2InputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(R2)


@register()
class WR2InputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(WR2)


@register()
class SSR4InputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(SSR4)


@register()
class MRPInputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(MRP)


@register()
class MillerIndexInputParameter(InputParameter):
    __doc__ = InputParameter.__doc__
    fields = _input(MillerIndex)


# ---------------------------------------------------------------- ParameterToVariable
@register()
class ScalarParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(Scalar)


@register()
class VecParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(Vec)


@register()
class SR2ParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(SR2)


@register()
class R2ParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(R2)


@register()
class WR2ParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(WR2)


@register()
class SSR4ParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(SSR4)


@register()
class MRPParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(MRP)


@register()
class MillerIndexParameterToVariable(ParameterToVariable):
    __doc__ = ParameterToVariable.__doc__
    fields = _to_variable(MillerIndex)
