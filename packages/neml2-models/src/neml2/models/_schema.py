"""Declarative schemas: what a registered class accepts in HIT and from Python.

A class lists its fields once, in ``fields`` (or, in the seed's spelling, in
``hit = HitSchema(...)``, see :mod:`neml2.models.model`)::

    class YieldFunction(Model):
        fields = (
            input("stress", Scalar, "effective_stress", doc="effective stress"),
            output("yield_function", Scalar, doc="f"),
            parameter("yield_stress", Scalar, doc="initial yield stress"),
        )

and the schema drives HIT construction (strict: unknown options are errors that
list the accepted ones), defaults, documentation and the catalogue printed by
``neml2-syntax``. Field kinds:

* :func:`input` / :func:`output`: a variable; the HIT option renames it.
* :func:`parameter`: a tensor-valued coefficient, given as a literal, a
  ``[Tensors]`` name, another model's output (``model`` or ``model.variable``) or a
  bare variable name (promoted to an input).
* :func:`option`: a plain setting (str / int / float / bool / enum / lists).
* :func:`model_ref`: the name of other ``[Models]`` block(s).

A number's valid range is declared with ``bounds=`` (:class:`Bounds`, interval notation:
``option("max_its", int, 25, bounds="[1, inf)")``, ``parameter(..., bounds="(0, inf)")``);
a value outside is refused when it is read, and the catalogue shows it as ``range``.

Besides its options, a class declares in ``derives`` (:func:`derived`) the variable
names it makes from an option's variable by a rule of :mod:`neml2.models._naming`
(``x~1``, ``x_rate``, ``x_residual``); :func:`catalogue` lists them. An option's
older reference spellings (``formerly``) are answered with its name.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

import torch

from neml2.models._naming import NamingRule, rule_of_template
from neml2.tensors import FatalError, TensorWrapper

if TYPE_CHECKING:
    from neml2 import hit
    from neml2.models._input_file import InputFile


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Marks a field without a default: HIT must set it.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Bounds:
    """The interval of valid values of a numeric option or parameter.

    Declared in interval notation, ``bounds="(0, inf)"`` (``(``/``)`` open,
    ``[``/``]`` closed; ``inf`` and ``-inf`` are always open ends, so a bounded value is
    finite): ``"[1, inf)"`` an integer at least 1, ``"(0, inf)"`` positive, ``"[0, 1]"``
    a fraction, ``"(-1, 0.5)"`` Poisson's ratio. NaN is never inside. The schema checks
    the value when the option is read (from HIT or from Python keywords) and
    ``neml2-syntax`` shows the interval.
    """

    low: float
    high: float
    low_closed: bool
    high_closed: bool

    @classmethod
    def parse(cls, text: str | Bounds) -> Bounds:
        """The interval written *text* (e.g. ``"(0, 1]"``); a TypeError if malformed."""
        if isinstance(text, Bounds):
            return text
        t = text.strip()
        parts = t[1:-1].split(",")
        if len(t) < 5 or t[0] not in "([" or t[-1] not in ")]" or len(parts) != 2:
            raise TypeError(f"bounds '{text}': write an interval such as '(0, inf)' or '[0, 1]'")
        try:
            low, high = (float(x) for x in parts)
        except ValueError as e:
            raise TypeError(f"bounds '{text}': the ends must be numbers or inf") from e
        closed_low, closed_high = t[0] == "[", t[-1] == "]"
        if (closed_low and math.isinf(low)) or (closed_high and math.isinf(high)):
            raise TypeError(f"bounds '{text}': an infinite end is open, '(' or ')'")
        if not low < high:
            raise TypeError(f"bounds '{text}': the lower end must be below the upper")
        return cls(low, high, closed_low, closed_high)

    def __str__(self) -> str:
        return (
            f"{'[' if self.low_closed else '('}{_end(self.low)}, "
            f"{_end(self.high)}{']' if self.high_closed else ')'}"
        )

    def describe(self) -> str:
        """The condition in words: ``> 0``, ``>= 1`` or ``in (0, 1]``."""
        if math.isinf(self.high):
            return f"{'>=' if self.low_closed else '>'} {_end(self.low)}"
        if math.isinf(self.low):
            return f"{'<=' if self.high_closed else '<'} {_end(self.high)}"
        return f"in {self}"

    def contains(self, x: float) -> bool:
        """Whether the number *x* is inside (never for NaN)."""
        above = x >= self.low if self.low_closed else x > self.low
        below = x <= self.high if self.high_closed else x < self.high
        return bool(above and below)

    def mask(self, x: torch.Tensor) -> torch.Tensor:
        """Elementwise :meth:`contains` of the tensor *x* (False at NaN)."""
        above = x >= self.low if self.low_closed else x > self.low
        below = x <= self.high if self.high_closed else x < self.high
        return above & below

    def first_outside(self, x: Any) -> str | None:
        """``None`` when every value of *x* (a number, tensor or typed tensor) is inside,
        else the first outside one: ``"-5"``, or ``"-5 (at batch index 3)"`` for a value
        of several entries (flat C order)."""
        data = getattr(x, "data", x)
        if not isinstance(data, torch.Tensor):
            return None if self.contains(float(data)) else f"{float(data):g}"
        flat = data.detach().reshape(-1)
        ok = self.mask(flat)
        if bool(ok.all()):
            return None
        i = int((~ok).nonzero()[0, 0])
        value = f"{float(flat[i]):g}"
        return value if flat.numel() == 1 else f"{value} (at batch index {i})"


def _end(x: float) -> str:
    """An interval end as written: ``1``, ``0.5``, ``inf``, ``-inf``."""
    return f"{x:g}" if not math.isinf(x) else ("inf" if x > 0 else "-inf")


def _bounds(bounds: str | Bounds | None) -> Bounds | None:
    return None if bounds is None else Bounds.parse(bounds)


@dataclass(frozen=True)
class Field:
    """One accepted option. ``name`` is the HIT option and the Python keyword."""

    name: str
    doc: str = ""
    default: Any = REQUIRED
    #: where the model keeps the value: the instance attribute holding a variable's
    #: resolved name or an option's value, the name a parameter is registered under
    attr: str | None = None
    #: other spellings of this option in reference NEML2 inputs (older releases, its
    #: tutorials): not accepted, but answered with "did you mean '<name>'?"
    formerly: tuple[str, ...] = ()

    kind = "option"

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def catalogue(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "kind": self.kind,
            "doc": self.doc,
            "required": self.required,
            "default": None if self.required else _plain(self.default),
        }
        if self.formerly:
            out["formerly"] = list(self.formerly)
        return out


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, str | int | float | bool) or v is None:
        return v
    return repr(v)


@dataclass(frozen=True)
class VariableField(Field):
    """An input or output variable; the HIT value is the variable's name."""

    type: type = object
    is_output: bool = False
    #: an output's claim when sibling models provide the same variable ("high"/"low")
    priority: str | None = None

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "output" if self.is_output else "input"

    def catalogue(self) -> dict[str, Any]:
        return {**super().catalogue(), "type": self.type.__name__}


