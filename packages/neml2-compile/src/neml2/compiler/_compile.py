"""Export a loaded model with a dynamic batch axis and package it with AOT Inductor.

``compile_model(model, options, output_dir)`` writes the artifact::

    DIR/NAME/metadata.json
    DIR/NAME/<device>/NAME_meta.json           per-device metadata: device, dtypes, ../metadata.json
    DIR/NAME/<device>/<dtype>/forward.pt2      outputs
    DIR/NAME/<device>/<dtype>/forward_into.pt2 outputs, into given tensors (--write-into)
    DIR/NAME/<device>/<dtype>/jacobian.pt2     outputs + the requested -d blocks
    DIR/NAME_aoti.i                            HIT stub: type = AOTIModel

The artifact is written atomically: built in a hidden sibling folder
(``DIR/.NAME.<pid>.<random>.partial``, a partial output of
:mod:`neml2.tensors.interrupt`, removed on any error or signal) and renamed to
``DIR/NAME`` only when complete, ``metadata.json`` written last; a previous artifact
there is replaced whole. An interrupted or failed compile leaves the previous artifact
(or none), never a part of one.

Each ``.pt2`` is looked up in a content-addressed cache first: the key hashes
the exported graph (its code, signature and every constant's bytes), the
options that shape it, the target and the torch version, so an unchanged model
recompiles in the seconds an export takes. When the model comes from an input file
(``compile_file``), a *source key* (the rendered input, every parameter's bytes, the
neml2 Python sources, the options) remembers which graph key it exported to, so an
unchanged model skips even the export. Each entry has a manifest (size and sha256 of
its ``.pt2``, written last): an entry that does not match it is recompiled with a
warning, never copied into an artifact.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from neml2.aoti._device_meta import SUFFIX as DEVICE_METADATA_SUFFIX
from neml2.aoti._schema import SCHEMA_VERSION, check_written
from neml2.compiler._defaults import EXAMPLE_BATCH, default_cache_dir
from neml2.compiler._graphs import ForwardGraph, ForwardIntoGraph, JacobianGraph
from neml2.compiler._options import CompileOptions, DerivativePair
from neml2.compiler._sub_batch import infer_sub_batch, probe_inputs
from neml2.compiler._subgraph_constants import inline_loop_literals, inline_subgraph_constants
from neml2.models._inductor import CACHE_KEY as INDUCTOR_KEY
from neml2.models._inductor import code_generation
from neml2.tensors import FatalError, TensorWrapper
from neml2.tensors.interrupt import critical, make_dirs, partial_output

# SCHEMA_VERSION (written into every metadata.json) and DEVICE_METADATA_SUFFIX (how the
# per-device metadata file of each ``<device>/`` folder is named: NAME + this) come from
# the runtime, which owns the artifact contract (neml2/aoti/artifact_schema.json).
#: Bumped whenever the graphs built for the same model change (part of the cache key).
GRAPH_VERSION = 5
DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass
class GraphReport:
    """One compiled graph: where it went, whether the cache had it, how long it took.

    Attributes:
        name: the graph, ``"forward"``, ``"forward_into"`` or ``"jacobian"``.
        device: the target device, ``"cpu"`` or ``"cuda"``.
        dtype: the target dtype, ``"float64"`` or ``"float32"``.
        path: the ``.pt2`` file written, ``DIR/NAME/<device>/<dtype>/<name>.pt2``.
        key: the content-addressed cache key of the graph (a hex digest).
        cache_hit: whether the ``.pt2`` came from the cache.
        export_s: seconds spent in ``torch.export`` (0 when a source key made the
            export unnecessary).
        compile_s: seconds spent compiling or copying from the cache, after
            the export.
    """

    name: str
    device: str
    dtype: str
    path: Path
    key: str
    cache_hit: bool
    export_s: float
    compile_s: float


@dataclass
class CompileResult:
    """What :func:`compile_model` built.

    Attributes:
        artifact_dir: the artifact directory, ``DIR/NAME``.
        metadata_path: ``DIR/NAME/metadata.json``.
        stub_path: the HIT stub, ``DIR/NAME_aoti.i``.
        metadata: the content of ``metadata.json``.
        graphs: one report per compiled graph, per target.
        device_metadata_paths: device -> its ``<device>/NAME_meta.json``.
    """

    artifact_dir: Path
    metadata_path: Path
    stub_path: Path
    metadata: dict[str, Any]
    graphs: list[GraphReport] = field(default_factory=list)
    #: device -> its ``<device>/NAME_meta.json`` (see :func:`device_metadata`)
    device_metadata_paths: dict[str, Path] = field(default_factory=dict)

    @property
    def cache_hits(self) -> int:
        """How many of the graphs came from the cache (``int``)."""
        return sum(g.cache_hit for g in self.graphs)

    def summary(self) -> str:
        """Describe the compile in a few lines, as ``neml2-compile`` prints it.

        Returns:
            The artifact directory, one line per graph (export time, and compile
                time or ``cache hit``) and the stub path, newline-separated.
        """
        lines = [f"artifact {self.artifact_dir}"]
        for g in self.graphs:
            how = "cache hit" if g.cache_hit else f"compiled in {g.compile_s:.1f} s"
            lines.append(f"  {g.device}/{g.dtype}/{g.path.name}: export {g.export_s:.1f} s, {how}")
        lines.append(f"stub {self.stub_path}")
        return "\n".join(lines)


# ---------------------------------------------------------------------- model description
def _type_name(t: type) -> str:
    return t.__name__


def resolve_pairs(model, pairs: list[DerivativePair]) -> list[tuple[str, str]]:
    """Expand ``stress:``, ``:strain``, ``:`` to concrete ``(out, in)`` pairs (model order)."""
    outs, ins = list(model.output_spec), list(model.input_spec)
    chosen: set[tuple[str, str]] = set()
    for p in pairs:
        if p.output is not None and p.output not in outs:
            raise FatalError(f"-d {p}: '{p.output}' is not an output; outputs: {', '.join(outs)}")
        if p.input is not None and p.input not in ins:
            if _names_parameter(model, p.input):
                raise FatalError(
                    f"-d {p}: '{p.input}' is a parameter, and derivatives are compiled "
                    "w.r.t. inputs only; give it by an input variable in the input file "
                    "(e.g. coefficients = 'youngs_modulus 0.3') and ask for that variable "
                    "(docs/aoti.md, Parameter derivatives)"
                )
            raise FatalError(f"-d {p}: '{p.input}' is not an input; inputs: {', '.join(ins)}")
        for o in outs if p.output is None else [p.output]:
            for i in ins if p.input is None else [p.input]:
                chosen.add((o, i))
    return [(o, i) for o in outs for i in ins if (o, i) in chosen]


def _names_parameter(model, name: str) -> bool:
    """Whether *name* is one of *model*'s parameters or buffers: ``E``, ``elasticity.E``,
    or a dotted name's last parts (``E`` for ``elasticity.E``)."""
    known = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    return any(k == name or k.endswith("." + name) or name.endswith("." + k) for k in known)


