"""``Model``: the base class every material model derives from.

A leaf declares its fields (see :mod:`neml2.models._schema`) and writes one
method, ``forward(self, *inputs)``, on typed tensors. Everything else comes
from this class:

* the seeds' call contract: ``model(*inputs)`` returns the outputs;
  ``model(*inputs, v=v)`` returns ``(*outputs, v_out)`` and
  ``model(*inputs, v=v, v2=v2)`` returns ``(*outputs, v_out, v2_out)``, where
  ``v[in_name][leaf]`` is a typed value with a leading seed axis ``K``
  (``(K, *B, *sub, *base_in)``) and ``v2[in_name][a][b]`` has two. The
  tangents are propagated by the typed algebra itself (forward mode), so a
  leaf writes no derivative code; structural zeros stay absent;
* the name-keyed surface shared by every route: ``forward(dict)``,
  ``jvp(inputs, tangents)``, ``jacobian(inputs)`` (blocks ``J[out][in]`` at
  ``(*B, *out_base, *in_base)``), ``input_names`` / ``output_names`` /
  ``input_base_shapes`` / ``output_base_shapes``, ``device``, ``dtype``,
  ``named_parameters()``, ``set_parameter(name, value)``;
* parameters as ``nn.Parameter`` (autograd gives parameter derivatives for
  calibration), or promoted to inputs when HIT names a variable or a model.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import re
import types
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

from neml2.models import _chain_rule
from neml2.models._history import missing_inputs_message
from neml2.models._inputs import (
    as_tensor,
    check_names,
    check_placement,
    check_seeds,
    input_desc,
    input_dtype,
    wrt_inputs,
)
from neml2.models._naming import NamingRule
from neml2.models._schema import (
    Derived,
    Field,
    NonlinearParameter,
    ObjectRefField,
    OptionField,
    ParameterField,
    Schema,
    VariableField,
    derived_name,
)
from neml2.tensors import (
    FatalError,
    ShapeError,
    Tensor,
    TensorWrapper,
    attach,
    broadcast_batch_shapes,
    checked_parameter,
    tangents2_of,
    tangents_of,
)
from neml2.tensors._broadcast import _tracing
from neml2.tensors._seed import _direction, identity_seed

Outputs = TensorWrapper | tuple[TensorWrapper, ...]


def _is_explicit(f) -> bool:
    """Does a leaf's ``forward`` propagate tangents itself (the seed's form,
    ``forward(self, *inputs, *nl_params, v=None, v2=None, vh=None)``: a keyword-only
    ``v``) rather than leave them to the typed algebra? A positional parameter named
    ``v`` is an input (a velocity), not the tangents."""
    try:
        p = inspect.signature(f).parameters.get("v")
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return p is not None and p.kind is inspect.Parameter.KEYWORD_ONLY


def _wrap_forward(f):
    """Give a leaf's ``forward(*typed)`` the dict, ``v=``, ``v2=`` and ``vh=`` entry points."""
    explicit = _is_explicit(f)

    @functools.wraps(f)
    def forward(self, *args, v=None, v2=None, vh=None):
        one_dict = len(args) == 1 and isinstance(args[0], Mapping)
        if one_dict and v is None and v2 is None and vh is None:
            return self._forward_named(args[0])
        if len(args) != len(self.input_spec):
            raise FatalError(
                f"{self._label()}: forward takes {len(self.input_spec)} inputs "
                f"({', '.join(self.input_spec)}), got {len(args)}"
            )
        if v is None and (v2 is not None or vh is not None):
            raise FatalError(
                f"{self._label()}: {'v2=' if v2 is not None else 'vh='} needs v= (the "
                "first-order tangents it builds on); pass v={} for none"
            )
        if not torch.compiler.is_compiling():  # traced calls: checked by their entry point
            args = self._check_typed_call(args, v, v2)
            if vh is not None:
                check_seeds(self._label(), "vh=", vh, self.input_spec, *self._placement(), 1)
        if v is None:
            return self._call_leaf(f, args)
        if explicit:
            return self._call_explicit(f, args, v, v2, vh)
        return self._forward_tangents(f, args, v, v2, vh)

    forward._neml2_leaf = f  # type: ignore[attr-defined]
    forward._neml2_explicit = explicit  # type: ignore[attr-defined]
    return forward