@dataclass(frozen=True)
class ParameterField(Field):
    """A tensor-valued parameter (or a list of them when ``many``)."""

    type: type = object
    many: bool = False
    #: May it be another model's output or a promoted input (vs. a constant only)?
    allow_nonlinear: bool = True
    #: Registered as a buffer (constant) rather than a trainable parameter.
    buffer: bool = False
    #: the valid values of a constant (literal or ``[Tensors]``) value, every entry
    bounds: Bounds | None = None

    kind = "parameter"

    def catalogue(self) -> dict[str, Any]:
        out = {**super().catalogue(), "type": self.type.__name__, "many": self.many}
        if self.bounds is not None:
            out["range"] = str(self.bounds)
        return out


@dataclass(frozen=True)
class OptionField(Field):
    """A plain setting: ``type`` is str, int, float or bool; ``many`` makes it a list."""

    type: type = str
    many: bool = False
    choices: tuple[str, ...] = ()
    #: the valid values of a numeric option (each entry of a list)
    bounds: Bounds | None = None

    def catalogue(self) -> dict[str, Any]:
        out = {**super().catalogue(), "type": self.type.__name__, "many": self.many}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.bounds is not None:
            out["range"] = str(self.bounds)
        return out


@dataclass(frozen=True)
class ObjectRefField(Field):
    """Other blocks of ``section`` (``Models`` or ``Data``) by name; built on reading."""

    many: bool = False
    section: str = "Models"

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "model" if self.section == "Models" else "data"

    def catalogue(self) -> dict[str, Any]:
        return {**super().catalogue(), "type": f"[{self.section}] name", "many": self.many}