def resolve_parameters(model, names: list[str], model_name: str) -> list[str]:
    """Map ``-p`` names onto the model's parameter/buffer names (``NAME.`` prefix optional)."""
    known = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    out = []
    for p in names:
        q = p
        if q not in known and q.startswith(model_name + "."):
            q = q[len(model_name) + 1 :]
        if q not in known:
            raise FatalError(
                f"-p {p}: model '{model_name}' has no parameter '{p}'; "
                f"parameters: {', '.join(known) or '(none)'}"
            )
        if q in out:
            raise FatalError(f"-p {p}: given twice")
        out.append(q)
    return out


def _solver_settings(model) -> list[dict[str, Any]]:
    out = []
    for name, m in model.named_modules():
        solver = getattr(m, "solver", None)
        if solver is None or not hasattr(solver, "opts"):
            continue
        entry = {"model": name or model_name_of(model), "solver": type(solver).__name__}
        entry["options"] = {k: v for k, v in solver.opts.items() if _jsonable(v)}
        lin = getattr(solver, "linear", None)
        if lin is not None:
            entry["linear_solver"] = type(lin).__name__
        out.append(entry)
    return out


def model_name_of(model) -> str:
    return getattr(model, "hit_name", None) or type(model).__name__


def _jsonable(v) -> bool:
    try:
        json.dumps(v)
        return True
    except TypeError:
        return False


def _tensor_entry(name: str, t: torch.Tensor, exposed: bool = True) -> dict[str, Any]:
    """A graph input holding a parameter's value; ``exposed``: a ``-p`` promoted one
    (in ``named_parameters()``), else an internal constant the runtimes pass along."""
    return {
        "name": name,
        "shape": list(t.shape),
        "value": t.detach().to("cpu", torch.float64).flatten().tolist(),
        "exposed": exposed,
    }


# ---------------------------------------------------------------------- export
def example_inputs(
    model,
    batch: int,
    dtype: torch.dtype,
    device: str,
    sub: dict | None = None,
    examples: Mapping[str, TensorWrapper] | None = None,
) -> list[torch.Tensor]:
    """The inputs a graph is exported at, raw, at ``(batch, *sub_batch, *base)``: the
    *examples* (e.g. what the input file's driver feeds the model,
    :mod:`neml2.compiler._examples`) repeated over the batch where given, elsewhere
    deterministic, non-degenerate made-up values."""
    return [x.data for x in probe_inputs(model, batch, sub or {}, dtype, device, examples=examples)]


