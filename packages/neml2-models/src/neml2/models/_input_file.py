"""A parsed input file and everything built from it: tensors, data, models.

``InputFile`` is the factory every ``from_hit`` receives. It evaluates
``[Tensors]`` lazily (each block once, dependencies first, cycles reported),
builds ``[Models]`` / ``[Data]`` blocks on demand and caches them by name, and
resolves parameter values. Every error is a ``FatalError`` that starts with the
``file:line:column`` of the option or block at fault.
"""

from __future__ import annotations

import math
import re
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from neml2 import hit
from neml2.models import _python_code
from neml2.models._expression_check import parse, suggest
from neml2.models._expression_limits import Tally
from neml2.models._expression_vocabulary import BUILTIN_NAMES, TENSOR_NAMES
from neml2.models._expressions import NoResult, Refused, evaluate
from neml2.models._registry import lookup, plugin_failures, registered_types
from neml2.models._schema import NonlinearParameter, ParameterField
from neml2.models._spellings import former_tensor_hint, former_type_hint
from neml2.tensors import FatalError, TensorWrapper


@contextmanager
def default_dtype(dtype: torch.dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def _one_edit(a: str, b: str) -> bool:
    """Whether *a* and *b* differ by one typo: an insertion, deletion or substitution
    of a character, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i]
    return a[i + 1 :] == b[i + 1 :] or (swapped and a[i + 2 :] == b[i + 2 :])


#: A size written ``N`` in ``[Settings]/example_batch_shape`` (``'(N; 12)'``): the
#: dynamic batch, of any size (:meth:`InputFile.example_batch_shape` returns it as -1).
ANY_SIZE = -1
#: how an ``example_batch_shape`` error shows the accepted form
_FORM = (
    "'(N; 12)': before the ';' the batch (N: any size, or whole numbers), after it the "
    "sub-batch shape (whole numbers; no ';': none)"
)

#: NEML2 v2's ``[Settings]`` options, none of which v3 or neml2 reads, and what replaces each.
_V2_SETTINGS = {
    "default_floating_point_type": (
        "the dtype is chosen when loading: neml2.load_model(..., dtype=torch.float32), "
        "neml2-compile --dtype float32"
    ),
    "default_integer_type": "integer tensors are int64",
    "default_device": (
        "the device is chosen when loading: neml2.load_model(..., device='cuda'), "
        "neml2-compile --device cuda"
    ),
    "machine_precision": "each model that guards a division takes its own option",
    "tolerance": "tolerances are options of the [Solvers] and [Drivers] blocks",
    "tighter_tolerance": "tolerances are options of the [Solvers] and [Drivers] blocks",
    "interop_threads": "set torch.set_num_interop_threads() or OMP_NUM_THREADS",
    "intraop_threads": "set torch.set_num_threads() or OMP_NUM_THREADS",
    "buffer_name_separator": "nested buffer names are joined with '.' (torch's convention)",
    "parameter_name_separator": "nested parameter names are joined with '.' (torch's convention)",
    "disable_jit": "nothing is traced unless asked: neml2.compile(model) or neml2-compile",
}


class InputFile:
    """A parsed HIT input and the objects built from it.

    The factory every ``from_hit`` receives: it evaluates ``[Tensors]`` lazily (each
    block once, dependencies first, cycles reported), builds ``[Models]``, ``[Data]``
    and other blocks on demand and caches them by name.

    Attributes:
        root (hit.Node): The merged HIT tree.
        path (str): The file name, used in error messages.
        dtype (torch.dtype): The floating-point dtype of what is built.
        device (torch.device): The device of what is built.
        allow_python_code (bool): Whether ``[Tensors] type = Python`` expressions run as
            arbitrary Python (the opt-in) instead of by the allow-list interpreter.
        free_inputs (dict[str, list[str]]): Variable -> where a parameter named it and it
            became an input variable (``"file:line:col: option 'yield_stress' = 'abc'"``),
            for the drivers' errors.
    """

    def __init__(
        self,
        root: hit.Node,
        path: str | Path = "<input>",
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        allow_python_code: bool | None = None,
    ):
        """Wrap a parsed HIT tree and check its ``[Settings]``.

        Args:
            root: The merged HIT tree (:func:`neml2.models.load_input` parses one).
            path: The file name used in error messages.
            dtype: The floating-point dtype of the tensors and models built.
            device: The device they are placed on.
            allow_python_code: True: ``[Tensors] type = Python`` expressions run as
                arbitrary Python (this input file can run code: use it only for input
                files you would run as a Python script); False: by the allow-list
                interpreter; None (the default): True only when the environment
                variable ``NEML2_ALLOW_PYTHON_CODE`` is ``1``.

        Raises:
            FatalError: If ``[Settings]`` has an unknown or invalid entry.
        """
        self.root = root
        self.path = str(path)
        self.dtype = dtype
        self.device = torch.device(device)
        self.allow_python_code = _python_code.python_code_allowed(allow_python_code)
        self._expression_tally = Tally()  # elements the [Tensors] expressions made
        self._tensors: dict[str, Any] = {}
        self._objects: dict[str, Any] = {}
        self._building: list[str] = []
        #: variable -> where a parameter named it and it became an input variable
        #: (``"file:line:col: option 'yield_stress' = 'abc'"``), for the drivers' errors
        self.free_inputs: dict[str, list[str]] = {}
        self.check_settings()

    # ------------------------------------------------------------ sections
    def section(self, name: str) -> hit.Node | None:
        """Find a top-level section.

        Args:
            name: The section name (``"Models"``, ``"Tensors"``, ...).

        Returns:
            The section's node, or ``None`` if the file has no such section.
        """
        return self.root.find(name)

    def block(self, section: str, name: str, where: Any = None) -> hit.Node:
        """Find the block ``[section]/name``.

        Args:
            section: The section name.
            name: The block name, a direct child of the section.
            where: The location named by the error (default: the section's, or the file).

        Returns:
            The block's node.

        Raises:
            FatalError: If there is no such block; the message lists the defined blocks.
        """
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
        """Find the block ``[Models]/name`` (see :meth:`block`).

        Args:
            name: The block name.
            where: The location named by the error.

        Returns:
            The block's node.

        Raises:
            FatalError: If there is no such block.
        """
        return self.block("Models", name, where)

    def has_block(self, section: str, name: str) -> bool:
        """Whether the block ``[section]/name`` exists.

        Args:
            section: The section name.
            name: The block name, a direct child of the section.

        Returns:
            True if the section has such a block.
        """
        sec = self.section(section)
        node = sec.find(name) if sec is not None else None
        return node is not None and node.parent is sec

    # ------------------------------------------------------------ [Settings]
    def example_batch_shape(self, variable: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Read the example batch shape of a variable from ``[Settings]``.

        The setting is ``[Settings]/example_batch_shape/<variable> = '(dyn...; sub...)'``,
        or the uniform ``[Settings]/example_batch_shape = '(...)'``, the same for every
        variable. Sizes are whole numbers, separated by spaces or commas; before the
        ``;`` (the batch) a size may be ``N``, the dynamic batch of any size:
        ``'(N; 12)'`` is a batch of any size with 12 sub-batch entries (slip systems) per
        point, ``'(1000; 12)'`` the same with 1000 points as the example.

        Args:
            variable: The variable name.

        Returns:
            ``(dynamic_shape, sub_batch_shape)``: the shape a driver gives a value it has
                to invent (a zero-filled history input; :data:`ANY_SIZE`, -1, for an
                ``N``), and a trace hint for ``neml2-compile``; the sub-batch shape is
                ``()`` when the spec has no ``;``. ``None`` when the variable is not
                listed.

        Raises:
            FatalError: If the spec is not ``(...)``, has more than one ``;``, or a size
                that is neither a whole number nor (before the ``;``) ``N``; the message
                shows the accepted form.
        """
        settings = self.root.find("Settings")
        uniform = settings.param("example_batch_shape") if settings is not None else None
        node = self.root.find("Settings/example_batch_shape")
        if uniform is not None:  # the uniform form: one spec for every variable
            p = uniform
        else:
            p = node.param(variable) if node is not None else None
        if p is None:
            return None
        text = p.as_str().strip()
        if not (text.startswith("(") and text.endswith(")")):
            raise FatalError(
                f"{p.location}: expected '(batch...; sub...)' such as {_FORM}, got '{text}'"
            )
        parts = text[1:-1].split(";")
        if len(parts) > 2:
            raise FatalError(f"{p.location}: at most one ';' in '{text}'")
        shapes = []
        for region, part in enumerate(parts):
            sizes = []
            for word in part.replace(",", " ").split():
                if word == "N" and region == 0:
                    sizes.append(ANY_SIZE)
                elif word.isascii() and word.isdigit():
                    sizes.append(int(word))
                else:
                    where = "after the ';' (the sub-batch)" if region else "in the batch"
                    raise FatalError(
                        f"{p.location}: '{word}' {where} of '{text}' is not a size; the form "
                        f"is {_FORM}"
                    )
            shapes.append(tuple(sizes))
        return shapes[0], shapes[1] if len(shapes) == 2 else ()

    def dynamic_batch(self) -> bool:
        """``[Settings]/dynamic_batch`` (the reference's; default true).

        Every route here takes any batch size, so the setting changes no result: an
        artifact is always compiled with a dynamic batch axis, and ``neml2-compile``
        says so when the file asks for a static one (``false``).

        Returns:
            The setting's value (True when absent).

        Raises:
            FatalError: If the value is not a boolean (naming file:line).
        """
        sec = self.section("Settings")
        p = sec.param("dynamic_batch") if sec is not None else None
        if p is None:
            return True
        text = p.as_str().strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise FatalError(f"{p.location}: dynamic_batch = '{p.as_str()}': expected true or false")

    def check_settings(self) -> None:
        """Reject unknown [Settings] entries (instead of silently ignoring them).

        The reference's NEML2 v2 settings (``default_floating_point_type``, threads,
        tolerances, ...) are refused with what replaces each here.

        Raises:
            FatalError: If an entry is unknown or a NEML2 v2 setting, a value is
                invalid, or ``example_batch_shape`` is given in both forms.
        """
        sec = self.section("Settings")
        if sec is None:
            return
        known = {"example_batch_shape", "dynamic_batch"}
        for p in sec.params():
            if p.name in _V2_SETTINGS:
                raise FatalError(
                    f"{p.location}: '{p.name}' is a setting of NEML2 v2, which neml2 (like "
                    f"NEML2 v3) does not read from [Settings]: {_V2_SETTINGS[p.name]}"
                )
            if p.name not in known:
                raise FatalError(
                    f"{p.location}: unknown setting '{p.name}'{suggest(p.name, known)}; "
                    f"known: {', '.join(sorted(known))}"
                )
        self.dynamic_batch()  # its value is checked now, not at first use
        for c in sec.children():
            if c.name not in known:
                raise FatalError(
                    f"{c.location}: unknown [Settings] block '{c.name}'; known: {', '.join(known)}"
                )
        uniform, per_variable = sec.param("example_batch_shape"), sec.find("example_batch_shape")
        if uniform is not None and per_variable is not None:
            raise FatalError(
                f"{uniform.location}: [Settings] gives example_batch_shape both as one spec for "
                f"every variable and as a block per variable ({per_variable.location}); the two "
                "forms are mutually exclusive"
            )
        if uniform is not None:
            self.example_batch_shape("")  # the spec is checked now, not at first use

    # ------------------------------------------------------------ [Tensors]
    def has_tensor(self, name: str) -> bool:
        """Whether ``[Tensors]`` defines a block *name*.

        Args:
            name: The block name.

        Returns:
            True if the block exists.
        """
        return self.has_block("Tensors", name)

    def tensor(self, name: str, where: Any = None) -> Any:
        """Evaluate the block ``[Tensors]/name``.

        The block is evaluated once (the blocks it refers to first) and cached.

        Args:
            name: The block name.
            where: The location named by the error if the block does not exist.

        Returns:
            The value (usually a typed tensor, at ``(*B, *base)``), on this file's dtype
                and device.

        Raises:
            FatalError: If the block does not exist, has no or an unknown ``type``, the
                ``[Tensors]`` blocks refer to each other in a cycle, or evaluation fails.
        """
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
        builder = lookup(kind)
        if builder is None or not hasattr(builder, "tensor_from_hit"):
            known = [t for t in registered_types() if hasattr(lookup(t), "tensor_from_hit")]
            hint = former_tensor_hint(kind) or suggest(kind, known)
            raise FatalError(
                f"{tp.location}: unknown tensor type '{kind}' in [Tensors/{node.name}]{hint}; "
                f"the [Tensors] types: {', '.join(known)}"
            )
        return builder.tensor_from_hit(node, self)

    def evaluate_python(self, node: hit.Node) -> Any:
        """Evaluate a ``[Tensors]`` block of ``type = Python``.

        See :class:`neml2.models.python_tensors.Python`. The block's ``expr`` is
        parsed, then evaluated in float64 by the allow-list interpreter
        (:mod:`neml2.models._expressions`), or, when this input file opted in to
        arbitrary Python (``allow_python_code``), by Python's ``eval``; a
        floating-point result is placed on the input's dtype and device.

        Args:
            node: The ``[Tensors]`` block.

        Returns:
            The expression's value (for a block of statements, the value assigned to
                ``result``); a floating-point tensor is moved to this file's dtype and device.

        Raises:
            FatalError: If ``expr`` is missing, an option is unknown, the expression does
                not parse, uses something the allow-list refuses or exceeds its limits
                (one line naming the ``expr`` line, the block and what was refused), or
                fails.
        """
        expr = node.param("expr")
        if expr is None:
            raise FatalError(f"{node.location}: [Tensors/{node.name}] (Python) needs 'expr'")
        unknown = [p.name for p in node.params() if p.name not in ("type", "expr")]
        if unknown:
            raise FatalError(
                f"{node.param(unknown[0]).location}: unknown option '{unknown[0]}' in "
                f"[Tensors/{node.name}]{suggest(unknown[0], ['type', 'expr'])}; "
                "accepted: type, expr"
            )
        text = expr.as_str().strip()
        where = f"[Tensors/{node.name}]"
        multiline = "\n" in text
        try:
            tree, mode = parse(text, f"{expr.location}")
        except SyntaxError as e:
            line = f" (line {e.lineno} of the expression)" if multiline and e.lineno else ""
            raise FatalError(
                f"{expr.location}: invalid Python expression in {where}{line}: {e.msg}"
            ) from e
        except (ValueError, RecursionError, MemoryError) as e:
            raise FatalError(
                f"{expr.location}: invalid Python expression in {where}: {type(e).__name__}: {e}"
            ) from e
        names: list[str] = [*TENSOR_NAMES, *BUILTIN_NAMES]
        with default_dtype(torch.float64):
            try:
                if self.allow_python_code:
                    ns = _python_code.namespace()
                    names = list(ns)
                    value = self._run_python_code(tree, mode, expr, where, ns)
                else:
                    value = evaluate(
                        tree,
                        mode,
                        self.has_tensor,
                        lambda n: self.tensor(n, expr.location),
                        tally=self._expression_tally,
                    )
            except Refused as e:
                line = f" (line {e.lineno} of the expression)" if multiline and e.lineno else ""
                raise FatalError(
                    f"{expr.location}: {where} rejected expression{line}: {e.what}; "
                    f"{_python_code.OPT_IN_HINT}"
                ) from None
            except NoResult:
                raise FatalError(
                    f"{expr.location}: {where}: a block of statements must assign "
                    "its value to 'result' (e.g. result = SR2(x))"
                ) from None
            except FatalError:
                raise
            except Exception as e:
                hint = ""
                if isinstance(e, NameError) and getattr(e, "name", None):
                    hint = former_type_hint(e.name, names) or suggest(
                        e.name, [*names, *self._tensor_names()]
                    )
                raise FatalError(
                    f"{expr.location}: [Tensors/{node.name}] failed: {type(e).__name__}: {e}{hint}"
                ) from e
        return self._place(value)

    def _run_python_code(
        self, tree: Any, mode: str, expr: hit.Param, where: str, ns: dict[str, Any]
    ) -> Any:
        """The opt-in path: the block-list check, then Python's ``eval``/``exec``."""
        bad = _python_code.rejected(tree, lambda n: n in ns or self.has_tensor(n))
        if bad is not None:
            line = f" (line {bad[0]} of the expression)" if "\n" in expr.as_str().strip() else ""
            raise FatalError(f"{expr.location}: {where} rejected expression{line}: {bad[1]}")
        for n in sorted(_python_code.used_names(tree)):
            if n not in ns and self.has_tensor(n):
                ns[n] = self.tensor(n, expr.location)
        return _python_code.run_python_code(tree, mode, f"{expr.location}", ns)

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
        """Build the registered object ``[section]/name`` (once; later calls reuse it).

        Args:
            section: The section name (``"Models"``, ``"Data"``, ``"Solvers"``, ...).
            name: The block name.
            where: The location named by the error if the block does not exist.

        Returns:
            The object its type's ``from_hit`` builds, with ``hit_name`` set to *name*.

        Raises:
            FatalError: If the block does not exist, has no or an unknown ``type``, the
                blocks refer to each other in a cycle, or building fails.
        """
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
            hint = former_type_hint(tp.as_str(), known) or suggest(tp.as_str(), known)
            broken = "".join(f"; {m}" for m in plugin_failures())
            raise FatalError(
                f"{tp.location}: unknown type '{tp.as_str()}' in [{key}]"
                f"{hint}; {len(known)} types are registered "
                f"(list them with `neml2-syntax`){broken}"
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
        """Build the model ``[Models]/name`` (see :meth:`object`).

        Args:
            name: The block name.
            where: The location named by the error if the block does not exist.

        Returns:
            The model, not composed with the providers of its parameters (see
                :meth:`top_model`).
        """
        return self.object("Models", name, where)

    def top_model(self, name: str, where: Any = None) -> Any:
        """Build model *name*, composed with the models that provide its parameters.

        Args:
            name: The block name under ``[Models]``.
            where: The location named by the error if the block does not exist.

        Returns:
            The model, or, when some of its parameters are other models' outputs, a
                :class:`ComposedModel` of it and those providers (named *name*); moved to
                this file's dtype and device.
        """
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
        """Build the object ``[Data]/name`` (see :meth:`object`).

        Args:
            name: The block name.
            where: The location named by the error if the block does not exist.

        Returns:
            The object.
        """
        return self.object("Data", name, where)

    # ------------------------------------------------------------ parameters
    def resolve_parameter(self, f: ParameterField, p: hit.Param) -> Any:
        """Resolve a parameter's HIT value.

        The value is literal number(s), a ``[Tensors]`` name, or (when the field allows
        it) a model output or a variable. A literal must be finite: ``nan``, ``inf``
        (any spelling ``float()`` takes) are errors naming the option. A token that
        starts like a number but is none (``2OO``, ``1e5x``, ``1,5``) is an error too,
        not a variable name.

        Args:
            f (ParameterField): The parameter's field (its type, ``many`` and
                ``allow_nonlinear``).
            p (hit.Param): The HIT option.

        Returns:
            A typed value of the field's type (a list of them for a ``many`` field), or a
                :class:`NonlinearParameter` for a model output or a variable.

        Raises:
            FatalError: If the value is empty, not finite, not a valid literal of the
                type, or a name the field does not accept.
        """
        tokens = p.as_list(str)
        if not tokens:
            raise FatalError(f"{p.location}: option '{p.name}' is empty")
        numbers = _floats(tokens)
        if numbers is not None:
            _check_finite(numbers, tokens, p)
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
        if self.dtype.is_floating_point:
            top = torch.finfo(self.dtype).max
            for x in numbers:
                if abs(x) > top:  # would be inf, and a range check would blame the value
                    dtype = str(self.dtype).removeprefix("torch.")
                    raise FatalError(
                        f"{p.location}: option '{p.name}' = '{p.raw}': {x:g} does not fit in "
                        f"{dtype} (max {top:g}); load the model in a wider dtype"
                    )
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
            _check_finite(number, [token], p)
            return self._literal(f.type, number, p)
        if _NUMBER_LIKE.match(token):
            raise FatalError(
                f"{p.location}: option '{p.name}' = '{token}' is not a number (a variable "
                "name cannot start with a digit, a sign or a dot)"
            )
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
                    f"{len(outs)} outputs ({', '.join(outs)}); a parameter needs exactly one "
                    f"(name it as '{token}.<output>')"
                )
            return NonlinearParameter(variable=outs[0], provider=token)
        block, dot, var = token.partition(".")
        if dot and self.has_block("Models", block):  # 'model.variable': one of its outputs
            outs = list(self.model(block, p.location).output_spec)
            if var not in outs:
                raise FatalError(
                    f"{p.location}: option '{p.name}' = '{token}': model '{block}' has no "
                    f"output '{var}' (outputs: {', '.join(outs)})"
                )
            return NonlinearParameter(variable=var, provider=block)
        if not _VARIABLE_NAME.match(token):
            raise FatalError(
                f"{p.location}: option '{p.name}' = '{token}' is not a number, a [Tensors] "
                "name, a [Models] name ('model' or 'model.output') nor a variable name "
                "(letters, digits and '_', parts joined by '/', as 'T' or 'forces/T'), so it "
                "cannot become an input variable"
            )
        return self._free_input(f, token, p)

    def _free_input(self, f: ParameterField, token: str, p: hit.Param) -> NonlinearParameter:
        """*token* (no number, [Tensors] name or model) becomes an input variable of the
        model: recorded in ``free_inputs`` (a driver that does not give it says where it
        came from), and a warning when it is one edit from a [Tensors] or [Models] name."""
        where = f"{p.location}: option '{p.name}' = '{token}'"
        self.free_inputs.setdefault(token, [])
        if where not in self.free_inputs[token]:
            self.free_inputs[token].append(where)
        typo_of = [n for n in (*self._tensor_names(), *self._model_names()) if _one_edit(token, n)]
        near = suggest(token, typo_of) if typo_of else ""
        if near:
            warnings.warn(
                f"{where} is not a number, a [Tensors] name or a model output; it becomes "
                f"the input variable '{token}'{near}",
                UserWarning,
                stacklevel=2,
            )
        return NonlinearParameter(variable=token)

    def free_input_origin(self, variable: str) -> str:
        """Explain why *variable* is an input: the tail of a driver's error about it.

        Args:
            variable: The input variable a driver does not give.

        Returns:
            ``" ('abc' is an input variable because <file:line>: option 'x' = 'abc' is
                not a number, a [Tensors] name or a model output)"`` when a parameter named
                *variable*, else ``""``.
        """
        where = self.free_inputs.get(variable)
        if not where:
            return ""
        return (
            f" ('{variable}' is an input variable because {'; '.join(where)} is not a "
            "number, a [Tensors] name or a model output)"
        )

    def _model_names(self) -> list[str]:
        sec = self.section("Models")
        return [c.name for c in sec.children()] if sec is not None else []

    def _tensor_names(self) -> list[str]:
        sec = self.section("Tensors")
        return [c.name for c in sec.children()] if sec is not None else []


def _floats(tokens: list[str]) -> list[float] | None:
    try:
        return [float(t) for t in tokens]
    except ValueError:
        return None


#: a token that starts like a number (digit, sign + digit or dot, dot + digit)
_NUMBER_LIKE = re.compile(r"^[+-]?\.?\d")
#: a name a parameter may promote to an input variable: identifiers joined by '/'
#: (``T``, ``forces/T``), optionally a history suffix (``x~1``)
_VARIABLE_NAME = re.compile(r"^[A-Za-z_]\w*(/[A-Za-z_]\w*)*(~\d+)?$", re.ASCII)


def _check_finite(numbers: list[float], tokens: list[str], p: hit.Param) -> None:
    """A FatalError at *p* naming the first literal that is NaN or infinite."""
    for x, t in zip(numbers, tokens, strict=True):
        if not math.isfinite(x):
            raise FatalError(
                f"{p.location}: option '{p.name}' = '{p.raw}': '{t}' is not a finite number; "
                "a parameter's value must be finite"
            )


def _cast(value: TensorWrapper, typ: type, p: hit.Param) -> Any:
    if tuple(value.base_shape) != tuple(getattr(typ, "BASE_SHAPE", value.base_shape)):
        raise FatalError(
            f"{p.location}: option '{p.name}' needs a {typ.__name__}, but the [Tensors] value "
            f"is a {type(value).__name__} of base shape {tuple(value.base_shape)}"
        )
    return typ(value)