#: The roles a derived variable can take (see :func:`derived`).
DERIVED_ROLES = ("input", "output", "replaces")


@dataclass(frozen=True)
class Derived:
    """A variable a class names after the variable of one of its options.

    Not an option: HIT cannot set it (unless ``renamed_by`` names an option that
    does). Declared in the class's ``derives`` tuple with :func:`derived`; the
    class builds the name with :meth:`neml2.models.Model.derived_name` (or
    :func:`derived_name`), which refuses a derivation the class does not declare,
    so the catalogue (``neml2-syntax``) lists exactly what the code derives.
    """

    #: the naming rule (``neml2.models._naming``: HISTORY, HISTORY_2, RATE, RESIDUAL)
    rule: NamingRule
    #: the option whose variable name (or list of names) the name derives from
    source: str
    #: "input" or "output" of the model, or "replaces": it takes the source
    #: variable's place (input or output as the source is)
    role: str = "input"
    #: the tensor type, when it is not the source variable's type
    type: type | None = None
    doc: str = ""
    #: an option that, when set (non-empty), gives the name instead
    renamed_by: str | None = None
    #: when the variable exists, in words (e.g. "rate_form = true"); "" for always
    when: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.rule.key, self.source)

    @property
    def name(self) -> str:
        """The derived name in the catalogue's notation: ``<source>_rate``."""
        return self.rule.placeholder(self.source)

    def catalogue(self, fields: dict[str, Field]) -> dict[str, Any]:
        typ = self.type
        src = fields.get(self.source)
        if typ is None and isinstance(src, VariableField):
            typ = src.type
        out: dict[str, Any] = {
            "name": self.name,
            "from": self.source,
            "rule": self.rule.key,
            "kind": self.role,
            "type": typ.__name__ if typ is not None else None,
            "doc": self.doc or self.rule.describe(f"<{self.source}>"),
        }
        if isinstance(src, OptionField) and src.many:
            out["each"] = True  # one derived variable per name the list option holds
        if self.renamed_by:
            out["renamed_by"] = self.renamed_by
        if self.when:
            out["when"] = self.when
        return out


def derived(
    rule: NamingRule,
    source: str,
    *,
    output: bool = False,
    replaces: bool = False,
    type: type | None = None,
    doc: str = "",
    renamed_by: str | None = None,
    when: str = "",
) -> Derived:
    """Declare that a class derives a variable name from option *source* by *rule*.

    Args:
        rule: the naming rule (``HISTORY``, ``HISTORY_2``, ``RATE``, ``RESIDUAL``).
        source: the option holding the variable name (or names) it derives from.
        output: the derived variable is an output (default: an input).
        replaces: it takes the source variable's place instead (``rate_form``).
        type: its tensor type when not the source variable's.
        doc: what it is, when the rule's general meaning is not enough.
        renamed_by: an option that names it instead when set.
        when: the condition under which it exists, in words.

    Returns:
        The declaration, for the class's ``derives`` tuple.
    """
    role = "replaces" if replaces else "output" if output else "input"
    return Derived(rule, source, role, type, doc, renamed_by, when)