def export_graph(
    graph: torch.nn.Module,
    xs: list[torch.Tensor],
    params: list[torch.Tensor],
    outs: list[torch.Tensor] = (),  # type: ignore[assignment]
):
    """``torch.export`` with one dynamic batch axis shared by every model input (and by
    the output tensors ``outs`` a ``forward_into`` graph writes into), with grad mode off
    (the graphs compute derivatives by forward tangents, never autograd; and torch 2.13's
    export loses the line search's inner loop when a grad-mode switch surrounds it)."""
    batch = torch.export.Dim("batch", min=1, max=2**31 - 2)
    shapes = tuple([{0: batch}] * len(xs) + [None] * len(params) + [{0: batch}] * len(outs))
    try:
        # forward(*args): the whole varargs tuple is one argument to export
        with torch.no_grad():
            return torch.export.export(
                graph, (*xs, *params, *outs), dynamic_shapes=(shapes,), strict=False
            )
    except Exception as e:  # torch raises many types here; the message is what matters
        raise FatalError(
            f"torch.export failed for the {type(graph).__name__} of model "
            f"'{model_name_of(graph.model)}': {type(e).__name__}: {e}"
        ) from e


def _output_buffers(model, graph, n: int, dtype, device, out_sub) -> list[torch.Tensor]:
    """The example output tensors a ``forward_into`` graph writes into (none for the
    others): ``(N, *sub, *base)`` per output at the example batch ``N``, from the
    declared shapes (no evaluation: calling the graph eagerly with its lifted parameters
    left an implicit model's parameters as plain tensors, which the export then refused)."""
    if not isinstance(graph, ForwardIntoGraph):
        return []
    return [
        torch.empty(
            (n, *out_sub[name], *t.BASE_SHAPE),
            dtype=getattr(t, "STORAGE_DTYPE", None) or dtype,
            device=device,
        )
        for name, t in model.output_spec.items()
    ]