class Model(torch.nn.Module):
    """Base class of neml2 material models.

    Subclasses set ``fields`` (or a ``hit = HitSchema(...)``) and implement ``forward``;
    ``setup()`` may declare further variables and parameters from the options
    (``self.opts``).

    The call contract: ``model(*inputs)`` returns the outputs; ``model(*inputs, v=v)``
    returns ``(*outputs, v_out)`` and ``model(*inputs, v=v, v2=v2)`` returns
    ``(*outputs, v_out, v2_out)``, where ``v[in_name][leaf]`` is a typed value with a
    leading seed axis ``K`` (``(K, *B, *sub, *base_in)``) and ``v2[in_name][a][b]`` has
    two. Tangents are propagated by the typed algebra (forward mode), so a leaf writes no
    derivative code; structural zeros stay absent. ``model(inputs_dict)`` returns the
    outputs as a dict of raw tensors keyed by name.

    Parameters are ``nn.Parameter`` (autograd gives parameter derivatives for
    calibration), or are promoted to inputs when HIT names a variable or a model.
    """

    SECTION: ClassVar[str] = "Models"
    fields: ClassVar[tuple[Field, ...]] = ()
    #: the variable names the model derives from its options' variables (``x~1``,
    #: ``x_rate``, ...): :func:`neml2.models._schema.derived` declarations, read by
    #: :meth:`derived_name` and listed by ``neml2-syntax``
    derives: ClassVar[tuple[Derived, ...]] = ()

    #: Set by the factory to the HIT block name.
    hit_name: str | None = None

    #: Does ``forward`` take ``v2`` / ``vh`` (may it sit inside a ``Normality``)? A leaf
    #: written on the typed algebra gets second-order tangents for free (True); one that
    #: propagates tangents itself (``forward(..., v=None, v2=None, vh=None)``) says so
    #: (default False). A ComposedModel sets it per instance from its children.
    SUPPORTS_SECOND_ORDER: bool = True

    #: output variable -> priority claim (``"high"`` / ``"low"`` / None) when sibling
    #: models of a ComposedModel provide the same variable (from ``output(priority=)``)
    output_priorities: ClassVar[dict[str, str | None]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        f = cls.__dict__.get("forward")
        if f is not None and not hasattr(f, "_neml2_leaf"):
            cls.forward = _wrap_forward(f)
        if f is not None and "SUPPORTS_SECOND_ORDER" not in cls.__dict__:
            cls.SUPPORTS_SECOND_ORDER = not getattr(cls.forward, "_neml2_explicit", False)
        # the seed's static I/O form: class-level ``input_spec`` / ``output_spec`` dicts
        for kind in ("input_spec", "output_spec"):
            spec = cls.__dict__.get(kind)
            if isinstance(spec, Mapping):
                setattr(cls, f"_class_{kind}", dict(spec))
                delattr(cls, kind)
        if "output_priorities" not in cls.__dict__:
            claims = {
                f.name: f.priority
                for f in Schema.of(cls).fields
                if isinstance(f, VariableField) and f.is_output and f.priority is not None
            }
            if claims:
                cls.output_priorities = {**cls.output_priorities, **claims}

    def __init__(self, *, _where: str | None = None, _locations=None, **values: Any):
        """Build the model from its option values.

        The factory calls this through :meth:`from_hit`; Python code may call it
        directly with keyword options.

        Args:
            _where: The location used in error messages (default: the class name);
                set by the factory to ``file:line: [block]``.
            _locations (Mapping[str, str] | None): Option name -> ``file:line`` of that
                option, for error messages.
            **values: The option values by HIT option name (variable names, parameter
                values, plain settings); missing options take their declared default.

        Raises:
            FatalError: If an option is unknown or a required option is missing, a
                variable name template is malformed, or a variable or parameter is
                declared twice or has an invalid value.
        """
        super().__init__()
        self._where = _where or type(self).__name__
        self._locations: dict[str, str] = dict(_locations or {})
        self._structural: dict[str, type] = {}
        self._promoted: dict[str, type] = {}
        self.output_spec: dict[str, type] = {}
        #: parameter name -> promoted input variable name
        self._promoted_of: dict[str, str] = {}
        #: promoted input variable -> [Models] block providing it (None: a free input)
        self.nl_providers: dict[str, str | None] = {}
        self._param_meta: dict[str, tuple[type, int]] = {}
        schema = Schema.of(type(self))
        self.opts: dict[str, Any] = schema.fill_defaults(values, self._where)
        #: option name -> variable name, for every variable field
        self.var: dict[str, str] = {}
        variables = [f for f in schema.fields if isinstance(f, VariableField)]
        plain = {
            f.name: self.opts[f.name]
            for f in variables
            if self.opts[f.name] is not None and "{" not in self.opts[f.name]
        }
        for f in variables:
            value = self.opts[f.name]
            if value is None:  # an optional variable the model derives itself
                self.var[f.name] = None
                continue
            if "{" in value:  # a default derived from other variables, e.g. "{back_stress}_rate"
                try:
                    value = value.format(**plain)
                except (KeyError, IndexError, ValueError) as e:
                    raise self.error(f"bad variable name template '{value}' ({e})", f.name) from e
            if f.is_output:
                self.declare_output(value, f.type)
            else:
                self.declare_input(value, f.type)
            self.var[f.name] = value
            if f.attr:
                object.__setattr__(self, f.attr, value)
        for name, typ in getattr(type(self), "_class_input_spec", {}).items():
            if name not in self._structural:
                self.declare_input(name, typ)
        for name, typ in getattr(type(self), "_class_output_spec", {}).items():
            if name not in self.output_spec:
                self.declare_output(name, typ)
        for f in schema.fields:
            if isinstance(f, OptionField) and f.attr:
                object.__setattr__(self, f.attr, self.opts[f.name])
        self.setup()
        for f in schema.fields:
            if isinstance(f, ParameterField) and f.name not in self._param_meta:
                if f.name not in self._promoted_of and not f.many and self.opts[f.name] is not None:
                    self.declare_parameter(
                        f.attr or f.name, f.type, self.opts[f.name], buffer=f.buffer
                    )

    # ------------------------------------------------------------------ authoring
    def setup(self) -> None:
        """Hook: declare the variables and parameters that depend on the options.

        Called by ``__init__`` after the schema's variables are declared and before
        the schema's parameters are registered. The default does nothing.
        """

    def derived_name(self, rule: NamingRule, source: str, name: str | None = None) -> str:
        """The name of a variable this model derives from option *source* by *rule*.

        Args:
            rule: A naming rule of :mod:`neml2.models._naming` (``HISTORY``: ``x~1``,
                ``HISTORY_2``: ``x~2``, ``RATE``: ``x_rate``, ``RESIDUAL``: ``x_residual``).
            source: The option the name derives from; the class must declare
                ``derived(rule, source, ...)`` in its ``derives`` (``neml2-syntax``
                lists those declarations).
            name: The variable to derive from, for a list option (each of
                ``unknowns_SR2``); default: the variable *source* names.

        Returns:
            The value of the declaration's ``renamed_by`` option when that is set,
                else ``rule(name)``.
        """
        base = name if name is not None else self.var.get(source) or self.opts[source]
        derived = derived_name(type(self), rule, source, base)  # checks the declaration
        renamed_by = next(
            d.renamed_by for d in Schema.of(type(self)).derived if d.key == (rule.key, source)
        )
        return (self.opts.get(renamed_by) if renamed_by else None) or derived

    def error(self, message: str, option: str | None = None) -> FatalError:
        """Make an error located in the input file.

        Args:
            message: The error message.
            option: The option whose line the error names; ``None`` (or an option
                without a recorded line) names the model's block.

        Returns:
            A ``FatalError`` whose message starts with the location; the caller raises it.
        """
        where = self._locations.get(option or "", None) or self._where
        return FatalError(f"{where}: {message}")

    def _label(self) -> str:
        return f"{type(self).__name__} '{self.hit_name}'" if self.hit_name else type(self).__name__

    def declare_input(self, name: str, typ: type) -> str:
        """Declare a structural input variable (appended to :attr:`input_spec`).

        Args:
            name: The variable name.
            typ: The variable's tensor type (``Scalar``, ``SR2``, ...).

        Returns:
            *name*.

        Raises:
            FatalError: If the model already has an input called *name*.
        """
        if name in self._structural or name in self._promoted:
            raise self.error(f"input variable '{name}' is declared twice")
        self._structural[name] = typ
        return name

    def declare_output(self, name: str, typ: type) -> str:
        """Declare an output variable (appended to ``output_spec``).

        Args:
            name: The variable name.
            typ: The variable's tensor type.

        Returns:
            *name*.

        Raises:
            FatalError: If the model already has an output called *name*.
        """
        if name in self.output_spec:
            raise self.error(f"output variable '{name}' is declared twice")
        self.output_spec[name] = typ
        return name

    def declare_parameter(
        self, name: str, typ: type, value: Any, *, buffer: bool = False, persistent: bool = True
    ) -> None:
        """Register *value* as parameter *name*, or promote it to an input.

        Args:
            name: The parameter name (the attribute it is registered under).
            typ: The parameter's tensor type; *value* is converted to it.
            value: A typed value, tensor or number: a constant, trainable unless
                *buffer* (or not floating point). A :class:`NonlinearParameter` or a
                ``str`` (a variable name): the parameter becomes an input of this model.
            buffer: Register the value as a buffer (never trained) instead of an
                ``nn.Parameter``.
            persistent: For a buffer, whether it is part of ``state_dict()``.

        Raises:
            FatalError: If the variable already is a structural input, or *value* is
                not a valid *typ*.
        """
        if isinstance(value, str):
            value = NonlinearParameter(variable=value)
        if isinstance(value, NonlinearParameter):
            var = value.variable
            if var in self._structural:
                raise self.error(
                    f"parameter '{name}' is given by variable '{var}', which is already an input",
                    name,
                )
            if var not in self._promoted:
                self._promoted[var] = typ
            self._promoted_of[name] = var
            self.nl_providers[var] = value.provider
            return
        if isinstance(value, TensorWrapper):
            tw = value if isinstance(value, typ) else typ(value)
        else:
            data = torch.as_tensor(value, dtype=torch.float64)
            try:
                tw = typ(data)
            except Exception as e:
                raise self.error(f"parameter '{name}': {e}", name) from e
        raw = tw.data
        if buffer or not raw.is_floating_point():
            self.register_buffer(name, raw, persistent=persistent)
        else:
            self.register_parameter(name, torch.nn.Parameter(raw.clone()))
        self._param_meta[name] = (typ, tw.sub_batch_ndim)

    def param(self, name: str) -> TensorWrapper:
        """The typed value of a parameter, for use inside ``forward``.

        Args:
            name: The parameter name.

        Returns:
            The parameter as its declared tensor type, at ``(*B, *sub, *base)`` with the
                sub-batch rank it was declared with. Inside ``forward`` a promoted parameter
                gives this call's input value.

        Raises:
            RuntimeError: If the parameter is promoted to an input and this is called
                outside ``forward``.
        """
        if name in self._promoted_of:
            raise RuntimeError(
                f"{self._label()}: parameter '{name}' is given by variable "
                f"'{self._promoted_of[name]}', so it has a value only inside forward"
            )
        typ, sub = self._param_meta[name]
        return typ(getattr(self, name), sub)

    def _get_param(self, name: str, nl_params: tuple = ()) -> TensorWrapper:
        """The typed value of parameter *name* inside an explicit leaf's ``forward(self,
        *inputs, *nl_params, v=...)``: a constant from the model, a promoted one from the
        ``nl_params`` pack (promoted inputs follow the structural ones in order)."""
        var = self._promoted_of.get(name)
        if var is None:
            return self.param(name)
        return nl_params[list(self._promoted).index(var)]

    def declare_typed_parameter(
        self, name: str, spec: Any, type_cls: type, *, factory=None, allow_nonlinear=False
    ) -> None:
        """Resolve *spec* and register parameter *name*, or promote it to an input.

        Args:
            name: The parameter name.
            spec: A typed value, tensor or number (a constant); or a string: numbers (a
                literal), a ``[Tensors]`` name of *factory*, or, with *allow_nonlinear*,
                a ``[Models]`` block (``model`` or ``model.variable``: its output becomes
                an input of this model and the block joins the composition) or any other
                name (a free input variable).
            type_cls: The parameter's tensor type.
            factory (InputFile | None): The input file being read, to resolve
                ``[Tensors]`` and ``[Models]`` names.
            allow_nonlinear (bool): Whether *spec* may name a model or a variable.

        Raises:
            FatalError: If *spec* is neither numbers nor a usable name, the numbers do
                not make a *type_cls*, or a named model lacks the named output.
        """
        self.declare_parameter(
            name, type_cls, self._resolve_spec(name, spec, type_cls, factory, allow_nonlinear)
        )

    def declare_typed_buffer(self, name: str, spec: Any, type_cls: type, *, factory=None) -> None:
        """Resolve *spec* and register it as a constant buffer.

        Like :meth:`declare_typed_parameter`, but the value is a buffer: never trained,
        never promoted to an input.

        Args:
            name: The buffer name.
            spec: A typed value, tensor, number, string of numbers or ``[Tensors]`` name.
            type_cls: The buffer's tensor type.
            factory (InputFile | None): The input file being read, to resolve
                ``[Tensors]`` names.

        Raises:
            FatalError: If *spec* cannot be resolved to a *type_cls*.
        """
        value = self._resolve_spec(name, spec, type_cls, factory, False)
        self.declare_parameter(name, type_cls, value, buffer=True)

    def register_typed_parameter(self, name: str, value: TensorWrapper) -> None:
        """Register a typed value as a trainable ``nn.Parameter``.

        Args:
            name: The parameter name.
            value: The value; its type becomes the parameter's type.
        """
        self.declare_parameter(name, type(value), value)

    def register_typed_buffer(
        self, name: str, value: TensorWrapper, persistent: bool = True
    ) -> None:
        """Register a typed value as a constant buffer.

        Args:
            name: The buffer name.
            value: The value; its type becomes the buffer's type.
            persistent: Whether the buffer is part of ``state_dict()``.
        """
        self.declare_parameter(name, type(value), value, buffer=True, persistent=persistent)

    def _resolve_spec(self, name: str, spec: Any, typ: type, factory, allow_nonlinear: bool):
        if not isinstance(spec, str):
            return spec
        tokens = spec.split()
        try:
            numbers = [float(t) for t in tokens]
        except ValueError:
            numbers = None
        if numbers:
            t = torch.tensor(numbers, dtype=torch.float64)
            base = tuple(getattr(typ, "BASE_SHAPE", ()))
            try:
                return typ(t[0] if base == () and len(numbers) == 1 else t.reshape(base))
            except Exception as e:
                raise self.error(
                    f"parameter '{name}' = '{spec}' is not a {typ.__name__}: {e}", name
                ) from e
        if len(tokens) == 1 and factory is not None and factory.has_tensor(spec):
            return factory.tensor(spec)
        if len(tokens) != 1 or not allow_nonlinear:
            raise self.error(
                f"parameter '{name}' = '{spec}' is neither numbers nor a [Tensors] name"
                + ("" if allow_nonlinear else " (it may not name a variable)"),
                name,
            )
        block, _, var = spec.partition(".")
        if factory is not None and factory.has_block("Models", block):
            outs = list(factory.model(block).output_spec)
            if not var:
                if len(outs) != 1:
                    raise self.error(
                        f"parameter '{name}' names model '{block}', which has {len(outs)} "
                        f"outputs ({', '.join(outs)}); name one as '{block}.<variable>'",
                        name,
                    )
                var = outs[0]
            elif var not in outs:
                raise self.error(
                    f"parameter '{name}': model '{block}' has no output '{var}' "
                    f"(outputs: {', '.join(outs)})",
                    name,
                )
            return NonlinearParameter(variable=var, provider=block)
        return NonlinearParameter(variable=spec)

    # ------------------------------------------------------------------ chain rule
    def apply_chain_rule(self, v, output_name: str, actions, *, output=None):
        """Propagate first-order tangents to one output by the chain rule.

        See :mod:`neml2.models._chain_rule` for the conventions.

        Args:
            v (ChainRuleDict): The incoming tangents, ``v[input][leaf]`` at
                ``(K, *B, *sub, *base_in)``.
            output_name: The output, by HIT option name.
            actions (Mapping[str, ChainRuleAction]): Input option name -> first-order
                action (the incoming tangent of that input -> its contribution).
            output (TensorWrapper | None): The output value; a contribution with a larger
                sub-batch rank is given the output's.

        Returns:
            (ChainRuleDict): ``{output_name: {leaf: sum_i actions[i](v[i][leaf])}}``,
                each tangent at ``(K, *B, *sub, *base_out)``; a leaf that reaches no input
                is absent.
        """
        return _chain_rule.apply_chain_rule(self, v, output_name, actions, output=output)

    def apply_chain_rule_2(self, v, v2, output_name: str, actions_1, actions_2, vh=None):
        """Propagate second-order tangents to one output.

        Args:
            v (ChainRuleDict): The first-order tangents, ``v[input][a]``.
            v2 (SecondOrderChainRuleDict): The incoming second-order tangents,
                ``v2[input][a][b]`` at ``(K_a, K_b, *B, *sub, *base_in)``.
            output_name: The output, by HIT option name.
            actions_1 (Mapping[str, ChainRuleAction]): The first-order actions.
            actions_2 (Mapping[tuple[str, str], SecondOrderChainRuleAction]): ``(i, j)``
                -> second-order action, the bilinear term for one tangent of input ``i``
                and one of input ``j``.
            vh (ChainRuleDict | None): Tangents for the second slot; ``None`` uses *v*.

        Returns:
            (SecondOrderChainRuleDict): ``{output_name: {a: {b: y''(v[a], w[b]) +
                y'(v2[a][b])}}}`` with ``w`` = *vh* when given, else *v*; each at
                ``(K_a, K_b, *B, *sub, *base_out)``.
        """
        return _chain_rule.apply_chain_rule_2(self, v, v2, output_name, actions_1, actions_2, vh=vh)

    def propagate_tangents(
        self, v, output_name: str, actions_1, *, output=None, v2=None, actions_2=None, vh=None
    ) -> tuple:
        """Propagate the tangents asked for to one output (an explicit leaf's helper).

        Args:
            v (ChainRuleDict): The first-order tangents, ``v[input][leaf]``.
            output_name: The output, by HIT option name.
            actions_1 (Mapping[str, ChainRuleAction]): The first-order actions.
            output (TensorWrapper | None): The output value (see :meth:`apply_chain_rule`).
            v2 (SecondOrderChainRuleDict | None): The second-order tangents, if asked for.
            actions_2 (Mapping[tuple[str, str], SecondOrderChainRuleAction] | None): The
                second-order actions; ``None`` means none (a linear map).
            vh (ChainRuleDict | None): The second-slot tangents, if asked for.

        Returns:
            ``(v_out,)``; ``(v_out, v2_out)`` with *v2*; ``(v_out, v2_out, vh_out)`` with
                *vh*: the dictionaries of :meth:`apply_chain_rule` and
                :meth:`apply_chain_rule_2`, ready to be appended to the output.
        """
        return _chain_rule.propagate_tangents(
            self, v, output_name, actions_1, output=output, v2=v2, actions_2=actions_2, vh=vh
        )

    def call_by_name(self, state: Mapping[str, Any]) -> dict[str, TensorWrapper]:
        """Call ``forward`` on values keyed by variable name.

        Args:
            state: Every input by name: typed values, or raw tensors at ``(*B, *base)``
                taken as the input's type. Extra keys are refused.

        Returns:
            Output name -> typed output value, at ``(*B, *sub, *base)``.

        Raises:
            FatalError: If an input is missing or a name is not an input.
        """
        label = self._label()
        check_names(label, state, self.input_spec, "input")
        missing = [n for n in self.input_spec if n not in state]
        if missing:
            raise FatalError(missing_inputs_message(label, missing))
        args = [_typed(state[n], t) for n, t in self.input_spec.items()]
        outs = _as_tuple(self(*args))
        return dict(zip(self.output_spec, outs, strict=True))

    # ------------------------------------------------------------------ specs
    @property
    def input_spec(self) -> dict[str, type]:
        """Ordered input name -> tensor type: structural inputs, then promoted parameters.

        The key order is ``forward``'s positional order.
        """
        return {**self._structural, **self._promoted}

    @input_spec.setter
    def input_spec(self, spec: Mapping[str, type]) -> None:
        """Set the structural inputs (a model whose inputs depend on its options)."""
        self._structural = dict(spec)

    @property
    def input_names(self) -> list[str]:
        """The input variable names, in ``forward``'s positional order."""
        return list(self.input_spec)

    @property
    def output_names(self) -> list[str]:
        """The output variable names, in the order ``forward`` returns them."""
        return list(self.output_spec)

    @property
    def input_base_shapes(self) -> list[tuple[int, ...]]:
        """The base shape of each input, in :attr:`input_names` order (``(6,)`` for SR2)."""
        return [tuple(t.BASE_SHAPE) for t in self.input_spec.values()]

    @property
    def output_base_shapes(self) -> list[tuple[int, ...]]:
        """The base shape of each output, in :attr:`output_names` order."""
        return [tuple(t.BASE_SHAPE) for t in self.output_spec.values()]

    def _first_tensor(self) -> torch.Tensor | None:
        for t in self.parameters():
            return t
        for t in self.buffers():
            if t.is_floating_point():
                return t
        return None

    @property
    def dtype(self) -> torch.dtype:
        """The dtype the model computes in: its parameters' (for a model without any,
        what ``.to()`` last asked for; float64 before that)."""
        t = self._first_tensor()
        return t.dtype if t is not None else self.__dict__.get("_neml2_moved", _HOME)[0]

    @property
    def device(self) -> torch.device:
        """The device the model computes on: its parameters' (for a model without any,
        what ``.to()`` last asked for; CPU before that)."""
        t = self._first_tensor()
        return t.device if t is not None else self.__dict__.get("_neml2_moved", _HOME)[1]

    def _placement(self) -> tuple[torch.dtype, torch.device]:
        """``(dtype, device)`` the inputs must have, cached until the next ``.to()``."""
        p = self.__dict__.get("_neml2_placement")
        if p is None:
            p = (self.dtype, self.device)
            self.__dict__["_neml2_placement"] = p
        return p

    def _apply(self, fn, *args, **kwargs):
        # .to() / .double() / .cuda() / ...: record where a model without tensors of its
        # own went (from what fn makes of an empty tensor), and drop the placement cache
        out = super()._apply(fn, *args, **kwargs)
        dtype, device = self.__dict__.get("_neml2_moved", _HOME)
        try:
            probe = fn(torch.empty(0, dtype=dtype, device=device))
        except Exception:  # a fn that takes no empty tensor: the parameters still tell
            probe = None
        if isinstance(probe, torch.Tensor):
            self.__dict__["_neml2_moved"] = (probe.dtype, probe.device)
        self.__dict__.pop("_neml2_placement", None)
        return out

    def _check_typed_call(self, args: tuple, v, v2) -> tuple:
        """The typed call's checks: every tensor argument and ``v=`` / ``v2=`` seed of the
        model's dtype and device, seed names among the inputs; Python numbers are taken
        in the model's dtype (the returned arguments). Runs on every call of every
        sub-model, so the common case is a few attribute compares."""
        dtype, device = self.__dict__.get("_neml2_placement") or self._placement()
        for x in args:
            t = x.data if isinstance(x, TensorWrapper) else x
            if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.device != device:
                args = self._checked_args(args, dtype, device)
                break
        if v is not None or v2 is not None:
            spec, label = self.input_spec, self._label()
            check_seeds(label, "v=", v, spec, dtype, device, 1)
            check_seeds(label, "v2=", v2, spec, dtype, device, 2)
        return args

    def _checked_args(self, args: tuple, dtype, device) -> tuple:
        label = self._label()
        out = []
        for (name, typ), x in zip(self.input_spec.items(), args, strict=True):
            t = x.data if isinstance(x, TensorWrapper) else x
            want = input_dtype(typ, dtype)
            if isinstance(t, torch.Tensor):
                check_placement(label, input_desc(name, x), t, want, device)
                out.append(x)
            else:
                out.append(as_tensor(label, f"input '{name}'", x, want, device))
        return tuple(out)

    # ------------------------------------------------------------------ calls
    def _call_within(self, args: list) -> tuple:
        """``forward(*args)`` for the eager evaluation of an enclosing composition, which
        made the public call's checks for its own inputs; the arguments are those or its
        other children's outputs (typed values of the model's dtype and device). Skips
        ``torch.nn.Module.__call__`` and the checks, about 12 us per call; the caller
        takes the public call instead where a hook is registered or a trace is on (see
        :func:`direct_calls`)."""
        return _as_tuple(self._call_leaf(type(self).forward._neml2_leaf, args))

    def _call_leaf(self, f, args) -> Outputs:
        typed = [_typed(x, t) for x, t in zip(args, self.input_spec.values(), strict=True)]
        if getattr(type(self).forward, "_neml2_explicit", False):
            return self._explicit_on_carried(f, typed)
        n = len(self._structural)
        if not self._promoted:
            return f(self, *typed[:n])
        # promoted parameters reach forward through a per-call view, never by writing
        # them onto the model: a write to the model inside a traced while_loop body (an
        # implicit update's Newton) is a side effect Dynamo refuses
        return f(_PromotedCall(self, dict(zip(self.input_spec, typed, strict=True))), *typed[:n])

    def _forward_tangents(self, f, args, v, v2, vh=None):
        if vh is not None:
            return self._forward_tangents_vh(f, args, v, v2, vh)
        v = v or {}
        xs = []
        for name, x, typ in zip(self.input_spec, args, self.input_spec.values(), strict=True):
            x = _typed(x, typ)
            xs.append(attach(x, v.get(name), None if v2 is None else v2.get(name, {})))
        outs = _as_tuple(self._call_leaf(f, xs))
        prim = tuple(o.primal() for o in outs)
        v_out = {n: tangents_of(o) for n, o in zip(self.output_spec, outs, strict=True)}
        if v2 is None:
            return (*prim, v_out)
        v2_out = {n: tangents2_of(o) for n, o in zip(self.output_spec, outs, strict=True)}
        return (*prim, v_out, v2_out)

    def _forward_tangents_vh(self, f, args, v, v2, vh):
        """``vh=`` on the typed algebra: the ``vh`` seeds ride along as extra leaves (and
        each ``v2[a][b]`` as one first-order leaf of ``K_a K_b`` directions), so that
        ``v2_out[a][b] = y''(v[a], vh[b]) + y'(v2[a][b])`` with only the ``v x vh`` pairs
        of the Hessian, as the contract defines it."""
        seeds: dict[str, dict[str, Any]] = {n: dict(d) for n, d in v.items()}
        for n, d in vh.items():
            for b, t in d.items():
                seeds.setdefault(n, {})[_VH + b] = t
        shapes: dict[tuple[str, str], tuple[int, int]] = {}
        for n, d in (v2 or {}).items():
            for a, inner in d.items():
                for b, t in inner.items():
                    data = t.data if isinstance(t, TensorWrapper) else torch.as_tensor(t)
                    shapes[(a, b)] = (int(data.shape[0]), int(data.shape[1]))
                    flat = data.reshape(-1, *data.shape[2:])
                    if isinstance(t, TensorWrapper):
                        flat = type(t)(flat, t.sub_batch_ndim)
                    seeds.setdefault(n, {})[f"{_V2}{a}{_V2}{b}"] = flat
        *prim, t1, t2 = self._forward_tangents(f, args, seeds, {})
        v_out, vh_out, v2_out = {}, {}, {}
        for n in self.output_spec:
            v_out[n] = {k: t for k, t in t1[n].items() if not k.startswith((_VH, _V2))}
            vh_out[n] = {k[len(_VH) :]: t for k, t in t1[n].items() if k.startswith(_VH)}
            acc: dict[str, dict[str, TensorWrapper]] = {}
            for a, inner in t2[n].items():
                if a.startswith((_VH, _V2)):
                    continue
                for b, t in inner.items():
                    if b.startswith(_VH):
                        acc.setdefault(a, {})[b[len(_VH) :]] = t
            for k, t in t1[n].items():
                if k.startswith(_V2):
                    a, b = k[len(_V2) :].split(_V2)
                    ka, kb = shapes[(a, b)]
                    g1 = type(t)(t.data.reshape(ka, kb, *t.data.shape[1:]), t.sub_batch_ndim)
                    bucket = acc.setdefault(a, {})
                    bucket[b] = g1 if b not in bucket else bucket[b] + g1
            v2_out[n] = acc
        return (*prim, v_out, v2_out, vh_out)

    def _call_explicit(self, f, args, v, v2, vh):
        """Call a leaf that propagates tangents itself (the seed's form) with the
        contract's dictionaries; normalize its result to ``(*outputs, v_out[, ...])``."""
        typed = [_typed(x, t) for x, t in zip(args, self.input_spec.values(), strict=True)]
        by_name = dict(zip(self.input_spec, typed, strict=True))
        v, vh = _typed_seeds(by_name, v, 1), _typed_seeds(by_name, vh, 1)
        v2 = _typed_seeds(by_name, v2, 2)
        # v2= / vh= only when asked for: a first-order leaf may declare just v=
        extra = {k: x for k, x in (("v2", v2), ("vh", vh)) if x is not None}
        for k in extra:
            if k not in inspect.signature(f).parameters:
                raise FatalError(
                    f"{self._label()}: second-order tangents ({k}=) were asked for, but its "
                    f"forward takes no {k}= keyword (first order only)"
                )
        res = _as_tuple(f(self, *typed, v=v, **extra))
        want = len(self.output_spec) + 1 + (v2 is not None or vh is not None) + (vh is not None)
        if len(res) != want:
            raise FatalError(
                f"{self._label()}: forward with v=/v2=/vh= must return the "
                f"{len(self.output_spec)} output(s) and then "
                f"{want - len(self.output_spec)} tangent dict(s), got {len(res)} values"
            )
        return res

    def _explicit_on_carried(self, f, typed: list) -> Outputs:
        """An explicit leaf among leaves written on the typed algebra: the inputs carry
        their tangents, so read them into ``v`` (``v2``), call the leaf, and attach its
        ``v_out`` (``v2_out``) to the outputs."""
        names = list(self.input_spec)
        if not any(x.tangents is not None or x.tangents2 is not None for x in typed):
            return f(self, *typed)
        v = {n: tangents_of(x) for n, x in zip(names, typed, strict=True) if x.tangents}
        second = any(x.tangents2 is not None for x in typed)
        v2 = {n: tangents2_of(x) for n, x in zip(names, typed, strict=True)} if second else None
        prims = [x.primal() for x in typed]
        res = self._call_explicit(f, prims, v, v2, None)
        n = len(self.output_spec)
        outs, v_out = res[:n], res[n]
        v2_out = res[n + 1] if second else None
        out = []
        for name, o in zip(self.output_spec, outs, strict=True):
            inner2 = None if v2_out is None else v2_out.get(name, {})
            out.append(attach(o, v_out.get(name, {}), inner2))
        return out[0] if n == 1 else tuple(out)

    def _typed_inputs(self, inputs: Mapping[str, Any]) -> list[TensorWrapper]:
        spec = self.input_spec
        label = self._label()
        # traced (py-jit): CompiledModel checked the inputs before compiling
        checking = not torch.compiler.is_compiling()
        if checking:
            check_names(label, inputs, spec, "input")
        missing = [n for n in spec if n not in inputs]
        if missing:
            raise FatalError(missing_inputs_message(label, missing))
        dtype, device = self._placement() if checking else (self.dtype, self.device)
        out = []
        for name, typ in spec.items():
            x = inputs[name]
            if isinstance(x, TensorWrapper):
                if checking:
                    want = input_dtype(typ, dtype)
                    check_placement(label, input_desc(name, x), x.data, want, device)
                out.append(_typed(x, typ))
                continue
            if checking:
                x = as_tensor(label, f"input '{name}'", x, input_dtype(typ, dtype), device)
            else:
                x = torch.as_tensor(x)
            base = tuple(typ.BASE_SHAPE)
            if x.dim() < len(base) or tuple(x.shape[x.dim() - len(base) :]) != base:
                raise FatalError(
                    f"{self._label()}: input '{name}' has shape {tuple(x.shape)} but a "
                    f"{typ.__name__} must be (*batch, {', '.join(map(str, base))})"
                )
            out.append(typ(x))
        return out

    def _checked_inputs(self, inputs: Mapping[str, Any]) -> list[TensorWrapper]:
        """:meth:`_typed_inputs`, whose batch shapes must broadcast: the error names two
        inputs that do not (``input 'strain' has batch shape (2,) and input 't' (3,): they
        do not broadcast``)."""
        xs = self._typed_inputs(inputs)
        if len(xs) < 2 or torch.compiler.is_compiling():
            return xs
        first = xs[0].dynamic_shape
        if any(x.dynamic_shape != first for x in xs[1:]):  # the common case: all the same
            shapes = {
                f"input '{n}'": x.dynamic_shape for n, x in zip(self.input_spec, xs, strict=True)
            }
            broadcast_batch_shapes(shapes, self._label())
        return xs

    def _call_named(self, xs: list[TensorWrapper], **seeds):
        """``self(*xs, **seeds)`` for the name-keyed calls; a failure that a parameter's
        batch shape explains (one that does not broadcast with the inputs') says so."""
        try:
            return self(*xs, **seeds)
        except (ShapeError, FatalError, RuntimeError) as e:
            self._explain_parameter_batch(xs, e)
            raise

    def _explain_parameter_batch(self, xs: list[TensorWrapper], e: Exception) -> None:
        """Raise FatalError for the first constant parameter (of this model or one inside
        it) whose dynamic batch shape does not broadcast with the inputs' *xs*."""
        batch = torch.broadcast_shapes(*(x.dynamic_shape for x in xs))
        for full, dynamic in parameter_batch_shapes(self).items():
            try:
                torch.broadcast_shapes(dynamic, batch)
            except RuntimeError:
                raise FatalError(
                    f"{self._label()}: parameter '{full}' has batch shape {dynamic}, which "
                    f"does not broadcast with the inputs' batch shape {tuple(batch)}"
                ) from e

    def _forward_named(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        outs = _as_tuple(self._call_named(self._checked_inputs(inputs)))
        return {n: o.data for n, o in zip(self.output_spec, outs, strict=True)}

    def jvp(
        self, inputs: Mapping[str, Any], tangents: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Evaluate the outputs and their directional derivatives.

        Args:
            inputs: Every input by name, raw tensors at ``(*B, *base)`` or typed values.
            tangents: Input name -> direction ``t_i`` at ``(*B, *base)``, the input's
                shape; a missing input has the zero direction.

        Returns:
            ``(outputs, jvp)``: ``outputs[out]`` at ``(*B, *out_base)`` and
                ``jvp[out] = sum_i dy/dx_i . t_i`` at the same shape, for every output.

        Raises:
            FatalError: If an input is missing, a name is unknown, or a tensor has the
                wrong dtype, device or base shape.
        """
        xs = self._checked_inputs(inputs)
        label = self._label()
        checking = not torch.compiler.is_compiling()  # traced: CompiledModel checked them
        if checking:
            check_names(label, tangents, self.input_spec, "tangent")
        v = {}
        for (name, typ), x in zip(self.input_spec.items(), xs, strict=True):
            if name in tangents:
                if checking:
                    t = as_tensor(label, f"tangent '{name}'", tangents[name], x.dtype, x.device)
                else:
                    t = torch.as_tensor(tangents[name], dtype=x.dtype, device=x.device)
                v[name] = {"d": typ(t.unsqueeze(0), x.sub_batch_ndim)}
        *outs, v_out = self._call_named(xs, v=v)
        out = {n: o.data for n, o in zip(self.output_spec, outs, strict=True)}
        jvp = {}
        for n, o in zip(self.output_spec, outs, strict=True):
            d = v_out[n].get("d")
            jvp[n] = d.data[0].expand_as(o.data) if d is not None else torch.zeros_like(o.data)
        return out, jvp

    def jacobian(
        self, inputs: Mapping[str, Any], *, wrt: str | Sequence[str] | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
        """Outputs and the Jacobian blocks ``J[out][in]`` at ``(*B, *out_base, *in_base)``.

        Args:
            inputs: Every input by name, at ``(*B, *base)`` (history inputs ``x~1``
                included; :func:`neml2.models.with_zero_history` zero-fills them).
            wrt: The input(s) to differentiate with respect to (``"strain"``); default:
                every input. Only these are seeded, so one block costs one forward pass
                carrying ``prod(in_base)`` tangents (6 for an SR2), not the sum over all
                inputs.

        Returns:
            ``(outputs, J)``: ``outputs[out]`` at ``(*B, *out_base)``; ``J[out][in]`` for
                every output and every input in *wrt*, at ``(*B, *out_base, *in_base)``
                (``(N, 6, 6)`` for ``J["stress"]["strain"]``), zeros where the output does
                not depend on the input.

        Raises:
            FatalError: If an input is missing or unknown, or *wrt* names an input the
                model does not have, or none.
        """
        xs = self._checked_inputs(inputs)
        names = list(self.input_spec)
        wanted = names if wrt is None else wrt_inputs(self._label(), wrt, names)
        v = {n: {n: identity_seed(x)} for n, x in zip(names, xs, strict=True) if n in wanted}
        *outs, v_out = self._call_named(xs, v=v)
        out = {n: o.data for n, o in zip(self.output_spec, outs, strict=True)}
        jac: dict[str, dict[str, torch.Tensor]] = {}
        for n, o in zip(self.output_spec, outs, strict=True):
            jac[n] = {}
            for i, x in zip(names, xs, strict=True):
                if i not in wanted:
                    continue
                in_base = tuple(x.base_shape)
                d = v_out[n].get(i)
                if d is None:
                    block = torch.zeros(
                        (*o.data.shape, *in_base), dtype=o.dtype, device=o.data.device
                    )
                else:
                    t = d.data.expand(d.data.shape[0], *o.data.shape)
                    block = t.movedim(0, -1).reshape((*o.data.shape, *in_base))
                jac[n][i] = block
        return out, jac

    # ------------------------------------------------------------------ parameters
    def set_parameter(self, name: str, value: Any) -> None:
        """Replace a parameter's value wholesale.

        Args:
            name: The parameter, dotted through sub-models (``elasticity.E``), as
                ``named_parameters()`` lists it.
            value: The new value: a typed value, tensor or number, at
                ``(*B, *base)`` (``(*B, *sub_batch, *base)`` for a parameter with a
                sub-batch shape, such as a per-slip value). Axes before those are a batch
                of values, which the outputs take on: a ``(3, 3)`` tensor for a
                ``Scalar`` is a ``(3, 3)`` batch of values, and a forward on one point
                then returns ``(3, 3, *out_base)``; a batch that does not broadcast with
                the inputs' is an error of that call naming the parameter. A tensor of
                another floating dtype is converted to the parameter's, and moved to its
                device; a trainable parameter stays trainable.

        Raises:
            FatalError: If there is no such parameter or sub-model, or the value (one
                line naming the parameter, see :func:`neml2.tensors.checked_parameter`)
                is not a number or tensor, is a typed value of another base shape, has
                another shape before its batch axes, has an integer, bool or complex
                dtype (for a floating parameter; never cast), or holds a value that is not
                finite (naming its index).
        """
        prefix, _, leaf = name.rpartition(".")
        try:
            owner = self.get_submodule(prefix) if prefix else self
        except AttributeError as e:
            raise FatalError(f"{self._label()}: no sub-model '{prefix}' (from '{name}')") from e
        if not isinstance(owner, Model) or leaf not in owner._param_meta:
            names = ", ".join(n for n, _ in self.named_parameters()) or "(none)"
            raise FatalError(f"{self._label()}: no parameter '{name}'; parameters: {names}")
        typ, sub = owner._param_meta[leaf]
        old = getattr(owner, leaf)
        base_ndim = len(typ.BASE_SHAPE)
        data = checked_parameter(
            name,
            value,
            dtype=old.dtype,
            device=old.device,
            typ=typ,
            sub_batch_shape=old.shape[old.dim() - base_ndim - sub : old.dim() - base_ndim],
            label=self._label(),
        )
        if isinstance(old, torch.nn.Parameter):
            owner._parameters[leaf] = torch.nn.Parameter(data, requires_grad=old.requires_grad)
        else:
            owner._buffers[leaf] = data
        if isinstance(value, TensorWrapper):
            owner._param_meta[leaf] = (typ, value.sub_batch_ndim)

    # ------------------------------------------------------------------ HIT
    @classmethod
    def from_hit(cls, node, ctx) -> Model:
        """Build the model from its ``[Models]`` block.

        The block is read against the class's schema strictly: an unknown option is an
        error, and errors name ``file:line``.

        Args:
            node (hit.Node): The block.
            ctx (InputFile): The input file being read (resolves ``[Tensors]`` and
                ``[Models]`` names).

        Returns:
            The model, with ``_where`` and the option locations set for error messages.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)

    def extra_repr(self) -> str:
        """The lines ``print(model)`` shows: inputs, outputs and own parameters.

        Returns:
            ``inputs: name: Type, ...``, ``outputs: ...`` and, when the model has own
                parameters, ``parameters: name: Type(shape), ...``, joined by newlines.
        """

        def spec(d):
            return ", ".join(f"{n}: {t.__name__}" for n, t in d.items()) or "-"

        lines = [f"inputs: {spec(self.input_spec)}", f"outputs: {spec(self.output_spec)}"]
        own = [
            f"{n}: {self._param_meta[n][0].__name__}{tuple(getattr(self, n).shape)}"
            for n in self._param_meta
        ]
        if own:
            lines.append("parameters: " + ", ".join(own))
        return "\n".join(lines)


_HOME = (torch.float64, torch.device("cpu"))
#: leaf-name prefixes of the vh= seeds and the flattened v2= seeds (_forward_tangents_vh)
_VH = "\x00vh:"
_V2 = "\x00v2:"


class _PromotedCall:
    """The model as one call of its ``forward`` sees it when some parameters are
    promoted to inputs: ``param(name)`` returns this call's value of a promoted
    parameter; everything else is the model's (its methods bound to this view, so a
    helper method that reads ``self.param`` sees the same values)."""

    def __init__(self, model: Model, values: dict[str, TensorWrapper]):
        self._model = model
        self._values = values

    def param(self, name: str) -> TensorWrapper:
        var = self._model._promoted_of.get(name)
        if var is not None:
            return self._values[var]
        return self._model.param(name)

    def __getattr__(self, name: str) -> Any:
        for klass in type(self._model).__mro__:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if isinstance(attr, types.FunctionType):
                    return functools.partial(attr, self)
                break
        return getattr(self._model, name)


def _typed_seeds(inputs: dict[str, TensorWrapper], seeds, nseed: int):
    """The contract's ``v`` / ``vh`` (*nseed* 1) or ``v2`` (2) with every tangent a typed
    value of its input's type, seed axes leading and aligned with the input's batch (a
    raw ``(K, *base)`` seed, e.g. the identity of a Jacobian, gets its batch axes)."""
    if seeds is None:
        return None
    out = {}
    for name, inner in seeds.items():
        x = inputs[name]
        if nseed == 1:
            out[name] = {a: x._new(_direction(x, t, 1), x.sub_batch_ndim) for a, t in inner.items()}
        else:
            out[name] = {
                a: {b: x._new(_direction(x, t, 2), x.sub_batch_ndim) for b, t in d.items()}
                for a, d in inner.items()
            }
    return out


def _typed(x: Any, typ: type) -> TensorWrapper:
    if isinstance(x, typ):
        return x
    if isinstance(x, TensorWrapper):
        if typ is Tensor or tuple(x.base_shape) == tuple(typ.BASE_SHAPE):
            return typ(x)
        raise FatalError(
            f"expected a {typ.__name__} (base {tuple(typ.BASE_SHAPE)}), got a "
            f"{type(x).__name__} of base {tuple(x.base_shape)}"
        )
    return typ(torch.as_tensor(x))


def direct_calls() -> bool:
    """May an eager composition call its children through :meth:`Model._call_within`: no
    Dynamo / export / TorchScript trace is on and no global ``torch.nn.Module`` hook is
    registered (a child's own hooks are checked by :func:`has_hooks`)?"""
    if _tracing() or torch._C._get_tracing_state():
        return False
    any_global = getattr(torch.nn.modules.module, "_has_any_global_hook", None)
    return any_global is not None and not any_global()


def has_hooks(m: torch.nn.Module) -> bool:
    """Has *m* a forward or backward hook of its own (then it is called publicly)?"""
    return bool(
        m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks
    )


def parameter_owners(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """The ``(prefix, module)`` pairs of *model* and the models inside it that declare
    parameters (what :func:`parameter_batch_shapes` reads; a caller that asks often keeps
    this list, the walk over every module being the costly part)."""
    return [(p, m) for p, m in model.named_modules() if getattr(m, "_param_meta", None)]


def parameter_batch_shapes(
    model: torch.nn.Module, owners: Sequence[tuple[str, torch.nn.Module]] | None = None
) -> dict[str, tuple[int, ...]]:
    """The dynamic batch shape of every constant parameter of *model* and of the models
    inside it (a promoted parameter, an input, has none).

    Args:
        model: The model.
        owners: :func:`parameter_owners` of *model*, if at hand.

    Returns:
        Parameter name (dotted through sub-models, ``elasticity.E``) -> the leading
            ``(*B)`` of its stored ``(*B, *sub, *base)``; ``()`` for most parameters.
    """
    shapes = {}
    for prefix, m in parameter_owners(model) if owners is None else owners:
        for name, (typ, sub) in getattr(m, "_param_meta", {}).items():
            # registered as a parameter or a buffer; neither where it is an input (the
            # dicts themselves: nn.Module.__getattr__ costs microseconds a name)
            raw = m._parameters.get(name)
            if raw is None:
                raw = m._buffers.get(name)
            if isinstance(raw, torch.Tensor):
                full = f"{prefix}.{name}" if prefix else name
                shapes[full] = tuple(raw.shape[: raw.dim() - sub - len(typ.BASE_SHAPE)])
    return shapes


def _as_tuple(out: Any) -> tuple[TensorWrapper, ...]:
    return out if isinstance(out, tuple) else (out,)


def attribute_name(hit_name: object) -> str | None:
    """The attribute a sub-model named *hit_name* in the input file is registered under.

    A block name need not be a Python identifier (``[my-model]``, ``[2nd]``) and may be
    a keyword (``[yield]``, ``[lambda]``); torch.fx writes a module's attribute names
    into the Python code it generates (``self.model.yield.E`` does not compile), so the
    attribute is the name made an identifier: every character that cannot be in one
    becomes ``_``, a name that does not start with a letter gets ``model_`` before it
    (a leading ``_`` could be a private attribute its parent sets later) and a keyword
    a ``_`` after it (``my_model``, ``model_2nd``, ``yield_``). Messages keep the
    block's own name (``hit_name``); ``named_parameters()`` reads the attribute
    (``yield_.E``).

    Args:
        hit_name: the block name (``None`` or an empty name for a model built in Python).

    Returns:
        The identifier, or ``None`` when *hit_name* gives none (the caller picks one).
    """
    if not isinstance(hit_name, str) or not hit_name:
        return None
    name = re.sub(r"\W", "_", hit_name)
    if not name[0].isalpha():
        name = "model_" + name
    if keyword.iskeyword(name):
        name += "_"
    return name if name.isidentifier() else None


__all__ = ["Model", "NonlinearParameter", "ObjectRefField", "OptionField"]