def input(name: str, type: type, default: str | None = None, *, doc: str = "") -> VariableField:
    """Declare an input variable field (the built-in models' form).

    Args:
        name: The HIT option name.
        type: The variable's tensor type.
        default: The default variable name; ``None`` (the default) means *name*.
        doc: A one-line description, shown in the syntax catalogue.

    Returns:
        The field, for a class's ``fields`` tuple.
    """
    return VariableField(name, doc, name if default is None else default, type=type)


def output(name: str, type: type, default: str | None = None, *, doc: str = "") -> VariableField:
    """Declare an output variable field (the built-in models' form).

    Args:
        name: The HIT option name.
        type: The variable's tensor type.
        default: The default variable name; ``None`` (the default) means *name*.
        doc: A one-line description, shown in the syntax catalogue.

    Returns:
        The field, for a class's ``fields`` tuple.
    """
    return VariableField(name, doc, name if default is None else default, type=type, is_output=True)


def parameter(
    name: str,
    type: type,
    default: Any = REQUIRED,
    *,
    doc: str = "",
    many: bool = False,
    allow_nonlinear: bool = True,
    buffer: bool = False,
    bounds: str | Bounds | None = None,
) -> ParameterField:
    """Declare a tensor-valued parameter field (the built-in models' form).

    Its HIT value is a literal, a ``[Tensors]`` name, a model output or a variable (a
    promoted input).

    Args:
        name: The HIT option name.
        type: The parameter's tensor type.
        default: The value when the option is absent; ``REQUIRED`` (the default) makes
            it mandatory.
        doc: A one-line description, shown in the syntax catalogue.
        many: Whether the option takes a list of values.
        allow_nonlinear: Whether the value may be a model output or a variable (default
            True).
        buffer: Register the value as a buffer (constant) rather than a trainable
            parameter.
        bounds: The interval every entry of a constant value must lie in (see
            :class:`Bounds`: ``"(0, inf)"`` positive, ``"[0, inf)"`` non-negative),
            checked at load; a variable or another model's output is not checked there.

    Returns:
        The field, for a class's ``fields`` tuple.
    """
    return ParameterField(
        name,
        doc,
        default,
        type=type,
        many=many,
        allow_nonlinear=allow_nonlinear,
        buffer=buffer,
        bounds=_bounds(bounds),
    )


def option(
    name: str,
    type: type = str,
    default: Any = REQUIRED,
    *,
    doc: str = "",
    many: bool = False,
    choices: Sequence[str] = (),
    formerly: Sequence[str] = (),
    bounds: str | Bounds | None = None,
) -> OptionField:
    """Declare a plain (non-tensor) setting field.

    Args:
        name: The HIT option name.
        type: ``str`` (the default), ``int``, ``float`` or ``bool``.
        default: The value when the option is absent; ``REQUIRED`` (the default) makes
            it mandatory.
        doc: A one-line description, shown in the syntax catalogue.
        many: Whether the option takes a list of values.
        choices: The accepted values, if restricted.
        formerly: Reference spellings of the option, answered with its name ("did you
            mean").
        bounds: For an ``int`` or ``float`` option, the interval its value (each value
            of a list) must lie in, in interval notation (see :class:`Bounds`):
            ``"[1, inf)"``, ``"(0, inf)"``, ``"[0, 1)"``.

    Returns:
        The field, for a class's ``fields`` tuple.
    """
    if bounds is not None and type not in (int, float):
        raise TypeError(f"option '{name}': bounds apply to int and float options only")
    return OptionField(
        name,
        doc,
        default,
        type=type,
        many=many,
        choices=tuple(choices),
        formerly=tuple(formerly),
        bounds=_bounds(bounds),
    )