def graph_key(ep, extra: dict[str, Any]) -> str:
    """Content hash of an exported program plus everything else that shapes its binary."""
    h = hashlib.sha256()
    h.update(json.dumps(extra, sort_keys=True).encode())
    # the code of every subgraph too (while_loop bodies hold most of an implicit model)
    for name, gm in sorted(ep.graph_module.named_modules(), key=lambda kv: kv[0]):
        if isinstance(gm, torch.fx.GraphModule):
            h.update(name.encode())
            h.update(gm.code.encode())
    h.update(str(ep.graph_signature).encode())
    h.update(str(ep.range_constraints).encode())
    for name, t in sorted({**ep.state_dict, **ep.constants}.items()):
        h.update(name.encode())
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def _sources_digest() -> str:
    """Hash of every Python source of the installed ``neml2`` namespace packages (a code
    change anywhere in the library invalidates the source keys, not the graph keys)."""
    import neml2

    h = hashlib.sha256()
    for root in sorted(str(p) for p in neml2.__path__):
        for f in sorted(Path(root).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def source_key(source_text: str, model, extra: dict[str, Any]) -> str:
    """Key of one graph by what defines it, without exporting it."""
    h = hashlib.sha256()
    h.update(source_text.encode())
    h.update(json.dumps(extra, sort_keys=True).encode())
    h.update(_sources_digest().encode())
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    for name, t in sorted(state.items()):
        t = t.detach().cpu().contiguous()
        h.update(f"{name}{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    return "src-" + h.hexdigest()[:32]


def _aoti(ep, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".pt2")
    os.close(fd)
    try:
        # Inductor's settings and its mended loop planning: neml2.models._inductor
        with code_generation():
            torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


@dataclass
class _Plan:
    """What a compile or an export builds for one model: its derivative pairs, sub-batch
    shapes, promoted and literal parameters, and graphs (every target shares them)."""

    pairs: list[tuple[str, str]]
    in_sub: dict[str, tuple[int, ...]]
    out_sub: dict[str, tuple[int, ...]]
    promoted: list[str]
    literal: list[str]
    graphs: dict[str, torch.nn.Module]
    #: sub-batch shapes guessed from the model's parameters (one line each)
    notes: list[str]


def _check_example_batch(example_batch: int | None) -> int:
    if example_batch is None:
        return EXAMPLE_BATCH
    if example_batch < 2:
        raise FatalError(
            f"--example-batch-shape {example_batch}: must be at least 2 (torch specialises "
            "a batch of 0 or 1 into the graph)"
        )
    return example_batch


def _plan(model, options: CompileOptions, examples: Mapping[str, TensorWrapper] | None) -> _Plan:
    pairs = resolve_pairs(model, options.derivatives)
    notes: list[str] = []
    in_sub, out_sub = infer_sub_batch(model, options.sub_batch, examples, notes)
    promoted = resolve_parameters(model, options.parameters, options.model)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    # Every other 0-dim parameter is written into the graphs as a literal
    # (_Graph.set_literals): Inductor folds what depends on it alone into constants.
    literal = [
        n for n, t in state.items() if n not in promoted and t.dim() == 0 and t.is_floating_point()
    ]
    graphs: dict[str, torch.nn.Module] = {"forward": ForwardGraph(model, promoted, in_sub)}
    if options.write_into:
        graphs["forward_into"] = ForwardIntoGraph(model, promoted, in_sub)
    if pairs:
        graphs["jacobian"] = JacobianGraph(model, promoted, in_sub, pairs)
    return _Plan(pairs, in_sub, out_sub, promoted, literal, graphs, notes)


def _target_inputs(plan: _Plan, model, dtype, device, example_batch, examples):
    """Move *model* to the target; ``(model, example inputs, promoted parameters)``."""
    m = model.to(dtype=dtype, device=device)
    st = {**dict(m.named_parameters()), **dict(m.named_buffers())}
    for g in plan.graphs.values():
        g.model = m
        g.set_literals(st, plan.literal)
    xs = example_inputs(m, example_batch, dtype, device, plan.in_sub, examples)
    ps = [st[p].detach().clone() for p in plan.promoted]
    return m, xs, ps


def _export(plan: _Plan, m, gname: str, xs, ps, example_batch: int, dtype, device, name: str):
    """Export the graph *gname* of model *name* and apply the passes that prepare it for
    AOT Inductor."""
    graph = plan.graphs[gname]
    with torch.no_grad():
        outs = _output_buffers(m, graph, example_batch, dtype, device, plan.out_sub)
        ep = export_graph(graph, xs, ps, outs)
    inline_subgraph_constants(ep, f"the {gname} graph of model '{name}'")
    inline_loop_literals(ep)
    return ep


@dataclass
class ExportedModel:
    """What :func:`export_model` built: the exported graphs of one model, one target.

    Attributes:
        programs: graph name (``"forward"``, ``"forward_into"``, ``"jacobian"``) -> its
            ``torch.export.ExportedProgram``, as AOT Inductor would compile it.
        input_sub_batch: input name -> its sub-batch shape in the graphs.
        output_sub_batch: output name -> its sub-batch shape.
        example_batch: the batch size of the example inputs.
        example_source: where the example values came from (e.g. ``"[Drivers/driver]
            (the inputs of step 1 of its transient run)"``); empty: made up.
        notes: the sub-batch shapes guessed from the model's parameters, one line each.
    """

    programs: dict[str, Any]
    input_sub_batch: dict[str, tuple[int, ...]]
    output_sub_batch: dict[str, tuple[int, ...]]
    example_batch: int
    example_source: str = ""
    notes: list[str] = field(default_factory=list)


def export_model(
    model,
    options: CompileOptions | None = None,
    *,
    examples: Mapping[str, TensorWrapper] | None = None,
    example_batch: int | None = None,
    device: str = "cpu",
    dtype: str = "float64",
) -> ExportedModel:
    """Export a model's graphs as ``neml2-compile`` does, without compiling them.

    The stage of :func:`compile_model` before AOT Inductor: settle the sub-batch
    shapes (one eager probe call), make the example inputs, ``torch.export`` each graph
    with a dynamic batch axis, apply the passes that prepare it for AOT Inductor. It
    takes seconds where the AOTI compile takes minutes, so it checks that a model
    can be captured as one graph (``neml2.compiler.export_file`` does it for an
    input file, with the example inputs the file gives).

    Args:
        model (neml2.models.Model): the model, as ``neml2.load_model`` returns it; it
            is moved to *device* / *dtype* while exporting, and back after.
        options: which graphs (``derivatives``: the ``jacobian`` graph,
            ``write_into``: ``forward_into``), promoted parameters and declared
            sub-batch shapes (default ``None``: the forward graph alone).
        examples: example values of inputs, typed, any batch shape (default ``None``:
            made-up values): their sub-batch shapes and values are used where
            ``options.sub_batch`` declares none.
        example_batch: the batch size of the example inputs (default ``None``:
            ``EXAMPLE_BATCH``, 1024; at least 2).
        device: the target device, ``"cpu"`` or ``"cuda"`` (default ``"cpu"``).
        dtype: the target dtype, ``"float64"`` or ``"float32"`` (default ``"float64"``).

    Returns:
        The exported programs and the sub-batch shapes.

    Raises:
        FatalError: *example_batch* below 2; a derivative pair or promoted parameter
            the model does not have; sub-batch shapes that cannot be settled (the probe
            call fails); ``torch.export`` failing on a graph (the message names the
            graph, the model and torch's error).
    """
    example_batch = _check_example_batch(example_batch)
    if options is None:
        options = CompileOptions(model=model_name_of(model))
    if dtype not in DTYPES:
        raise FatalError(f"dtype {dtype!r}: choose from {', '.join(DTYPES)}")
    if device == "cuda" and not torch.cuda.is_available():
        raise FatalError("--device cuda: torch sees no CUDA device on this machine")
    plan = _plan(model, options, examples)
    first = next(
        (t for t in (*model.parameters(), *model.buffers()) if t.is_floating_point()), None
    )
    back = (first.dtype, first.device) if first is not None else (torch.float64, "cpu")
    try:
        m, xs, ps = _target_inputs(plan, model, DTYPES[dtype], device, example_batch, examples)
        programs = {
            g: _export(plan, m, g, xs, ps, example_batch, DTYPES[dtype], device, options.model)
            for g in plan.graphs
        }
    finally:
        model.to(dtype=back[0], device=back[1])
    return ExportedModel(programs, plan.in_sub, plan.out_sub, example_batch, notes=plan.notes)


# ---------------------------------------------------------------------- driver
def compile_model(
    model,
    options: CompileOptions,
    output_dir: str | Path,
    *,
    source: str | None = None,
    source_text: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    example_batch: int | None = None,
    progress: Callable[[str], None] | None = None,
    examples: Mapping[str, TensorWrapper] | None = None,
) -> CompileResult:
    """Export and AOTI-compile a loaded model into an artifact.

    Writes ``DIR/NAME/metadata.json``, ``DIR/NAME/<device>/<dtype>/*.pt2``
    (``forward``, and ``forward_into`` and ``jacobian`` where requested), one
    ``DIR/NAME/<device>/NAME_meta.json`` per device and the HIT stub
    ``DIR/NAME_aoti.i`` (``DIR``: *output_dir*, ``NAME``: ``options.model``).
    Each ``.pt2`` is looked up in the content-addressed cache first. ``DIR/NAME`` is
    built aside and renamed into place complete (replacing a previous artifact whole);
    on any error or signal it stays as it was.

    Args:
        model (neml2.models.Model): the model to compile, as
            ``neml2.load_model`` returns it. It is moved to each target's dtype
            and device while compiling, and set back to float64 afterwards (on
            the last target's device).
        options: what to build: the name, derivative blocks, promoted
            parameters, targets, sub-batch shapes, ``forward_into``.
        output_dir: the directory ``DIR`` the artifact and stub are written in.
        source: recorded as ``source`` in ``metadata.json`` (:func:`compile_file`
            passes the input file's path); default ``None``.
        source_text: the text that defined the model (:func:`compile_file`
            passes the rendered input file); with it, an unchanged model is
            found in the cache without an export. Default ``None``: every graph
            is exported.
        cache_dir: the compile cache (default ``None``: :func:`default_cache_dir`).
        use_cache: whether to read and write the cache (default ``True``).
        example_batch: the batch size of the example inputs used for export,
            also Inductor's size hint for its loops (default ``None``:
            ``EXAMPLE_BATCH``, 1024).
        progress: called with one line of text per step (default ``None``:
            silent).
        examples: example values of the model's inputs, typed, any batch shape
            (:func:`compile_file` passes what the input file's ``[Drivers]`` feed the
            model); their sub-batch shapes are used where ``options.sub_batch``
            declares none, their values (valid points of the model) in the probe call
            and the export. Default ``None``: made-up values.

    Returns:
        The paths written, the metadata and one report per graph and target.

    Raises:
        FatalError: *example_batch* below 2; ``DIR/NAME`` exists and is not an
            artifact folder (a file, or a folder holding other files than ``.pt2`` and
            ``.json``); a derivative pair or promoted
            parameter the model does not have; sub-batch shapes that cannot be
            settled; ``cuda`` requested but no CUDA device; AOT Inductor
            failing on a graph (the message keeps its first line).
    """
    example_batch = _check_example_batch(example_batch)
    say = progress or (lambda s: None)
    name = options.model
    out_dir = Path(output_dir)
    art = out_dir / name
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    plan = _plan(model, options, examples)
    pairs, in_sub, out_sub, graphs = plan.pairs, plan.in_sub, plan.out_sub, plan.graphs
    promoted = plan.promoted
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    for line in plan.notes:
        say(line)

    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "format": "neml2-aoti",
        "torch_version": torch.__version__,
        "neml2_compile_version": _version(),
        "model": name,
        "source": source,
        "batch": {"dynamic_axes": 1, "min": 1, "example": example_batch},
        "inputs": [
            {
                "name": n,
                "type": _type_name(t),
                "base_shape": list(t.BASE_SHAPE),
                "sub_batch": list(in_sub[n]),
            }
            for n, t in model.input_spec.items()
        ],
        "outputs": [
            {
                "name": n,
                "type": _type_name(t),
                "base_shape": list(t.BASE_SHAPE),
                "sub_batch": list(out_sub[n]),
            }
            for n, t in model.output_spec.items()
        ],
        "derivatives": [{"output": o, "input": i} for o, i in pairs],
        "requested_derivatives": [str(p) for p in options.derivatives],
        "parameters": [
            *(_tensor_entry(p, state[p]) for p in promoted),
        ],
        "solvers": _solver_settings(model),
        "graphs": {
            "forward": {
                "file": "forward.pt2",
                "outputs": list(model.output_spec),
                "status": graphs["forward"].status,
            },
            **(
                {
                    "forward_into": {
                        "file": "forward_into.pt2",
                        "outputs": list(model.output_spec),
                        "status": graphs["forward"].status,
                    }
                }
                if options.write_into
                else {}
            ),
            **(
                {
                    "jacobian": {
                        "file": "jacobian.pt2",
                        "outputs": [*model.output_spec, *(f"{o}:{i}" for o, i in pairs)],
                        "status": graphs["forward"].status,
                    }
                }
                if pairs
                else {}
            ),
        },
        "targets": [],
    }

    result = CompileResult(art, art / "metadata.json", out_dir / f"{name}_aoti.i", meta)
    final = _replaceable(art)
    # The artifact is built in a hidden sibling folder, a partial output (removed on any
    # error or signal, by the supervisor if the process is killed), and renamed into place
    # complete, metadata.json written last: DIR/NAME is the previous artifact or the new
    # one, never a part of one.
    with contextlib.ExitStack() as partial:
        with critical():
            try:
                created = make_dirs(final.parent)
            except OSError as e:
                raise FatalError(
                    f"output directory '{out_dir}': cannot create it: {e.strerror or e}"
                ) from None
            build = final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
            partial.enter_context(partial_output(build, created))
        build.mkdir()
        for device in options.devices:
            if device == "cuda" and not torch.cuda.is_available():
                raise FatalError("--device cuda: torch sees no CUDA device on this machine")
            for dtype_name in options.dtypes:
                dtype = DTYPES[dtype_name]
                target = build / device / dtype_name
                m, xs, ps = _target_inputs(plan, model, dtype, device, example_batch, examples)
                for gname in graphs:
                    extra = {
                        "graph": gname,
                        "graph_version": GRAPH_VERSION,
                        "device": device,
                        "dtype": dtype_name,
                        "torch": torch.__version__,
                        "python": sys.version_info[:2],
                        "pairs": pairs,
                        "promoted": promoted,
                        # the example batch is the size hint Inductor plans loops with
                        # (e.g. whether a kernel gets an OpenMP parallel region)
                        "example_batch": example_batch,
                        "inductor": INDUCTOR_KEY,
                    }
                    skey = None
                    if use_cache and source_text is not None:
                        skey = source_key(
                            source_text,
                            m,
                            {**extra, "model": name, "batch": example_batch, "sub": in_sub},
                        )
                    what = f"[{name}] {device}/{dtype_name}/{gname}"
                    dest = target / f"{gname}.pt2"
                    t0 = time.perf_counter()
                    t_export = 0.0
                    key = _read_key(cache / f"{skey}.key") if skey else None
                    # the source key names a graph key: reuse its entry without an export
                    hit = key is not None and _reuse_entry(cache, key, dest, what)
                    ep = None
                    if not hit:
                        say(f"{what}: exporting ...")
                        t1 = time.perf_counter()
                        ep = _export(plan, m, gname, xs, ps, example_batch, dtype, device, name)
                        exported = graph_key(ep, extra)
                        t_export = time.perf_counter() - t1
                        if use_cache and exported != key:
                            hit = _reuse_entry(cache, exported, dest, what)
                        key = exported
                    if hit:
                        how = "no export" if ep is None else "exported"
                        say(f"{what}: cache hit ({key[:12]}, {how})")
                    else:
                        assert ep is not None
                        say(f"{what}: AOT Inductor compile ...")
                        try:
                            _aoti(ep, dest)
                        except Exception as e:  # Inductor raises many types; keep the message
                            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                            raise FatalError(
                                f"AOT Inductor failed on the {gname} graph of model '{name}' "
                                f"({device}/{dtype_name}): {type(e).__name__}: {first}"
                            ) from e
                        if use_cache:
                            _store_entry(cache, key, dest)
                    if skey:
                        _write_text(cache / f"{skey}.key", key)
                    t_compile = time.perf_counter() - t0 - t_export
                    if not hit:
                        say(
                            f"[{name}] {device}/{dtype_name}/{gname}: done in "
                            f"{t_export + t_compile:.1f} s"
                        )
                    shown = art / device / dtype_name / dest.name  # where it will be
                    result.graphs.append(
                        GraphReport(gname, device, dtype_name, shown, key, hit, t_export, t_compile)
                    )
                meta["targets"].append(
                    {
                        "device": device,
                        "dtype": dtype_name,
                        "graphs": {g: f"{device}/{dtype_name}/{g}.pt2" for g in graphs},
                    }
                )
        model.to(dtype=torch.float64)

        check_written("metadata", meta)
        for device in options.devices:
            file = f"{name}{DEVICE_METADATA_SUFFIX}"
            record = device_metadata(device, options.dtypes)
            _write_text(build / device / file, json.dumps(record, indent=2) + "\n")
            result.device_metadata_paths[device] = art / device / file
        _write_text(build / "metadata.json", json.dumps(meta, indent=2) + "\n")  # last
        with critical():
            _install(build, final)
            _write_text(result.stub_path, stub_text(name, meta))
    say(result.summary())
    return result


def device_metadata(device: str, dtypes: list[str]) -> dict[str, Any]:
    """The content of ``<device>/NAME_meta.json``: the one path that names both an
    artifact and a device (``neml2.aoti.Model("out/elasticity/cpu/elasticity_meta.json")``).

    ``metadata`` is the artifact's ``metadata.json`` relative to the file's folder;
    ``dtypes`` are the dtype folders compiled for *device*. ``neml2.aoti`` reads it.
    """
    record = {
        "schema_version": SCHEMA_VERSION,
        "device": device,
        "dtypes": list(dtypes),
        "metadata": "../metadata.json",
    }
    check_written("device_metadata", record)
    return record


def stub_text(name: str, meta: dict[str, Any]) -> str:
    """The relocatable HIT stub: ``artifact_path`` is relative to the stub's directory."""
    ins = ", ".join(f"{i['name']} ({i['type']})" for i in meta["inputs"])
    outs = ", ".join(f"{o['name']} ({o['type']})" for o in meta["outputs"])
    return (
        f"# Compiled by neml2-compile (torch {meta['torch_version']}); do not edit.\n"
        f"# inputs:  {ins}\n# outputs: {outs}\n"
        "[Models]\n"
        f"  [{name}]\n"
        "    type = AOTIModel\n"
        f"    artifact_path = '{name}'\n"
        "  []\n"
        "[]\n"
    )


def _read_key(path: Path) -> str | None:
    """The graph key a source-key file names; None when absent, or (with a warning) when
    it is not a key: the graph is exported again and the file rewritten."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        text = f"<unreadable: {e}>"
    if _KEY.fullmatch(text):
        return text
    warnings.warn(
        f"neml2-compile cache: source-key file {path} does not hold a graph key "
        f"({text[:40]!r}); exporting the graph again",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


# ---------------------------------------------------------------------- cache entries
# An entry is ``<key>.pt2`` and its manifest ``<key>.json`` (size and sha256 of the .pt2),
# the manifest written last and atomically: an entry without one (an interrupted store,
# an older neml2-compile) or whose file does not match it (truncated, altered) is never
# copied into an artifact; the graph is recompiled with a warning and the entry replaced.

#: a graph key: 32 hex digits (``graph_key``)
_KEY = re.compile(r"[0-9a-f]{32}")
CACHE_MANIFEST_FORMAT = "neml2-compile-cache-entry"
CACHE_MANIFEST_VERSION = 1
_CHUNK = 1 << 20


def _manifest_path(cache: Path, key: str) -> Path:
    return cache / f"{key}.json"


def _copy_hashing(src: Path, dst) -> tuple[int, str]:
    """Copy *src* into the open binary file *dst*; ``(bytes, sha256 hex)`` of what was
    read."""
    h = hashlib.sha256()
    n = 0
    with open(src, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            dst.write(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _file_digest(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _entry_problem(cache: Path, key: str) -> tuple[str, dict[str, Any] | None]:
    """``("", manifest)`` for an entry with a well-formed manifest and a file to check;
    ``("absent", None)`` when the cache has neither file; else what is wrong with it."""
    pt2, man = cache / f"{key}.pt2", _manifest_path(cache, key)
    if not pt2.exists() and not man.exists():
        return "absent", None
    try:
        manifest = json.loads(man.read_text())
    except FileNotFoundError:
        return (
            f"{man} is missing (a store was interrupted, or an older neml2-compile wrote "
            f"{pt2.name}): its file cannot be verified"
        ), None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return f"{man} is unreadable: {type(e).__name__}: {e}", None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != CACHE_MANIFEST_FORMAT
        or manifest.get("file") != pt2.name
        or not isinstance(manifest.get("size"), int)
        or not isinstance(manifest.get("sha256"), str)
    ):
        return f"{man} is not a cache manifest for {pt2.name}", None
    if not pt2.is_file():
        return f"{pt2} is missing (its manifest {man.name} is there)", None
    return "", manifest


def _reuse_entry(cache: Path, key: str, dest: Path, what: str) -> bool:
    """Copy the cache entry *key* to *dest* if its manifest vouches for the copy.

    The bytes are hashed as they are copied, into a temporary file next to *dest* that
    replaces *dest* only when size and sha256 match the manifest: a truncated or altered
    entry never reaches an artifact. A damaged entry is a warning (naming the entry and
    its file) and False: the caller recompiles. An absent entry is False, silently.
    """
    problem, manifest = _entry_problem(cache, key)
    if problem == "absent":
        return False
    if not problem:
        assert manifest is not None
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.stem}.", suffix=".pt2")
        try:
            with os.fdopen(fd, "wb") as out:
                size, digest = _copy_hashing(cache / f"{key}.pt2", out)
            if size != manifest["size"]:
                problem = (
                    f"{cache / f'{key}.pt2'} has {size} bytes, its manifest says "
                    f"{manifest['size']} (truncated or rewritten)"
                )
            elif digest != manifest["sha256"]:
                problem = (
                    f"{cache / f'{key}.pt2'} does not match the sha256 in its manifest "
                    f"({digest[:12]}... vs {manifest['sha256'][:12]}...)"
                )
            else:
                os.chmod(tmp, 0o644)
                os.replace(tmp, dest)
                return True
        except OSError as e:
            problem = f"{cache / f'{key}.pt2'} cannot be copied: {e}"
        finally:
            Path(tmp).unlink(missing_ok=True)
    warnings.warn(
        f"neml2-compile cache: entry {key} ({what}) is damaged: {problem}; "
        "recompiling it (the entry is not used)",
        RuntimeWarning,
        stacklevel=3,
    )
    return False


def _store_entry(cache: Path, key: str, compiled: Path) -> None:
    """Put *compiled* into the cache as entry *key*: the old manifest goes first, the
    ``.pt2`` is replaced atomically, and the manifest (size, sha256 of the stored copy,
    read back) is written last, atomically."""
    cache.mkdir(parents=True, exist_ok=True)
    _manifest_path(cache, key).unlink(missing_ok=True)
    tmp = cache / f".{key}.{os.getpid()}.tmp"
    with partial_output(tmp):
        shutil.copyfile(compiled, tmp)
        size, digest = _file_digest(tmp)
        os.replace(tmp, cache / f"{key}.pt2")
    manifest = {
        "format": CACHE_MANIFEST_FORMAT,
        "version": CACHE_MANIFEST_VERSION,
        "file": f"{key}.pt2",
        "size": size,
        "sha256": digest,
    }
    _write_text(_manifest_path(cache, key), json.dumps(manifest, indent=1) + "\n")


def _write_text(path: Path, text: str) -> None:
    """Write *path* atomically (a temporary file renamed over it, a partial output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with partial_output(tmp):
        tmp.write_text(text)
        os.replace(tmp, path)


#: What an artifact folder holds (.pt2 graphs, .json metadata, the .tmp files of an
#: interrupted older compile): a folder holding anything else is not replaced.
_ARTIFACT_SUFFIXES = (".pt2", ".json", ".tmp")


def _replaceable(art: Path) -> Path:
    """Check that the artifact folder *art* may be created or replaced; return the path
    to rename the new artifact to (a symlink's target: the link stays).

    Raises:
        FatalError: *art* is not a directory, or holds a file an artifact does not
            (the folder is not an artifact: replacing it would delete the user's files).
    """
    final = Path(os.path.realpath(art)) if os.path.islink(art) else art
    if not os.path.lexists(final):
        return final
    if not final.is_dir():
        raise FatalError(
            f"output directory: '{final}' exists and is not a directory; the artifact of "
            f"model '{art.name}' goes there: remove it or pick another --output-dir"
        )
    for root, dirs, files in os.walk(final):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(_ARTIFACT_SUFFIXES):
                inner = Path(root, f).relative_to(final)
                raise FatalError(
                    f"output directory: '{final}' holds '{inner}', which is not part of an "
                    "artifact; refusing to replace the folder (it is replaced whole): move "
                    "it away or pick another --output-dir"
                )
    return final


def _install(build: Path, final: Path) -> None:
    """Rename the complete artifact *build* to *final*. A previous artifact there is
    renamed aside first and removed after, so *final* is always one whole artifact,
    old or new (the two renames are microseconds apart)."""
    aside: list[Path] = []
    try:
        for _ in range(16):  # a concurrent compile of the same model may win a round
            try:
                os.rename(build, final)
                return
            except OSError as e:
                if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise FatalError(
                        f"cannot move the artifact into '{final}': {e.strerror or e}"
                    ) from e
            old = final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.old")
            try:
                os.rename(final, old)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise FatalError(
                    f"cannot replace the previous artifact '{final}': {e.strerror or e}"
                ) from e
            aside.append(old)
        raise FatalError(f"cannot move the artifact into '{final}': it keeps being replaced")
    finally:
        for old in aside:
            shutil.rmtree(old, ignore_errors=True)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neml2-compile")
    except PackageNotFoundError:  # pragma: no cover
        return "0+unknown"
