"""Open one model on any route behind the one name-keyed surface.

A model comes from an input file and a ``[Models]`` block name, or is already loaded
(py-eager's :class:`neml2.models.Model`). The AOTI routes compile it first with
``neml2-compile``'s :func:`neml2.compiler.compile_file` / :func:`~neml2.compiler.compile_model`
through the content-hashed compile cache; py-aoti, cpp-aoti and cpp-dispatch of one
model share one :class:`~neml2.compiler.CompileResult` when it is passed as *artifact*.

Raw inputs are ``(*B, *sub, *base)``. *sub_batch* names the inputs that carry sub-batch
axes (per-slip, per-grain) with their shapes: py-eager and py-jit need to be told (their
raw surface has no sub-batch information), the compile records them in the artifact,
cpp-eager takes their counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from neml2.routes._registry import Route, route
from neml2.tensors import FatalError


def _plain(tree: Any) -> Any:
    """Route results as plain nested dicts and tuples (the runtimes return dict subclasses
    whose missing keys explain themselves; callers compare and serialize plain ones)."""
    if isinstance(tree, Mapping):
        return {k: _plain(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_plain(v) for v in tree)
    return tree


class RouteModel:
    """A model opened on one route, with the name-keyed surface every route shares.

    ``forward(inputs) -> {out: (*B, *sub, *base)}``; ``jvp(inputs, tangents) ->
    (outputs, {out: tangent})``; ``jacobian(inputs) -> (outputs, J)`` with
    ``J[out][in]`` at ``(*B, *out_sub, *out_base, *in_base)`` on the Python routes and
    ``(*B, *out_sub, *out_base, *in_sub, *in_base)`` on the compiled ones (py-eager seeds
    the base of a sub-batched input only: sum the compiled block over ``in_sub`` to
    compare). Every other attribute (``input_names``, ``output_base_shapes``,
    ``named_parameters()``, ``set_parameter``, ``dtype``, ...) is the route object's.

    Attributes:
        route: the :class:`Route`.
        impl: the route's own object (a ``neml2.models.Model``, a py-jit
            ``CompiledModel``, the ``AOTIModel`` of the stub, ``neml2.aoti.Model``,
            ``neml2.aoti.DispatchedModel`` or ``neml2.aoti.cpp_eager.Model``); for
            routes with ``route.typed`` it is a typed model the drivers can run.
        artifact: the compile that made it (AOTI routes), else None.
        no_grad: whether ``forward``, ``jvp`` and ``jacobian`` run under
            ``torch.no_grad()`` (values only: a route matrix, a benchmark).
    """

    def __init__(
        self,
        route_: Route,
        impl: Any,
        *,
        typer: Callable[[dict], dict] | None = None,
        artifact: Any = None,
        no_grad: bool = False,
    ):
        self.route = route_
        self.impl = impl
        self.artifact = artifact
        self.no_grad = no_grad
        self._typer = typer

    def _grad_mode(self):
        return torch.no_grad() if self.no_grad else contextlib.nullcontext()

    def _in(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return self._typer(dict(inputs)) if self._typer else dict(inputs)

    def forward(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        """The outputs at *inputs* (name -> raw tensor)."""
        with self._grad_mode():
            return _plain(self.impl.forward(self._in(inputs)))

    def jvp(
        self, inputs: Mapping[str, Any], tangents: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """The outputs and their directional derivatives along *tangents* (name -> raw
        tensor at the input's shape; inputs without one have a zero tangent)."""
        with self._grad_mode():
            return _plain(self.impl.jvp(self._in(inputs), dict(tangents)))

    def jacobian(self, inputs: Mapping[str, Any]) -> tuple[dict, dict]:
        """The outputs and the Jacobian blocks ``J[out][in]`` (the compiled ``-d`` pairs
        on the AOTI routes)."""
        with self._grad_mode():
            return _plain(self.impl.jacobian(self._in(inputs)))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("impl", "route", "artifact", "no_grad"):
            raise AttributeError(name)
        return getattr(self.impl, name)

    def __repr__(self) -> str:
        return f"RouteModel({self.route.name}, {type(self.impl).__name__})"


def _loaded(source: Any, name: str | None, overrides: Sequence[str], dtype, device) -> Any:
    """The py-eager model of *source*: a loaded model as is, or ``[Models]/name`` of a file."""
    import neml2

    if isinstance(source, (str, Path)):
        if not name:
            raise FatalError(f"{source}: name the [Models] block to open (model=...)")
        return neml2.load_model(source, name, overrides, dtype=dtype, device=device)
    if not isinstance(source, neml2.models.Model):
        raise FatalError(
            "neml2.routes: expected an input file path or a neml2 model, got "
            f"{type(source).__name__}"
        )
    return source


def _typer(model: Any, sub_batch: Mapping[str, tuple[int, ...]]) -> Callable | None:
    """Raw -> typed for the sub-batched inputs (py-eager's raw surface has no sub-batch)."""
    if not sub_batch:
        return None
    spec = model.input_spec

    def typed(x: dict) -> dict:
        return {
            k: spec[k](v, len(sub_batch[k])) if k in sub_batch and k in spec else v
            for k, v in x.items()
        }

    return typed


def _artifact_key(source: Any, name: str, pairs, sub_batch, overrides, dtype, device) -> str:
    """The folder name of a default artifact: a digest of what selects it."""
    text = Path(source).read_text() if isinstance(source, (str, Path)) else repr(source)
    blob = json.dumps(
        [
            str(Path(source).resolve()) if isinstance(source, (str, Path)) else "<model>",
            text,
            name,
            sorted(pairs),
            sorted((k, list(v)) for k, v in sub_batch.items()),
            list(overrides),
            str(dtype),
            str(device),
        ]
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_artifact(
    source: str | Path | Any,
    model: str | None = None,
    *,
    pairs: Sequence[str] = (),
    sub_batch: Mapping[str, Sequence[int]] | None = None,
    overrides: Sequence[str] = (),
    output_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    dtype: torch.dtype = torch.float64,
    device: str = "cpu",
    progress: Callable[[str], None] | None = None,
) -> Any:
    """Compile the artifact the AOTI routes run (what ``neml2-compile`` writes).

    Args:
        source: the input file, or a loaded model (then *model* names the artifact).
        model: the ``[Models]`` block (the artifact's name); default: the loaded
            model's ``hit_name``.
        pairs: the Jacobian blocks ``OUT:IN`` to compile (``-d``); ``":"`` for all.
        sub_batch: input or output name -> its sub-batch shape.
        overrides: HIT overrides of the file.
        output_dir: where the artifact and its stub go; default: a folder of the
            compile cache named by a digest of the arguments.
        cache_dir: the compile cache (default: :func:`neml2.compiler.default_cache_dir`).
        dtype: the compiled dtype.
        device: the compiled device.
        progress: called with one line per compile step.

    Returns:
        The :class:`neml2.compiler.CompileResult` (``artifact_dir``, ``stub_path``).

    Raises:
        FatalError: loading or compiling fails.
    """
    from dataclasses import replace

    from neml2.compiler import CompileOptions, compile_file, compile_model, default_cache_dir

    name = model or getattr(source, "hit_name", None)
    if not name:
        raise FatalError("neml2.routes.build_artifact: name the model (model=...)")
    sub = {k: tuple(v) for k, v in (sub_batch or {}).items()}
    dt = str(dtype).removeprefix("torch.")
    opts = CompileOptions.from_strings(name, list(pairs), [], [str(device)], [dt])
    opts = replace(opts, sub_batch=sub)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if output_dir is None:
        key = _artifact_key(source, name, pairs, sub, overrides, dtype, device)
        output_dir = cache / "artifacts" / key
    kw = {"cache_dir": cache, "progress": progress}
    if isinstance(source, (str, Path)):
        return compile_file(source, opts, output_dir, overrides, **kw)
    return compile_model(source, opts, output_dir, **kw)


def open_model(
    route_name: str | Route,
    source: str | Path | Any,
    model: str | None = None,
    *,
    sub_batch: Mapping[str, Sequence[int]] | None = None,
    pairs: Sequence[str] = (),
    overrides: Sequence[str] = (),
    artifact: Any = None,
    output_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    dtype: torch.dtype = torch.float64,
    device: str = "cpu",
    jit_backend: Any = "inductor",
    workers: Sequence[str] = ("cpu", "cpu"),
    scheduler: str = "round-robin",
    progress: Callable[[str], None] | None = None,
    no_grad: bool = False,
) -> RouteModel:
    """Open a model on route *route_name*.

    Example:
        ```python
        import neml2.routes
        m = neml2.routes.open_model("cpp-aoti", "model.i", "elasticity", pairs=["stress:strain"])
        out, J = m.jacobian({"strain": strain})  # J["stress"]["strain"]: (*B, 6, 6)
        ```

    Args:
        route_name: a name of :data:`neml2.routes.NAMES` (or a :class:`Route`).
        source: the input file, or a loaded model (py-eager's).
        model: the ``[Models]`` block; for a loaded model, the artifact's name (default:
            its ``hit_name``).
        sub_batch: input name -> sub-batch shape of its raw tensors (per-slip, per-grain);
            outputs may be named too (the compile records them).
        pairs: the Jacobian blocks ``OUT:IN`` compiled for the AOTI routes (``-d``).
        overrides: HIT overrides of the file.
        artifact: a :class:`neml2.compiler.CompileResult` to run instead of compiling
            (the AOTI routes of one model share one).
        output_dir: where a new artifact goes (default: inside the compile cache).
        cache_dir: the compile cache.
        dtype: the model's dtype.
        device: the model's device (``"cpu"``, ``"cuda"``).
        jit_backend: py-jit's ``torch.compile`` backend (``"eager"``: Dynamo's capture
            without Inductor's code generation).
        workers: cpp-dispatch's workers (devices, one thread each).
        scheduler: cpp-dispatch's scheduler.
        progress: called with one line per compile step.
        no_grad: run the model's calls under ``torch.no_grad()`` (values only).

    Returns:
        The :class:`RouteModel`.

    Raises:
        FatalError: an unknown route, a bad input file or model, a failed compile, or a
            route whose runtime is not installed (the message says which package).
    """
    r = route(route_name)
    sub = {k: tuple(v) for k, v in (sub_batch or {}).items()}
    if r.artifact:
        if artifact is None:
            artifact = build_artifact(
                source,
                model,
                pairs=pairs,
                sub_batch=sub,
                overrides=overrides,
                output_dir=output_dir,
                cache_dir=cache_dir,
                dtype=dtype,
                device=device,
                progress=progress,
            )
        return RouteModel(
            r, _open_artifact(r, artifact, dtype, workers, scheduler), artifact=artifact
        )
    if r.name == "cpp-eager":
        if not isinstance(source, (str, Path)):
            raise FatalError("cpp-eager opens an input file (it loads the model in C++)")
        eager = _runtime_module("neml2.aoti.cpp_eager", r)
        counts = {k: len(v) for k, v in sub.items()}
        dt = str(dtype).removeprefix("torch.")
        impl = eager.Model(
            str(source), model, str(device), dt, list(overrides), sub_batch_ndim=counts
        )
        return RouteModel(r, impl, no_grad=no_grad)
    m = _loaded(source, model, overrides, dtype, device)
    if r.name == "py-jit":
        import neml2

        inputs = {k: len(v) for k, v in sub.items() if k in m.input_spec}
        jit = neml2.compile(m, backend=jit_backend, sub_batch=inputs)
        return RouteModel(r, jit, no_grad=no_grad)
    return RouteModel(r, m, typer=_typer(m, sub), no_grad=no_grad)


def _runtime_module(name: str, r: Route) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise FatalError(
            f"route {r.name} needs {name} (the neml2-aoti-runtime package, built with it): {e}"
        ) from e


def _open_artifact(r: Route, artifact: Any, dtype, workers, scheduler) -> Any:
    """The AOTI route *r* over a compiled artifact."""
    aoti = _runtime_module("neml2.aoti", r)
    if r.name == "py-aoti":
        import neml2

        name = Path(artifact.artifact_dir).name
        return neml2.load_model(artifact.stub_path, name, dtype=dtype)
    if r.name == "cpp-aoti":
        return aoti.Model(artifact.artifact_dir)
    return aoti.DispatchedModel(
        str(artifact.artifact_dir), workers=list(workers), scheduler=scheduler
    )