def model_ref(name: str, default: Any = REQUIRED, *, doc: str = "", many: bool = False):
    """Declare a field naming other ``[Models]`` block(s) this one is built from.

    The built models are passed to the constructor in place of the names.

    Args:
        name: The HIT option name.
        default: The value when the option is absent; ``REQUIRED`` (the default) makes
            it mandatory.
        doc: A one-line description, shown in the syntax catalogue.
        many: Whether the option takes a list of block names.

    Returns:
        (ObjectRefField): The field, for a class's ``fields`` tuple.
    """
    return ObjectRefField(name, doc, default, many=many, section="Models")


def data_ref(name: str, default: Any = REQUIRED, *, doc: str = ""):
    """Declare a field naming a ``[Data]`` block (e.g. a CubicCrystal) this one reads.

    The built object is passed to the constructor in place of the name.

    Args:
        name: The HIT option name.
        default: The value when the option is absent; ``REQUIRED`` (the default) makes
            it mandatory.
        doc: A one-line description, shown in the syntax catalogue.

    Returns:
        (ObjectRefField): The field, for a class's ``fields`` tuple.
    """
    return ObjectRefField(name, doc, default, section="Data")


# ------------------------------------------------------------------ resolution


@dataclass(frozen=True)
class NonlinearParameter:
    """A parameter given by a variable rather than a constant.

    Attributes:
        variable (str): The variable; it becomes an input of the host model.
        provider (str | None): The ``[Models]`` block providing the variable, pulled
            into the enclosing composition when given; ``None`` for a free input.
    """

    variable: str
    provider: str | None = None


