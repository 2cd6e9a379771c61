"""A parsed input file and everything built from it: tensors, data, models.

``InputFile`` is the factory every ``from_hit`` receives. It evaluates
``[Tensors]`` lazily (each block once, dependencies first, cycles reported),
builds ``[Models]`` / ``[Data]`` blocks on demand and caches them by name, and
resolves parameter values. Every error is a ``FatalError`` that starts with the
``file:line:column`` of the option or block at fault.
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence
from contextlib import contextmanager
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import numpy as np
import torch

from neml2 import hit, tensors
from neml2.models._registry import lookup, registered_types
from neml2.models._schema import NonlinearParameter, ParameterField
from neml2.tensors import FatalError, TensorWrapper


def suggest(word: str, choices: Sequence[str]) -> str:
    """' (did you mean 'a', 'b'?)' or ''."""
    close = get_close_matches(word, list(choices), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


@contextmanager
def default_dtype(dtype: torch.dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def _namespace() -> dict[str, Any]:
    """What a ``[Tensors] type = Python`` expression sees (plus other [Tensors] names)."""
    ns: dict[str, Any] = {n: getattr(tensors, n) for n in tensors.__all__}
    ns.update(torch=torch, math=math, np=np, numpy=np)
    return ns


def _names_in(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names_in(c)
    return out


class InputFile:
    """A parsed HIT input and the objects built from it."""

    def __init__(
        self,
        root: hit.Node,
        path: str | Path = "<input>",
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
    ):
        self.root = root
        self.path = str(path)
        self.dtype = dtype
        self.device = torch.device(device)
        self._tensors: dict[str, Any] = {}
        self._objects: dict[str, Any] = {}
        self._building: list[str] = []
        self.check_settings()

    # ------------------------------------------------------------ sections
    def section(self, name: str) -> hit.Node | None:
        return self.root.find(name)

    def block(self, section: str, name: str, where: Any = None) -> hit.Node:
        """``[section]/name``; a FatalError at *where* (or the section) if absent."""
        sec = self.section(section)
        node = sec.find(name) if sec is not None else None
        if node is None or node.parent is not sec:
            defined = [c.name for c in sec.children()] if sec is not None else []
            loc = where or (sec.location if sec is not None else self.path)
            raise FatalError(
                f"{loc}: no block named '{name}' in [{section}]{suggest(name, defined)}; "
                f"defined: {', '.join(defined) or '(none)'}"
            )
        return node

    def model_block(self, name: str, where: Any = None) -> hit.Node:
        return self.block("Models", name, where)

    def has_block(self, section: str, name: str) -> bool:
        sec = self.section(section)
        node = sec.find(name) if sec is not None else None
        return node is not None and node.parent is sec

    # ------------------------------------------------------------ [Settings]
    def example_batch_shape(self, variable: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``[Settings]/example_batch_shape/<variable> = '(dyn...; sub...)'``, parsed.

        Returns ``(dynamic_shape, sub_batch_shape)``: the shape a driver gives a value
        it has to invent (a zero-filled history input), and a trace hint for
        ``neml2-compile``. ``None`` when the variable is not listed.
        """
        node = self.root.find("Settings/example_batch_shape")
        p = node.param(variable) if node is not None else None
        if p is None:
            return None
        text = p.as_str().strip()
        if not (text.startswith("(") and text.endswith(")")):
            raise FatalError(f"{p.location}: expected '(dynamic...; sub...)', got '{text}'")
        parts = text[1:-1].split(";")
        if len(parts) > 2:
            raise FatalError(f"{p.location}: at most one ';' in '{text}'")
        try:
            shapes = [tuple(int(x) for x in part.replace(",", " ").split()) for part in parts]
        except ValueError as e:
            raise FatalError(f"{p.location}: sizes must be integers in '{text}'") from e
        return shapes[0], shapes[1] if len(shapes) == 2 else ()

    def check_settings(self) -> None:
        """Reject unknown [Settings] entries (instead of silently ignoring them)."""
        sec = self.section("Settings")
        if sec is None:
            return
        known = {"example_batch_shape"}
        for p in sec.params():
            raise FatalError(f"{p.location}: unknown setting '{p.name}'; known: {', '.join(known)}")
        for c in sec.children():
            if c.name not in known:
                raise FatalError(
                    f"{c.location}: unknown [Settings] block '{c.name}'; known: {', '.join(known)}"
                )

    # ------------------------------------------------------------ [Tensors]
    def has_tensor(self, name: str) -> bool:
        return self.has_block("Tensors", name)

    def tensor(self, name: str, where: Any = None) -> Any:
        """The value of ``[Tensors]/name`` (evaluated once, in float64, on our device)."""
        if name in self._tensors:
            return self._tensors[name]
        node = self.block("Tensors", name, where)
        key = f"Tensors/{name}"
        if key in self._building:
            chain = " -> ".join([*self._building[self._building.index(key) :], key])
            raise FatalError(f"{node.location}: [Tensors] refer to each other in a cycle: {chain}")
        self._building.append(key)
        try:
            value = self._evaluate_tensor(node)
        finally:
            self._building.pop()
        self._tensors[name] = value
        return value

    def _evaluate_tensor(self, node: hit.Node) -> Any:
        tp = node.param("type")
        if tp is None:
            raise FatalError(f"{node.location}: [Tensors/{node.name}] has no 'type' option")
        kind = tp.as_str()
        if kind != "Python":
            builder = lookup(kind)
            if builder is None or not hasattr(builder, "tensor_from_hit"):
                raise FatalError(
                    f"{tp.location}: unknown tensor type '{kind}' in [Tensors/{node.name}]"
                    f"{suggest(kind, ['Python', *registered_types()])}"
                )
            return builder.tensor_from_hit(node, self)
        expr = node.param("expr")
        if expr is None:
            raise FatalError(f"{node.location}: [Tensors/{node.name}] (Python) needs 'expr'")
        unknown = [p.name for p in node.params() if p.name not in ("type", "expr")]
        if unknown:
            raise FatalError(
                f"{node.param(unknown[0]).location}: unknown option '{unknown[0]}' in "
                f"[Tensors/{node.name}]; accepted: type, expr"
            )
        text = expr.as_str().strip()
        try:
            code = compile(text, f"{expr.location}", "eval")
        except SyntaxError as e:
            raise FatalError(f"{expr.location}: invalid Python expression: {e.msg}") from e
        ns = _namespace()
        for n in sorted(_names_in(code)):
            if n not in ns and self.has_tensor(n):
                ns[n] = self.tensor(n, expr.location)
        with default_dtype(torch.float64):
            try:
                value = eval(code, ns)
            except FatalError:
                raise
            except Exception as e:
                raise FatalError(
                    f"{expr.location}: [Tensors/{node.name}] failed: {type(e).__name__}: {e}"
                ) from e
        return self._place(value)

    def _place(self, value: Any) -> Any:
        if isinstance(value, TensorWrapper):
            if value.data.is_floating_point():
                return value.to(dtype=self.dtype, device=self.device)
            return value.to(device=self.device)
        if isinstance(value, torch.Tensor):
            if value.is_floating_point():
                return value.to(dtype=self.dtype, device=self.device)
            return value.to(device=self.device)
        return value

    # ------------------------------------------------------------ objects
    def object(self, section: str, name: str, where: Any = None) -> Any:
        """Build (once) the registered object ``[section]/name``."""
        key = f"{section}/{name}"
        if key in self._objects:
            return self._objects[key]
        node = self.block(section, name, where)
        if key in self._building:
            chain = " -> ".join([*self._building[self._building.index(key) :], key])
            raise FatalError(f"{node.location}: blocks refer to each other in a cycle: {chain}")
        tp = node.param("type")
        if tp is None:
            raise FatalError(f"{node.location}: [{key}] has no 'type' option")
        cls = lookup(tp.as_str())
        if cls is None or not hasattr(cls, "from_hit"):
            known = registered_types()
            raise FatalError(
                f"{tp.location}: unknown type '{tp.as_str()}' in [{key}]"
                f"{suggest(tp.as_str(), known)}; {len(known)} types are registered "
                "(list them with `neml2-syntax`)"
            )
        self._building.append(key)
        try:
            obj = cls.from_hit(node, self)
        finally:
            self._building.pop()
        try:
            obj.hit_name = name
        except AttributeError:  # pragma: no cover - objects that refuse attributes
            pass
        self._objects[key] = obj
        return obj

    def model(self, name: str, where: Any = None) -> Any:
        return self.object("Models", name, where)

    def top_model(self, name: str, where: Any = None) -> Any:
        """Model *name*, composed with the models that provide its parameters (if any)."""
        from neml2.models._composed import ComposedModel, with_providers

        model = self.model(name, where)
        providers = [p for p in getattr(model, "nl_providers", {}).values() if p is not None]
        if not providers:
            return model.to(dtype=self.dtype, device=self.device)
        composed = ComposedModel(
            models=with_providers([model], self), _where=f"{where or self.path}: model '{name}'"
        )
        composed.hit_name = name
        return composed.to(dtype=self.dtype, device=self.device)

    def data(self, name: str, where: Any = None) -> Any:
        return self.object("Data", name, where)

    # ------------------------------------------------------------ parameters
    def resolve_parameter(self, f: ParameterField, p: hit.Param) -> Any:
        """A parameter's HIT value: literal(s), [Tensors] name, model output or variable."""
        tokens = p.as_list(str)
        if not tokens:
            raise FatalError(f"{p.location}: option '{p.name}' is empty")
        numbers = _floats(tokens)
        if numbers is not None:
            if f.many:
                return [self._literal(f.type, [x], p) for x in numbers]
            return self._literal(f.type, numbers, p)
        if f.many:
            return [self._one_parameter(f, t, p) for t in tokens]
        if len(tokens) != 1:
            raise FatalError(
                f"{p.location}: option '{p.name}' must be numbers or one name, got '{p.raw}'"
            )
        return self._one_parameter(f, tokens[0], p)

    def _literal(self, typ: type, numbers: list[float], p: hit.Param) -> Any:
        t = torch.tensor(numbers, dtype=self.dtype, device=self.device)
        base = getattr(typ, "BASE_SHAPE", ())
        try:
            if base == ():
                if len(numbers) != 1:
                    raise ValueError(f"expected one number, got {len(numbers)}")
                return typ(t[0])
            return typ(t.reshape(base))
        except Exception as e:
            raise FatalError(
                f"{p.location}: option '{p.name}' = '{p.raw}' is not a valid "
                f"{typ.__name__} literal: {e}"
            ) from e

    def _one_parameter(self, f: ParameterField, token: str, p: hit.Param) -> Any:
        number = _floats([token])
        if number is not None:
            return self._literal(f.type, number, p)
        if self.has_tensor(token):
            value = self.tensor(token, p.location)
            if isinstance(value, TensorWrapper) and not isinstance(value, f.type):
                value = _cast(value, f.type, p)
            return value
        if not f.allow_nonlinear:
            raise FatalError(
                f"{p.location}: option '{p.name}' = '{token}' is neither a number nor a "
                f"[Tensors] name{suggest(token, self._tensor_names())}"
            )
        if self.has_block("Models", token):
            provider = self.model(token, p.location)
            outs = list(provider.output_spec)
            if len(outs) != 1:
                raise FatalError(
                    f"{p.location}: option '{p.name}' names model '{token}', which has "
                    f"{len(outs)} outputs ({', '.join(outs)}); a parameter needs exactly one"
                )
            return NonlinearParameter(variable=outs[0], provider=token)
        return NonlinearParameter(variable=token)

    def _tensor_names(self) -> list[str]:
        sec = self.section("Tensors")
        return [c.name for c in sec.children()] if sec is not None else []


def _floats(tokens: list[str]) -> list[float] | None:
    try:
        return [float(t) for t in tokens]
    except ValueError:
        return None


def _cast(value: TensorWrapper, typ: type, p: hit.Param) -> Any:
    if tuple(value.base_shape) != tuple(getattr(typ, "BASE_SHAPE", value.base_shape)):
        raise FatalError(
            f"{p.location}: option '{p.name}' needs a {typ.__name__}, but the [Tensors] value "
            f"is a {type(value).__name__} of base shape {tuple(value.base_shape)}"
        )
    return typ(value)
