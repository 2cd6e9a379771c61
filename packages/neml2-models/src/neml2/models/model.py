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
from neml2.models._model import Model
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
    """The ordered HIT surface of a model: its :func:`input`, :func:`output`,
    :func:`parameter` and :func:`option` fields (any of ``neml2.models``' field kinds
    may be listed too)."""

    def __init__(self, *fields: Field) -> None:
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
        """Option name -> type of the input variables (before HIT renames them)."""
        return {f.name: f.type for f in self.fields if _is_var(f, output=False)}

    @property
    def output_spec(self) -> dict[str, type]:
        """Option name -> type of the output variables (before HIT renames them)."""
        return {f.name: f.type for f in self.fields if _is_var(f, output=True)}


def _is_var(f: Field, *, output: bool) -> bool:
    return isinstance(f, VariableField) and f.is_output == output


def _variable_default(name: str, default: Any) -> Any:
    # the variable's name defaults to the option's; None keeps it optional
    return name if default is REQUIRED else default


def input(
    name: str, type_cls: type, doc: str, *, default: Any = REQUIRED, attr: str | None = None
) -> VariableField:
    """An input variable; HIT option *name* renames it (default: *name*). ``default=None``
    makes it optional (the model derives a name itself). *attr*: the instance attribute
    that holds the resolved variable name."""
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
    """An output variable (see :func:`input`). *priority* (``"high"`` / ``"low"``): the
    claim when sibling models of a ComposedModel provide the same variable; the
    highest runs last and wins (collected in ``Model.output_priorities``)."""
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
    """A tensor-valued parameter: a literal, a ``[Tensors]`` name, or with
    *allow_nonlinear* a model output or a variable (then an input of the model, read in
    ``forward`` with ``self._get_param(name, nl_params)``). *attr*: the name it is
    registered under (default *name*)."""
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
    """A plain setting (str, int, float or bool; a list of one of them as ``list[T]``).
    *attr*: the instance attribute that holds the parsed value (``self.opts[name]``
    always does)."""
    many = getattr(value_type, "__origin__", None) is list
    inner = value_type.__args__[0] if many else value_type
    return OptionField(name, doc, default, attr=attr, type=inner, many=many)


@dataclass(frozen=True)
class NLParam:
    """A parameter resolved to an input: *input_name* (appended to ``input_spec``),
    *tail_index* (its slot in ``forward``'s ``*nl_params``), and the [Models] block
    providing it (``None`` for a free input)."""

    input_name: str
    tail_index: int
    provider: str | None = None
    provider_output: str | None = None

    @classmethod
    def of(cls, model: Model) -> dict[str, NLParam]:
        """Parameter name -> NLParam for every promoted parameter of *model*."""
        order = list(model._promoted)
        return {
            name: cls(var, order.index(var), model.nl_providers.get(var), var)
            for name, var in model._promoted_of.items()
        }


def register_submodule(parent, child, fallback: str, *, used: set[str] | None = None) -> str:
    """Add *child* to *parent* under its HIT block name when that is a free Python
    identifier (readable ``named_parameters()``: ``elasticity.E``), else under
    *fallback*; *used*: names already taken by siblings. Returns the name used."""
    taken = used if used is not None else set()
    name = getattr(child, "hit_name", None)
    if (
        not isinstance(name, str)
        or not name.isidentifier()
        or name in taken
        or hasattr(parent, name)
    ):
        name = fallback
    parent.add_module(name, child)
    taken.add(name)
    return name
