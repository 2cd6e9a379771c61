"""py-jit: ``neml2.compile(model)``, the model's name-keyed surface under ``torch.compile``.

The returned :class:`CompiledModel` has the surface of every route (``forward(dict)``,
``jvp``, ``jacobian``, names, base shapes, ``named_parameters()``, ``set_parameter``)
and is also a drop-in for the typed module (``m(*typed)``, ``m(*typed, v=...)``).

How a name-keyed call runs:

1. every raw input ``(*B_i, *sub_i, *base_i)`` (a Python number: ``()``) is
   broadcast to the common batch ``(*B)`` and flattened to ``(N, *sub_i, *base_i)``
   (``N = 1`` for ``B = ()``); ``N`` is marked dynamic, so a new batch size does not
   recompile. A parameter with a batch axis longer than 1 fixes the batch size: ``B``
   then includes it and the inputs stay at ``(*B, ...)``, with static sizes (flattened,
   they would no longer broadcast with the parameter);
2. ``N == 1`` is evaluated as a batch of 2 (the row repeated) and sliced back:
   Dynamo specializes a backed size of 0 or 1, so batch 1 would otherwise get a
   graph of its own (``mark_unbacked`` avoids that but the typed algebra's
   broadcasting checks cannot be decided on unbacked sizes);
3. the compiled function is :mod:`neml2.models._traced`, the body neml2-compile's
   exported graphs trace too: it rebuilds the typed inputs (``sub_batch`` says how
   many trailing batch axes of an input are sub-batch; typed wrappers in the dict
   carry their own), calls the model as py-eager's ``forward`` / ``jvp`` /
   ``jacobian`` do (the same typed call, the same seeds), so numbers differ from
   py-eager only by Inductor's reordering of sums, and returns every output at
   ``(N, *sub, *base)``;
4. implicit updates do not check convergence while traced, so they log their solves
   during tracing and the graph also returns every solve's per-point convergence
   flags, residual norms and iteration count; the wrapper raises a
   :class:`~neml2.tensors.ConvergenceError` naming the failed points on them.

One graph is compiled per operation (and per set of tangent names for ``jvp``), per
grad mode, lazily on the first call.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import types
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from neml2.models import _traced
from neml2.models._history import missing_inputs_message
from neml2.models._inputs import (
    as_tensor,
    check_names,
    check_placement,
    input_desc,
    input_dtype,
    wrt_inputs,
)
from neml2.models._model import parameter_batch_shapes, parameter_owners
from neml2.models.implicit_update import implicit_updates
from neml2.tensors import ConvergenceError, FatalError, TensorWrapper, broadcast_batch_shapes

# neml2.models._inductor (MendedInductor, code_generation) is imported where a graph is
# compiled, not above: it imports torch._inductor's C++ code generator, 3.3 s on 2 cores,
# which `import neml2.models` (every py-eager user) would otherwise pay.

__all__ = ["CompiledModel", "compile"]

_OPS = ("forward", "jvp", "jacobian", "typed")

#: Size hint of the dynamic batch axis of the name-keyed calls (neml2-compile's example
#: batch too). Inductor plans its loops with the batch a graph is first compiled at, and
#: below about 1000 points it emits serial kernels, which then use one core at every
#: batch (a run whose first batch of 2 points or more is 100 got them).
BATCH_HINT = 1024


def compile(
    model: torch.nn.Module,
    *,
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    fullgraph: bool = True,
    sub_batch: Mapping[str, int] | None = None,
) -> CompiledModel:
    """Compile *model* (a :class:`neml2.models.Model`) with ``torch.compile``.

    Nothing is compiled yet: each operation (``forward``, ``jvp``, ``jacobian``, the
    typed call) gets its graph on its first call.

    Args:
        model: The model to compile (e.g. from :func:`neml2.load_model`).
        backend: The ``torch.compile`` backend: a name, or a callable (e.g. a compile
            counter).
        mode: The ``torch.compile`` mode (``"reduce-overhead"``, ...); ``None`` for the
            default.
        options: Backend options passed to ``torch.compile``.
        fullgraph: Passed to ``torch.compile``: refuse graph breaks.
        sub_batch: Input name -> number of trailing batch axes that are sub-batch, for
            raw tensors of sub-batch models (crystal plasticity), e.g.
            ``{"orientation~1": 1}``; default 0 for every input.

    Returns:
        The compiled model, with the surface of *model*.

    Raises:
        FatalError: If *model* is not a neml2 model or is already compiled, the backend
            is unknown, both *mode* and *options* are given, or *sub_batch* names an
            unknown input or a count that is not an int >= 0.
    """
    return CompiledModel(
        model,
        backend=backend,
        mode=mode,
        options=options,
        fullgraph=fullgraph,
        sub_batch=sub_batch,
    )


_COPIES = itertools.count()


def _fresh(fn):
    """A copy of *fn* with its own code object *and its own name*.

    Dynamo caches graphs per code object, so every CompiledModel gets its own cache
    (and recompile limit). Its automatic-dynamic state, though, is keyed by where the
    code comes from (file, first line, name: ``torch._dynamo.pgo.CodeId``): copies that
    share a name share what one model's compiles taught Dynamo about the arguments, and
    a later model then compiled with sizes and ints it took to vary across models (the
    per-slip crystal model failed in Inductor after a J2 compile). A name per copy keeps
    every CompiledModel's state its own.
    """
    name = f"{fn.__name__}_{next(_COPIES)}"
    code = fn.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):  # Python >= 3.11
        code = code.replace(co_qualname=name)
    return types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)


def _own_storage(tree, seen: set[int]):
    """*tree* (tensors and typed values in dicts, tuples and lists) with every tensor that
    shares its memory with one met before (in *seen*, storage addresses) replaced by a
    copy. Dynamo makes graph inputs that are views of one storage views of a synthetic
    base inside the graph, and an in-graph Newton loop then refuses its carried values
    ("cond_fn might be aliasing the input or the output!"): a transient run that slices
    ``strain`` and ``strain~1`` from one history tensor hit it. A copy per shared input,
    one pass over its values, is what the call costs."""
    if isinstance(tree, TensorWrapper):
        data = _own_storage(tree.data, seen)
        return tree if data is tree.data else type(tree)(data, tree.sub_batch_ndim)
    if isinstance(tree, torch.Tensor):
        key = tree.untyped_storage().data_ptr()
        if key in seen and tree.numel():
            return tree.clone()
        seen.add(key)
        return tree
    if isinstance(tree, Mapping):
        return {k: _own_storage(v, seen) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_own_storage(v, seen) for v in tree)
    return tree


class CompiledModel(torch.nn.Module):
    """A neml2 model under ``torch.compile`` (route ``py-jit``).

    It has the surface of every route (``forward(dict)``, ``jvp``, ``jacobian``, names,
    base shapes, ``named_parameters()``, ``set_parameter``) and is also a drop-in for the
    typed module (``m(*typed)``, ``m(*typed, v=...)``). A name-keyed call broadcasts the
    inputs to one batch ``(*B)``, flattens it to a dynamic axis ``(N, ...)`` (so a new
    batch size does not recompile) and calls the same ``forward`` / ``jvp`` /
    ``jacobian`` as py-eager. An implicit update's failed in-graph solve raises a
    :class:`~neml2.tensors.ConvergenceError` naming the failed points.

    Attributes:
        model (Model): The wrapped model.
        sub_batch (dict[str, int]): Input name -> number of trailing sub-batch axes.
        backend_name (str): The backend's name (a callable backend's type name).
        recompiled_without_patterns (list[str]): The operations whose graph was
            recompiled without Inductor's pattern matcher.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        *,
        backend: Any = "inductor",
        mode: str | None = None,
        options: dict[str, Any] | None = None,
        fullgraph: bool = True,
        sub_batch: Mapping[str, int] | None = None,
    ):
        """Wrap *model*; the arguments are those of :func:`compile`.

        Args:
            model: The model to compile.
            backend: The ``torch.compile`` backend, a name or a callable.
            mode: The ``torch.compile`` mode.
            options: Backend options passed to ``torch.compile``.
            fullgraph: Passed to ``torch.compile``.
            sub_batch: Input name -> number of trailing batch axes that are sub-batch.

        Raises:
            FatalError: As for :func:`compile`.
        """
        from neml2.models._model import Model

        if isinstance(model, CompiledModel):
            raise FatalError("neml2.compile: the model is already compiled")
        if not isinstance(model, Model):
            raise FatalError(
                f"neml2.compile: expected a neml2.models.Model (e.g. from neml2.load_model), "
                f"got {type(model).__name__}"
            )
        if isinstance(backend, str):
            known = torch._dynamo.list_backends(exclude_tags=())
            if backend not in known:
                raise FatalError(
                    f"neml2.compile: unknown backend {backend!r}; choose from {', '.join(known)}"
                )
        sub_batch = dict(sub_batch or {})
        unknown = [n for n in sub_batch if n not in model.input_spec]
        if unknown:
            raise FatalError(
                f"neml2.compile: sub_batch names unknown input(s) {', '.join(unknown)}; "
                f"inputs are: {', '.join(model.input_spec)}"
            )
        bad = [n for n, k in sub_batch.items() if not isinstance(k, int) or k < 0]
        if bad:
            raise FatalError(f"neml2.compile: sub_batch of {', '.join(bad)} must be an int >= 0")
        super().__init__()
        self.model = model
        self.sub_batch = sub_batch
        self.backend_name = backend if isinstance(backend, str) else type(backend).__name__
        #: the implicit updates, whose solves the compiled graphs report (their
        #: ``solve_status`` logs, turned on inside the graph: _traced.with_status)
        self._updates = implicit_updates(model)
        #: the modules that hold parameters, whose batch shapes each call reads
        self._owners = parameter_owners(model)
        self._kw = {"backend": backend, "mode": mode, "options": options, "fullgraph": fullgraph}
        if mode is not None and options is not None:
            raise FatalError("neml2.compile: give mode or options, not both (torch.compile's rule)")
        self._compiled = {op: self._compile(op, options) for op in _GRAPHS}
        #: graphs recompiled without Inductor's pattern matcher (see _without_patterns)
        self.recompiled_without_patterns: list[str] = []

    # ------------------------------------------------------------------ metadata
    @property
    def input_spec(self) -> dict[str, type]:
        """Ordered input name -> tensor type (the wrapped model's)."""
        return self.model.input_spec

    @property
    def output_spec(self) -> dict[str, type]:
        """Ordered output name -> tensor type (the wrapped model's)."""
        return self.model.output_spec

    @property
    def input_names(self) -> list[str]:
        """The input variable names, in positional order."""
        return self.model.input_names

    @property
    def output_names(self) -> list[str]:
        """The output variable names, in the order the outputs are returned."""
        return self.model.output_names

    @property
    def input_base_shapes(self) -> list[tuple[int, ...]]:
        """The base shape of each input, in :attr:`input_names` order."""
        return self.model.input_base_shapes

    @property
    def output_base_shapes(self) -> list[tuple[int, ...]]:
        """The base shape of each output, in :attr:`output_names` order."""
        return self.model.output_base_shapes

    @property
    def dtype(self) -> torch.dtype:
        """The dtype the wrapped model computes in."""
        return self.model.dtype

    @property
    def device(self) -> torch.device:
        """The device the wrapped model computes on."""
        return self.model.device

    @property
    def hit_name(self) -> str | None:
        """The wrapped model's HIT block name (``None`` if not built from HIT)."""
        return self.model.hit_name

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        """Iterate over the wrapped model's parameters, under the same names as on py-eager.

        Args:
            prefix: Prepended to every name.
            recurse: Include the parameters of sub-models.
            remove_duplicate (bool): Yield a parameter shared by several sub-models once.

        Returns:
            (Iterator[tuple[str, torch.nn.Parameter]]): ``(name, parameter)`` pairs,
                names dotted (``elasticity.E``).
        """
        return self.model.named_parameters(prefix, recurse, remove_duplicate)

    def set_parameter(self, name: str, value: Any) -> None:
        """Replace a parameter's value (see :meth:`neml2.models.Model.set_parameter`).

        Args:
            name: The parameter, dotted through sub-models (``elasticity.E``).
            value: The new value, at ``(*B, *base)``; its base shape must match.

        Raises:
            FatalError: If there is no such parameter or the value is invalid.
        """
        self.model.set_parameter(name, value)

    def extra_repr(self) -> str:
        """The line ``print(compiled)`` adds.

        Returns:
            ``backend: <name>``.
        """
        return f"backend: {self.backend_name}"

    # ------------------------------------------------------------------ typed surface
    def forward(self, *args, v=None, v2=None):
        """Evaluate the compiled model, name-keyed or typed.

        ``m(dict)`` takes and returns raw tensors keyed by name; ``m(*typed, v=...,
        v2=...)`` is the typed call of :class:`neml2.models.Model`.

        Args:
            *args (Mapping[str, Any] | TensorWrapper): One mapping, input name -> raw
                tensor at ``(*B, *base)`` or typed value; or one typed value per input, in
                :attr:`input_spec` order.
            v (ChainRuleDict | None): First-order tangents, ``v[input][leaf]`` at
                ``(K, *B, *sub, *base)`` (typed call only).
            v2 (SecondOrderChainRuleDict | None): Second-order tangents (typed call only).

        Returns:
            (dict | tuple): For a mapping: output name -> raw tensor at
                ``(*B, *out_base)``. For typed values: the outputs (one, or a tuple),
                followed by ``v_out`` (and ``v2_out``) when *v* (and *v2*) are given.

        Raises:
            FatalError: If the number of inputs is wrong, an input or seed is invalid, or
                the model cannot be compiled.
            ConvergenceError: If an in-graph solve fails to converge.
        """
        if len(args) == 1 and isinstance(args[0], Mapping) and v is None and v2 is None:
            return self._named("forward", args[0])
        if len(args) != len(self.input_spec):
            raise FatalError(
                f"{self.model._label()}: forward takes {len(self.input_spec)} inputs "
                f"({', '.join(self.input_spec)}), got {len(args)}"
            )
        # py-eager's checks (dtype, device, v= names), here: inside the graph they are off
        args = self.model._check_typed_call(args, v, v2)
        seen: set[int] = set()
        args, v, v2 = (_own_storage(x, seen) for x in (args, v, v2))
        # maybe: a typed call may broadcast a batch-1 tangent against this axis, which a
        # strictly dynamic size cannot decide. Only a leading *batch* axis is marked (an
        # unbatched input's first axis is a sub-batch or base axis, of a fixed size), and
        # none where a parameter has a batch of its own: it fixes the batch size.
        ts = [] if self._pinned() else _batched(self.input_spec, args)
        # The size hint stands for the size when Dynamo decides comparisons, so it is given
        # only where every marked axis has one size and no tangent (of a static batch) is
        # compared with it. maybe_mark_dynamic takes no hint: it is stored as
        # mark_dynamic(hint_override=) stores it (torch 2.13)
        hint = v is None and v2 is None and len({t.shape[0] for t in ts}) == 1
        for t in ts:
            torch._dynamo.maybe_mark_dynamic(t, 0)
            t._dynamo_hint_overrides = {0: BATCH_HINT} if hint else {}
        return self._run("typed", lambda f: f(self.model, args, v, v2))

    # ------------------------------------------------------------------ name-keyed surface
    def jvp(
        self, inputs: Mapping[str, Any], tangents: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Evaluate the outputs and their directional derivatives (compiled).

        Args:
            inputs: Every input by name, raw tensors at ``(*B, *base)`` or typed values.
            tangents: Input name -> direction ``t_i`` at ``(*B, *base)``; a missing input
                has the zero direction. Each set of tangent names compiles its own graph.

        Returns:
            ``(outputs, jvp)``: ``outputs[out]`` at ``(*B, *out_base)`` and
                ``jvp[out] = sum_i dy/dx_i . t_i`` at the same shape, for every output.

        Raises:
            FatalError: If an input is missing or a name is unknown, or the model cannot
                be compiled.
            ConvergenceError: If an in-graph solve fails to converge.
        """
        check_names(self.model._label(), tangents, self.input_spec, "tangent")
        return self._named("jvp", inputs, tangents)

    def jacobian(
        self, inputs: Mapping[str, Any], *, wrt: str | Sequence[str] | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
        """Evaluate the outputs and the Jacobian blocks ``J[out][in]`` (compiled).

        As :meth:`neml2.models.Model.jacobian`. Each distinct *wrt* is its own compiled
        graph.

        Args:
            inputs: Every input by name, at ``(*B, *base)``.
            wrt: The input(s) to differentiate with respect to; default: every input.
                Only these are seeded.

        Returns:
            ``(outputs, J)``: ``outputs[out]`` at ``(*B, *out_base)``; ``J[out][in]`` for
                every output and every input in *wrt*, at ``(*B, *out_base, *in_base)``.

        Raises:
            FatalError: If an input is missing or unknown, *wrt* names no input of the
                model, or the model cannot be compiled.
            ConvergenceError: If an in-graph solve fails to converge.
        """
        wanted = wrt_inputs(self.model._label(), wrt, list(self.input_spec))
        return self._named("jacobian", inputs, wrt=wanted)

    # ------------------------------------------------------------------ machinery
    def _pinned(self) -> bool:
        """Whether a parameter has a batch axis longer than 1 (which fixes the batch size
        of every call)."""
        shapes = parameter_batch_shapes(self.model, self._owners).values()
        return any(d != 1 for s in shapes for d in s)

    def _flat_inputs(self, inputs: Mapping[str, Any], tangents: Mapping[str, Any] | None):
        """Broadcast to one batch ``(*B)`` and flatten it to ``(N, ...)``; pad N = 1 to 2.

        ``B`` includes the parameters' batch shapes. Where a parameter has a batch axis
        longer than 1 it fixes the batch size, and a flattened batch would no longer
        broadcast with it: the inputs then stay at ``(*B, ...)``, with static sizes
        (*flat* False in the result)."""
        label = self.model._label()
        check_names(label, inputs, self.input_spec, "input")
        missing = [n for n in self.input_spec if n not in inputs]
        if missing:
            raise FatalError(missing_inputs_message(label, missing))
        dtype, device = self.model._placement()
        raw, subs, batches = {}, {}, {}
        for name, typ in self.input_spec.items():
            x = inputs[name]
            want = input_dtype(typ, dtype)
            if isinstance(x, TensorWrapper):
                sub, desc, x = x.sub_batch_ndim, input_desc(name, x), x.data
                check_placement(label, desc, x, want, device)
            else:
                sub = self.sub_batch.get(name, 0)
                x = as_tensor(label, f"input '{name}'", x, want, device)
            base = tuple(typ.BASE_SHAPE)
            rest = sub + len(base)
            if x.dim() < rest or tuple(x.shape[x.dim() - len(base) :]) != base:
                raise FatalError(
                    f"{label}: input '{name}' has shape {tuple(x.shape)} but a {typ.__name__} "
                    f"with {sub} sub-batch axes must be (*batch, *sub_batch, "
                    f"{', '.join(map(str, base))})"
                )
            raw[name], subs[name] = x, sub
            batches[name] = tuple(x.shape[: x.dim() - rest])
        try:
            B = torch.broadcast_shapes(*batches.values())
        except RuntimeError:  # the error names two inputs that do not broadcast
            broadcast_batch_shapes({f"input '{n}'": s for n, s in batches.items()}, label)
            raise
        params = parameter_batch_shapes(self.model, self._owners)
        B = _with_parameters(label, tuple(B), params)
        flat_batch = not any(d != 1 for s in params.values() for d in s)
        n = math.prod(B)
        pad = flat_batch and n == 1
        seen: set[int] = set()  # storages of the flattened inputs so far (_own_storage)

        def flat(x, sub, base_ndim):
            rest = tuple(x.shape[x.dim() - sub - base_ndim :])
            y = x.expand((*B, *rest))
            if flat_batch:
                y = y.reshape((n, *rest))
                if pad:
                    y = y.expand((2, *rest))
            y = _own_storage(y.contiguous(), seen)
            if flat_batch:
                torch._dynamo.mark_dynamic(y, 0, hint_override=BATCH_HINT)
            return y

        bases = {k: len(t.BASE_SHAPE) for k, t in self.input_spec.items()}
        xs = tuple(flat(raw[k], subs[k], bases[k]) for k in self.input_spec)
        ts = None
        if tangents is not None:
            ts = {}
            for k, t in tangents.items():
                t = as_tensor(label, f"tangent '{k}'", t, dtype, device)
                x = raw[k]
                rest = tuple(x.shape[x.dim() - subs[k] - bases[k] :])
                if t.dim() < len(rest) or tuple(t.shape[t.dim() - len(rest) :]) != rest:
                    raise FatalError(
                        f"{label}: tangent '{k}' has shape {tuple(t.shape)}, its input's "
                        f"trailing shape is {rest}"
                    )
                ts[k] = flat(t, subs[k], bases[k])
        return xs, ts, tuple(subs[k] for k in self.input_spec), B, n, pad, flat_batch

    def _named(self, op: str, inputs, tangents=None, wrt: tuple[str, ...] | None = None):
        xs, ts, subs, B, n, pad, flat_batch = self._flat_inputs(inputs, tangents)
        if op == "jvp":
            out = self._run(op, lambda f: f(self.model, subs, xs, ts))
        elif op == "jacobian":
            out = self._run(op, lambda f: f(self.model, subs, xs, wrt))
        else:
            out = self._run(op, lambda f: f(self.model, subs, xs))
        if not flat_batch:  # every output is at (*B, ...) already (_traced._full_outputs)
            return out
        npad = 2 if pad else n

        def unflat(y: torch.Tensor) -> torch.Tensor:
            if y.dim() == 0 or y.shape[0] != npad:
                return y.expand((*B, *y.shape))
            if pad:
                y = y[:1]
            return y.reshape((*B, *y.shape[1:]))

        return torch.utils._pytree.tree_map(unflat, out)

    def _without_patterns(self, op: str, e: Exception) -> bool:
        """Replace graph *op* by one compiled without Inductor's pattern matcher, if *e* is
        the torch 2.13 failure that this avoids; whether it was replaced.

        Inductor's post-grad pattern passes can rewrite a node that feeds a
        ``while_loop`` so that the subgraph's placeholder no longer matches it ("A
        subgraph argument other than striding has been modified; FakeTensorUpdater
        cannot update this argument!"). Seen on the Taylor model's in-graph Newton; the
        same graph compiles without those passes. Done once per graph, with a warning.
        """
        opts = dict(self._kw["options"] or {})
        if (
            "FakeTensorUpdater cannot update" not in str(e)
            or self.backend_name != "inductor"
            or opts.get("pattern_matcher") is False
        ):
            return False
        warnings.warn(
            f"neml2.compile: {self.model._label()} ({op}): Inductor's pattern passes broke "
            "the in-graph solve (torch FakeTensorUpdater); compiling this graph again "
            "without them",
            RuntimeWarning,
            stacklevel=4,
        )
        self._compiled[op] = self._compile(op, {**opts, "pattern_matcher": False})
        self.recompiled_without_patterns.append(op)
        return True

    def _compile(self, op: str, options: dict[str, Any] | None):
        """``torch.compile`` of graph *op* with this model's backend, mode and *options*.
        The Inductor backend is :class:`~neml2.models._inductor.MendedInductor`: code is
        generated with neml2's Inductor settings and mend, and a call that reuses the
        code pays nothing for them."""
        kw = self._kw
        if isinstance(kw["backend"], str) and kw["backend"] == "inductor":
            from neml2.models._inductor import MendedInductor  # lazily: see the imports

            backend = MendedInductor(kw["mode"], options, None)
            return torch.compile(_fresh(_GRAPHS[op]), backend=backend, fullgraph=kw["fullgraph"])
        return torch.compile(_fresh(_GRAPHS[op]), **{**kw, "options": options})

    def _run(self, op: str, call):
        """Call compiled graph *op*; turn compile failures into FatalError and a failed
        in-graph solve into ConvergenceError. A callable backend (which may call
        Inductor) runs inside :func:`~neml2.models._inductor.code_generation`."""
        if isinstance(self._kw["backend"], str):
            ctx = contextlib.nullcontext
        else:
            from neml2.models._inductor import code_generation  # lazily: see the imports

            ctx = code_generation
        try:
            try:
                with ctx():
                    res = call(self._compiled[op])
            except torch._dynamo.exc.TorchDynamoException as e:
                if not self._without_patterns(op, e):
                    raise
                with ctx():
                    res = call(self._compiled[op])
        except (FatalError, ConvergenceError):
            raise
        except torch._dynamo.exc.TorchDynamoException as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise FatalError(
                f"neml2.compile: {self.model._label()} ({op}) cannot be compiled with "
                f"torch.compile (backend {self.backend_name}): {first}"
            ) from e
        res, status = res
        for m, solves in zip(self._updates, status, strict=True):
            for converged, norms, iterations in solves:
                if not bool(converged.all()):
                    describe = getattr(m.solver, "describe", None)
                    raise ConvergenceError.at_points(
                        f"{m._label()} (py-jit)",
                        ~converged,
                        int(iterations),
                        norms,
                        detail=describe() if describe is not None else "",
                    )
        return res


def _with_parameters(
    label: str, batch: tuple[int, ...], params: Mapping[str, tuple[int, ...]]
) -> tuple[int, ...]:
    """*batch* (the inputs') broadcast with the parameters' batch shapes *params*.

    Raises:
        FatalError: Naming the first parameter that does not broadcast (py-eager's
            message).
    """
    for name, shape in params.items():
        try:
            batch = tuple(torch.broadcast_shapes(batch, shape))
        except RuntimeError:
            raise FatalError(
                f"{label}: parameter '{name}' has batch shape {shape}, which does not "
                f"broadcast with the inputs' batch shape {batch}"
            ) from None
    return batch


def _batched(spec: Mapping[str, type], args: Sequence[Any]) -> list[torch.Tensor]:
    """The tensors of a typed call's arguments whose first axis is a batch axis longer
    than 1 (a typed value's dynamic batch; a raw tensor's axes before its base shape)."""
    out = []
    for typ, a in zip(spec.values(), args, strict=True):
        if isinstance(a, TensorWrapper):
            t, ndim = a.data, a.dynamic_ndim
        elif isinstance(a, torch.Tensor):
            t, ndim = a, a.dim() - len(typ.BASE_SHAPE)
        else:
            continue
        if ndim > 0 and t.shape[0] > 1:
            out.append(t)
    return out


# ---------------------------------------------------------------------- compiled bodies
# Module-level functions (copied per CompiledModel by _fresh): Dynamo traces them with the
# model and the sub-batch counts as constants and the tensors as graph inputs. Each
# returns ``(result, status)``; the evaluation itself is neml2.models._traced, which
# neml2-compile's exported graphs call too.


def _forward_graph(model, subs, xs):
    outs, status = _traced.forward(model, xs, subs)
    return dict(zip(model.output_spec, outs, strict=True)), status


def _jvp_graph(model, subs, xs, ts):
    outs, dys, status = _traced.jvp(model, xs, subs, ts)
    names = list(model.output_spec)
    return (dict(zip(names, outs, strict=True)), dict(zip(names, dys, strict=True))), status


def _jacobian_graph(model, subs, xs, wrt):
    ins = [i for i in model.input_spec if wrt is None or i in wrt]
    pairs = [(o, i) for o in model.output_spec for i in ins]
    outs, blocks, status = _traced.jacobian(model, xs, subs, pairs, couple_sub_batch=False)
    J: dict[str, dict[str, torch.Tensor]] = {o: {} for o in model.output_spec}
    for (o, i), b in zip(pairs, blocks, strict=True):
        J[o][i] = b
    return (dict(zip(model.output_spec, outs, strict=True)), J), status


def _typed_graph(model, args, v, v2):
    return _traced.with_status(model, lambda: model(*args, v=v, v2=v2))


#: the compiled bodies, one torch.compile per CompiledModel each
_GRAPHS = {
    "forward": _forward_graph,
    "jvp": _jvp_graph,
    "jacobian": _jacobian_graph,
    "typed": _typed_graph,
}
