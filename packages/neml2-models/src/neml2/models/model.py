"""``neml2.models.model``: the seed's authoring contract for Python-native models.

A model is a :class:`Model` subclass that declares its HIT surface in a class-level
``hit = HitSchema(...)`` and implements ``forward``::

    from neml2.models.model import HitSchema, Model, input, output, parameter
    from neml2.tensors import SR2, Scalar
    from neml2.models import register_neml2_object

    @register_neml2_object
    class ScaledStrain(Model):
        \"\"\"stress = c * strain\"\"\"

        hit = HitSchema(
            input("strain", SR2, "the strain"),
            output("stress", SR2, "the stress"),
            parameter("c", Scalar, "the scale", allow_nonlinear=True),
        )

        def forward(self, strain, *nl_params, v=None, v2=None, vh=None):
            c = self._get_param("c", nl_params)
            out = c * strain
            if v is None:
                return out
            return out, *self.propagate_tangents(
                v, "stress", {"strain": lambda d: c * d}, output=out, v2=v2, vh=vh
            )

``input_spec`` / ``output_spec`` key order is ``forward``'s positional order and the
order of its returned outputs; a parameter promoted to an input (a HIT value naming a
variable or a model) is appended to the inputs and reaches ``forward`` in ``*nl_params``.
A ``forward`` without a ``v`` keyword is the other accepted form: it computes on typed
values that carry their tangents, so it writes no chain rule (every built-in model is
written so). The two forms are one class and compose freely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neml2.models._chain_rule import (
    ChainRuleAction,
    ChainRuleDict,
    SecondOrderChainRuleAction,
    SecondOrderChainRuleDict,
    TangentAction,
)
from neml2.models._model import Model, attribute_name
from neml2.models._registry import register_neml2_object
from neml2.models._schema import (
    REQUIRED,
    Field,
    OptionField,
    ParameterField,
    VariableField,
)

__all__ = [
    "ChainRuleAction",
    "ChainRuleDict",
    "HitSchema",
    "Model",
    "NLParam",
    "SecondOrderChainRuleAction",
    "SecondOrderChainRuleDict",
    "TangentAction",
    "input",
    "option",
    "output",
    "parameter",
    "register_neml2_object",
    "register_submodule",
]


class HitSchema:
    """The ordered HIT surface of a model.

    It lists the model's :func:`input`, :func:`output`, :func:`parameter` and
    :func:`option` fields; any of ``neml2.models``' field kinds may be listed too.

    Attributes:
        fields (tuple[Field, ...]): The fields, in declaration order.
    """

    def __init__(self, *fields: Field) -> None:
        """Collect the fields of a model's HIT surface.

        Args:
            *fields: The fields, in the order of the model's inputs, outputs and options.

        Raises:
            TypeError: If an argument is not a field, or two fields share a name.
        """
        for f in fields:
            if not isinstance(f, Field):
                raise TypeError(f"HitSchema takes fields (input(), output(), ...), got {f!r}")
        names = [f.name for f in fields]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise TypeError(f"HitSchema: option(s) {', '.join(twice)} declared twice")
        self.fields = tuple(fields)

    @property
    def input_spec(self) -> dict[str, type]:
        """Option name -> tensor type of each input variable (before HIT renames them)."""
        return {f.name: f.type for f in self.fields if _is_var(f, output=False)}

    @property
    def output_spec(self) -> dict[str, type]:
        """Option name -> tensor type of each output variable (before HIT renames them)."""
        return {f.name: f.type for f in self.fields if _is_var(f, output=True)}


def _is_var(f: Field, *, output: bool) -> bool:
    return isinstance(f, VariableField) and f.is_output == output


def _variable_default(name: str, default: Any) -> Any:
    # the variable's name defaults to the option's; None keeps it optional
    return name if default is REQUIRED else default


def input(
    name: str, type_cls: type, doc: str, *, default: Any = REQUIRED, attr: str | None = None
) -> VariableField:
    """Declare an input variable of a model.

    The HIT option *name* renames the variable; by default the variable is called *name*.

    Args:
        name: The HIT option name, also the variable's default name.
        type_cls: The variable's tensor type (``Scalar``, ``SR2``, ...).
        doc: A one-line description, shown in the syntax catalogue.
        default: The default variable name. The default, ``REQUIRED``, means *name*;
            ``None`` makes the variable optional (the model derives a name itself).
        attr: The instance attribute that holds the resolved variable name.

    Returns:
        The field, to be listed in a :class:`HitSchema`.
    """
    return VariableField(name, doc, _variable_default(name, default), attr=attr, type=type_cls)


def output(
    name: str,
    type_cls: type,
    doc: str,
    *,
    default: Any = REQUIRED,
    attr: str | None = None,
    priority: str | None = None,
) -> VariableField:
    """Declare an output variable of a model (see :func:`input`).

    Args:
        name: The HIT option name, also the variable's default name.
        type_cls: The variable's tensor type.
        doc: A one-line description, shown in the syntax catalogue.
        default: The default variable name. The default, ``REQUIRED``, means *name*;
            ``None`` makes the variable optional.
        attr: The instance attribute that holds the resolved variable name.
        priority: ``"high"``, ``"low"`` or ``None``: the claim when sibling models of a
            ComposedModel provide the same variable. The highest runs last and wins
            (collected in ``Model.output_priorities``).

    Returns:
        The field, to be listed in a :class:`HitSchema`.

    Raises:
        TypeError: If *priority* is not ``"high"``, ``"low"`` or ``None``.
    """
    if priority not in (None, "high", "low"):
        raise TypeError(
            f"output '{name}': priority must be 'high', 'low' or None, not {priority!r}"
        )
    return VariableField(
        name,
        doc,
        _variable_default(name, default),
        attr=attr,
        type=type_cls,
        is_output=True,
        priority=priority,
    )


def parameter(
    name: str,
    type_cls: type,
    doc: str,
    *,
    attr: str | None = None,
    default: Any = REQUIRED,
    allow_nonlinear: bool = False,
) -> ParameterField:
    """Declare a tensor-valued parameter of a model.

    In HIT its value is a literal or a ``[Tensors]`` name; with *allow_nonlinear* it may
    also name a model output or a variable, and then becomes an input of the model, read
    in ``forward`` with ``self._get_param(name, nl_params)``.

    Args:
        name: The HIT option name.
        type_cls: The parameter's tensor type.
        doc: A one-line description, shown in the syntax catalogue.
        attr: The name the parameter is registered under (default *name*).
        default: The value used when the option is absent; ``REQUIRED`` (the default)
            makes the option mandatory.
        allow_nonlinear: Whether the value may name a model output or a variable.

    Returns:
        The field, to be listed in a :class:`HitSchema`.
    """
    return ParameterField(
        name, doc, default, attr=attr, type=type_cls, allow_nonlinear=allow_nonlinear
    )


def option(
    name: str,
    value_type: type,
    doc: str,
    *,
    attr: str | None = None,
    default: Any = REQUIRED,
) -> OptionField:
    """Declare a plain (non-tensor) setting of a model.

    Args:
        name: The HIT option name.
        value_type: ``str``, ``int``, ``float`` or ``bool``, or a list of one of them
            written ``list[T]``.
        doc: A one-line description, shown in the syntax catalogue.
        attr: The instance attribute that holds the parsed value (``self.opts[name]``
            always does).
        default: The value used when the option is absent; ``REQUIRED`` (the default)
            makes the option mandatory.

    Returns:
        The field, to be listed in a :class:`HitSchema`.
    """
    many = getattr(value_type, "__origin__", None) is list
    inner = value_type.__args__[0] if many else value_type
    return OptionField(name, doc, default, attr=attr, type=inner, many=many)


@dataclass(frozen=True)
class NLParam:
    """A parameter resolved to an input of its model.

    Attributes:
        input_name (str): The input variable the parameter became (appended to
            ``input_spec``).
        tail_index (int): Its slot in ``forward``'s ``*nl_params``.
        provider (str | None): The [Models] block providing it; ``None`` for a free input.
        provider_output (str | None): The provider's output variable that feeds it.
    """

    input_name: str
    tail_index: int
    provider: str | None = None
    provider_output: str | None = None

    @classmethod
    def of(cls, model: Model) -> dict[str, NLParam]:
        """Describe every promoted parameter of a model.

        Args:
            model: The model.

        Returns:
            Parameter name -> :class:`NLParam`, for every parameter of *model* that was
                promoted to an input.
        """
        order = list(model._promoted)
        return {
            name: cls(var, order.index(var), model.nl_providers.get(var), var)
            for name, var in model._promoted_of.items()
        }


def register_submodule(parent, child, fallback: str, *, used: set[str] | None = None) -> str:
    """Add a sub-model to its parent under a readable name.

    The name is the child's HIT block name made a Python identifier (so
    ``named_parameters()`` reads ``elasticity.E``; ``[my-model]`` and ``[yield]`` are
    registered as ``my_model`` and ``yield_``, see
    :func:`neml2.models._model.attribute_name`) when no sibling or attribute of
    *parent* has that name, else *fallback*.

    Args:
        parent (torch.nn.Module): The model that owns *child*.
        child (torch.nn.Module): The sub-model to add.
        fallback: The name used when the HIT block name is not usable.
        used: Names already taken by siblings; the chosen name is added to it.

    Returns:
        The name *child* was registered under.
    """
    taken = used if used is not None else set()
    name = attribute_name(getattr(child, "hit_name", None))
    if name is None or name in taken or hasattr(parent, name):
        name = fallback
    parent.add_module(name, child)
    taken.add(name)
    return name
