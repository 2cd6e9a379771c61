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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

from neml2.tensors import FatalError

if TYPE_CHECKING:
    from neml2 import hit
    from neml2.models._input_file import InputFile


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Marks a field without a default: HIT must set it.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Field:
    """One accepted option. ``name`` is the HIT option and the Python keyword."""

    name: str
    doc: str = ""
    default: Any = REQUIRED
    #: where the model keeps the value: the instance attribute holding a variable's
    #: resolved name or an option's value, the name a parameter is registered under
    attr: str | None = None

    kind = "option"

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def catalogue(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "doc": self.doc,
            "required": self.required,
            "default": None if self.required else _plain(self.default),
        }


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

    kind = "parameter"

    def catalogue(self) -> dict[str, Any]:
        return {**super().catalogue(), "type": self.type.__name__, "many": self.many}


@dataclass(frozen=True)
class OptionField(Field):
    """A plain setting: ``type`` is str, int, float or bool; ``many`` makes it a list."""

    type: type = str
    many: bool = False
    choices: tuple[str, ...] = ()

    def catalogue(self) -> dict[str, Any]:
        out = {**super().catalogue(), "type": self.type.__name__, "many": self.many}
        if self.choices:
            out["choices"] = list(self.choices)
        return out


@dataclass(frozen=True)
class ObjectRefField(Field):
    """Other blocks of ``section`` (``Models`` or ``Data``) by name; built on reading."""

    many: bool = False
    section: str = "Models"

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "model" if self.section == "Models" else "data"


def input(name: str, type: type, default: str | None = None, *, doc: str = "") -> VariableField:
    """An input variable; its name defaults to the option name."""
    return VariableField(name, doc, name if default is None else default, type=type)


def output(name: str, type: type, default: str | None = None, *, doc: str = "") -> VariableField:
    """An output variable; its name defaults to the option name."""
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
) -> ParameterField:
    """A tensor-valued parameter (literal, [Tensors] name, model output or promoted input)."""
    return ParameterField(
        name, doc, default, type=type, many=many, allow_nonlinear=allow_nonlinear, buffer=buffer
    )


def option(
    name: str,
    type: type = str,
    default: Any = REQUIRED,
    *,
    doc: str = "",
    many: bool = False,
    choices: Sequence[str] = (),
) -> OptionField:
    """A plain setting."""
    return OptionField(name, doc, default, type=type, many=many, choices=tuple(choices))


def model_ref(name: str, default: Any = REQUIRED, *, doc: str = "", many: bool = False):
    """Other [Models] block(s) this one is built from (the built models are passed in)."""
    return ObjectRefField(name, doc, default, many=many, section="Models")


def data_ref(name: str, default: Any = REQUIRED, *, doc: str = ""):
    """A [Data] block (e.g. a CubicCrystal) this one reads."""
    return ObjectRefField(name, doc, default, section="Data")


# ------------------------------------------------------------------ resolution


@dataclass(frozen=True)
class NonlinearParameter:
    """A parameter given by a variable rather than a constant.

    ``variable`` becomes an input of the host model; ``provider`` (a [Models]
    block name) is pulled into the enclosing composition when given.
    """

    variable: str
    provider: str | None = None


@dataclass
class Schema:
    """The ordered fields of a class (its own plus inherited ones)."""

    fields: tuple[Field, ...] = ()
    by_name: dict[str, Field] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        for f in self.fields:
            if f.name in self.by_name:
                raise TypeError(f"field '{f.name}' is declared twice")
            self.by_name[f.name] = f

    @classmethod
    def of(cls, klass: type) -> Schema:
        """Merge ``fields`` along the MRO (base-class fields first; subclasses override)."""
        merged: dict[str, Field] = {}
        for k in reversed(klass.__mro__):
            hit_schema = k.__dict__.get("hit")
            own = getattr(hit_schema, "fields", ()) if hit_schema is not None else ()
            for f in (*k.__dict__.get("fields", ()), *own):
                merged[f.name] = f
        return cls(tuple(merged.values()))

    def names(self) -> list[str]:
        return list(self.by_name)

    def fill_defaults(self, values: dict[str, Any], where: str) -> dict[str, Any]:
        """Check Python keyword values against the schema and add defaults."""
        unknown = [k for k in values if k not in self.by_name]
        if unknown:
            raise FatalError(
                f"{where}: unknown option(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(self.names())}"
            )
        out = {}
        for f in self.fields:
            if f.name in values:
                out[f.name] = values[f.name]
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
                close = get_close_matches(p.name, self.names(), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise FatalError(
                    f"{p.location}: unknown option '{p.name}' in [{node.fullpath}]{hint}; "
                    f"accepted: {', '.join(self.names()) or '(none)'}"
                )
            values[p.name] = _convert(f, p, ctx)
        for f in self.fields:
            if f.required and f.name not in values:
                raise FatalError(
                    f"{node.location}: [{node.fullpath}] is missing the required option "
                    f"'{f.name}' ({f.doc or f.kind})"
                )
        return values


def catalogue(cls: type) -> dict[str, Any]:
    """Machine-readable description of a registered class (``neml2-syntax``)."""
    return {
        "type": cls.__name__,
        "section": getattr(cls, "SECTION", "?"),
        "doc": (cls.__doc__ or "").strip(),
        "fields": [f.catalogue() for f in Schema.of(cls).fields],
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