@dataclass
class Schema:
    """The ordered fields of a class (its own plus inherited ones) and the variable
    names it derives (:class:`Derived`)."""

    fields: tuple[Field, ...] = ()
    derived: tuple[Derived, ...] = ()
    by_name: dict[str, Field] = field(init=False)
    #: a reference spelling (``Field.formerly``) -> the field it names
    by_former_name: dict[str, Field] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        self.by_former_name = {}
        for f in self.fields:
            if f.name in self.by_name:
                raise TypeError(f"field '{f.name}' is declared twice")
            self.by_name[f.name] = f
        for f in self.fields:
            for old in f.formerly:
                if old in self.by_name or old in self.by_former_name:
                    raise TypeError(f"'{old}' is an option or a former spelling twice")
                self.by_former_name[old] = f

    def check_derived(self, owner: str) -> None:
        """A TypeError when a ``derives`` entry of class *owner* names no option.

        Checked on use (not in :meth:`of`): an abstract base may declare derivations
        whose options its registered subclasses add.
        """
        for d in self.derived:
            for opt in (d.source, d.renamed_by):
                if opt is not None and opt not in self.by_name:
                    raise TypeError(f"{owner}: derived '{d.name}' refers to '{opt}', no option")
            if d.role not in DERIVED_ROLES:
                raise TypeError(f"{owner}: derived '{d.name}': role '{d.role}' is not valid")

    @classmethod
    def of(cls, klass: type) -> Schema:
        """Merge ``fields`` and ``derives`` along the MRO (base-class entries first;
        subclasses override a field by name, a derivation by rule and source)."""
        merged: dict[str, Field] = {}
        derives: dict[tuple[str, str], Derived] = {}
        for k in reversed(klass.__mro__):
            hit_schema = k.__dict__.get("hit")
            own = getattr(hit_schema, "fields", ()) if hit_schema is not None else ()
            for f in (*k.__dict__.get("fields", ()), *own):
                merged[f.name] = f
            for d in k.__dict__.get("derives", ()):
                derives[d.key] = d
        return cls(tuple(merged.values()), tuple(derives.values()))

    def names(self) -> list[str]:
        return list(self.by_name)

    def former_spelling(self, name: str) -> str | None:
        """`` (did you mean 'ours'? 'name' is the reference NEML2's older spelling)``
        when *name* is a reference spelling of one of the options, else None."""
        f = self.by_former_name.get(name)
        if f is None:
            return None
        return f" (did you mean '{f.name}'? '{name}' is the reference NEML2's older spelling)"

    def fill_defaults(self, values: dict[str, Any], where: str) -> dict[str, Any]:
        """Check Python keyword values against the schema and add defaults."""
        unknown = [k for k in values if k not in self.by_name]
        if unknown:
            hint = self.former_spelling(unknown[0]) or ""
            raise FatalError(
                f"{where}: unknown option(s) {', '.join(unknown)}{hint}; "
                f"accepted: {', '.join(self.names())}"
            )
        out = {}
        for f in self.fields:
            if f.name in values:
                out[f.name] = values[f.name]
                bad = out_of_range(f, values[f.name])
                if bad is not None:
                    raise FatalError(
                        f"{where}: option '{f.name}' = {bad[0]} is out of range: {bad[1]}"
                    )
            elif f.required:
                raise FatalError(f"{where}: missing required option '{f.name}' ({f.doc})")
            else:
                out[f.name] = f.default
        return out

    def read_hit(self, node: hit.Node, ctx: InputFile, ignore: Iterable[str] = ("type",)):
        """Convert a HIT block into keyword values (strict; errors name file:line)."""
        skip = set(ignore)
        values: dict[str, Any] = {}
        for p in node.params():
            if p.name in skip:
                continue
            f = self.by_name.get(p.name)
            if f is None:
                hint = self.former_spelling(p.name)
                if hint is not None:  # name every older spelling of the block at once
                    others = [
                        f"'{q.name}' ({q.location}) -> '{self.by_former_name[q.name].name}'"
                        for q in node.params()
                        if q.name in self.by_former_name and q.name != p.name
                    ]
                    also = f"; rename also {', '.join(others)}" if others else ""
                    raise FatalError(
                        f"{p.location}: unknown option '{p.name}' in [{node.fullpath}]{hint}{also}"
                    )
                close = get_close_matches(p.name, self.names(), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise FatalError(
                    f"{p.location}: unknown option '{p.name}' in [{node.fullpath}]{hint}; "
                    f"accepted: {', '.join(self.names()) or '(none)'}"
                )
            values[p.name] = _convert(f, p, ctx)
            bad = out_of_range(f, values[p.name])
            if bad is not None:
                value, rule = bad
                raw = p.raw.strip()
                if len(raw.split()) == 1 and _is_number(raw):
                    value = raw  # as written: 1e-8, not 1e-08
                elif raw != value:
                    value = f"'{raw}': {value}"
                raise FatalError(
                    f"{p.location}: [{node.fullpath}] option '{p.name}' = {value} is out of "
                    f"range: {rule}"
                )
        for f in self.fields:
            if f.required and f.name not in values:
                raise FatalError(
                    f"{node.location}: [{node.fullpath}] is missing the required option "
                    f"'{f.name}' ({f.doc or f.kind})"
                )
        return values


def out_of_range(f: Field, value: Any) -> tuple[str, str] | None:
    """``("-1", "it must be >= 1")``, the first entry outside field *f*'s ``bounds`` and
    the rule, when a constant *value* (an option's number or list of numbers, a
    parameter's number, tensor, typed tensor or list of them) has one; else None (no
    bounds, or a value not known at load: a variable name, another model's output)."""
    bounds = getattr(f, "bounds", None)
    if bounds is None:
        return None
    for v in value if isinstance(value, list | tuple) else [value]:
        if isinstance(v, bool) or not isinstance(v, int | float | torch.Tensor | TensorWrapper):
            continue
        bad = bounds.first_outside(v)
        if bad is not None:
            finite = " and finite" if bad.split()[0] in ("inf", "-inf") else ""
            return bad, f"it must be {bounds.describe()}{finite}"
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def derived_name(cls: type, rule: NamingRule, source: str, name: str) -> str:
    """``rule(name)``, the variable *cls* derives from option *source*'s variable *name*.

    Args:
        cls: the class deriving the name; it must declare ``derived(rule, source)``
            in its ``derives`` (that is what ``neml2-syntax`` lists).
        rule: the naming rule.
        source: the option *name* came from.
        name: the source variable's name.

    Returns:
        The derived name, e.g. ``"stress_residual"``.

    Raises:
        TypeError: the class does not declare the derivation (a programming error:
            the catalogue would not list the name).
    """
    schema = Schema.of(cls)
    schema.check_derived(cls.__name__)
    if (rule.key, source) not in {d.key for d in schema.derived}:
        raise TypeError(
            f"{cls.__name__} derives '{rule.placeholder(source)}' without declaring it: add "
            f"derived({rule.key.upper()}, '{source}', ...) to {cls.__name__}.derives"
        )
    return rule(name)


def catalogue(cls: type) -> dict[str, Any]:
    """Machine-readable description of a registered class (``neml2-syntax``).

    Keys: ``type``, ``section``, ``doc`` (the class docstring, dedented),
    ``fields`` (every option: see ``Field.catalogue``) and ``derived``: the
    variable names the class derives from its options' variables, from its
    ``derives`` declarations and from variable defaults built by a naming rule
    (``"{back_stress}_rate"``).
    """
    schema = Schema.of(cls)
    schema.check_derived(cls.__name__)
    derived_entries = [d.catalogue(schema.by_name) for d in schema.derived]
    for f in schema.fields:
        found = rule_of_template(f.default) if isinstance(f.default, str) else None
        if isinstance(f, VariableField) and found is not None:
            rule, source = found
            derived_entries.append(
                {
                    "name": rule.placeholder(source),
                    "from": source,
                    "rule": rule.key,
                    "kind": f.kind,
                    "type": f.type.__name__,
                    "doc": f.doc,
                    "renamed_by": f.name,
                }
            )
    return {
        "type": cls.__name__,
        "section": getattr(cls, "SECTION", "?"),
        "doc": inspect.cleandoc(cls.__doc__ or ""),
        "fields": [f.catalogue() for f in schema.fields],
        "derived": derived_entries,
    }


def _convert(f: Field, p: hit.Param, ctx: InputFile) -> Any:
    from neml2 import hit as _hit

    try:
        if isinstance(f, VariableField):
            return p.as_str()
        if isinstance(f, OptionField):
            if f.many:
                vals = p.as_list(f.type)
            else:
                vals = [p.as_str() if f.type is str else _scalar(p, f.type)]
            for v in vals:
                if f.type is float and v != v:  # NaN: no setting means "not a number"
                    raise FatalError(f"{p.location}: option '{p.name}' = '{p.raw}' is NaN")
                if f.choices and v not in f.choices:
                    raise FatalError(
                        f"{p.location}: option '{p.name}' = '{v}' is not one of "
                        f"{', '.join(f.choices)}"
                    )
            return vals if f.many else vals[0]
        if isinstance(f, ObjectRefField):
            names = p.as_list(str)
            objs = [ctx.object(f.section, n, p.location) for n in names]
            return objs if f.many else _one(objs, p)
        if isinstance(f, ParameterField):
            return ctx.resolve_parameter(f, p)
    except _hit.HitValueError as e:
        raise FatalError(str(e)) from e
    raise TypeError(f"unhandled field kind {type(f).__name__}")  # pragma: no cover


def _scalar(p: hit.Param, kind: type) -> Any:
    return {int: p.as_int, float: p.as_float, bool: p.as_bool}[kind]()


def _one(objs: list[Any], p: hit.Param) -> Any:
    if len(objs) != 1:
        raise FatalError(f"{p.location}: option '{p.name}' takes one name, got {len(objs)}")
    return objs[0]
