"""Inductor (torch's code generator) as every compiled route of neml2 uses it.

py-jit (:mod:`neml2.models._jit`, ``torch.compile``) and neml2-compile's AOTI
artifacts (``neml2.compiler._compile``) both generate their CPU kernels with Inductor.
Both run that code generation inside :func:`code_generation`, which mends two
code-generation weaknesses of torch 2.13 for as long as it runs:

**Loops shorter than the vector width counted as no work.** Inductor vectorizes the
innermost loop of a kernel; a loop shorter than the vector width (the 6 components of a
symmetric tensor against 8 or 16 lanes) becomes one masked step. When Inductor then
decides where the kernel's OpenMP region goes (``LoopNest.max_parallel_depth``), it
counts each outer loop's steps as ``size // steps``: ``6 // 16 = 0``. The outer loops
(the material points, the components) then look like no work against an inner
reduction (over 12 slip systems, say), and the parallel region moves into the reduction:
one OpenMP fork/join per material point and component. The crystal-plasticity benchmark
ran 10x slower so. :func:`code_generation` counts those steps as ``ceil(size / steps)``
(one masked step is one step) and keeps the parallel region on the outer loops unless
the honest count still puts it inside.

The alternative, turning the masked step off (``cpp.enable_loop_tail_vec``), leaves
every 6-component loop scalar: linear elasticity ran 5x slower (2.3e8 -> 4.6e7 points/s
at 1e3 points on 2 cores). Where this torch has no ``LoopNest.max_parallel_depth`` to
mend, :data:`FIX_APPLIES` is False and :func:`code_generation` turns the masked step off
instead.

**A costly per-point value recomputed for every entry it is broadcast to.** When a
value is broadcast into a larger loop (a per-point factor times a ``(*B, 6, 6)`` block or
``(K, *B, 6)`` tangents), Inductor evaluates it inline at every entry unless it counts
as heavy; on the CPU only ``exp``, ``log``, ``sigmoid``, ``tanh`` and their kin do. A
power, a square root or a trigonometric function was evaluated once per entry:
Perzyna's flow rate ``(f/η)^n`` 36 times per point in its Jacobian, each a vectorized
``pow`` (Sleef's, slower per lane than the scalar one). :func:`code_generation` counts
those functions as heavy too (:data:`HEAVY_OPS`): such a value is stored once per
point and read where it is broadcast.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import sympy
import torch

try:  # torch's private code generator: mended only where it has the known shape
    from torch._inductor.codegen.cpp import LoopNest, ParallelDepth
    from torch.utils._sympy.functions import CeilDiv, FloorDiv

    FIX_APPLIES = callable(getattr(LoopNest, "max_parallel_depth", None))
except ImportError:  # pragma: no cover - a torch without this module
    FIX_APPLIES = False

try:  # the store-or-recompute choice of a reused value
    from torch._inductor import ir as _ir

    REUSE_FIX_APPLIES = callable(getattr(_ir.StorageBox, "should_realize_on_reuse", None))
except ImportError:  # pragma: no cover - a torch without this module
    REUSE_FIX_APPLIES = False

#: the element-wise functions (names of Inductor's ops) that make a value worth storing
#: once rather than evaluating at every entry it is broadcast to (torch counts ``exp``,
#: ``log``, ``sigmoid``, ``tanh`` and their kin already)
HEAVY_OPS = frozenset(
    {
        "pow",
        "sqrt",
        "rsqrt",
        "expm1",
        "exp2",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "erf",
        "erfc",
    }
)

#: Inductor settings of every compiled route.
#:
#: ``cpp.dynamic_threads``: a kernel's OpenMP region takes the calling thread's thread
#: count at run time, and a parallel reduction sizes its per-thread partials with it.
#: Without it, torch 2.13 sizes those partials by the compiling machine's thread count,
#: and a run with more threads writes past them (J2 radial return compiled on 2 cores,
#: run with 4 threads: segmentation fault).
#:
#: ``realize_reads_threshold = 1``: a pointwise value with more than one consumer is
#: stored once, instead of recomputed inside each consumer, as soon as it reads more
#: than one buffer (torch's default: more than four). Forward-mode tangents make this
#: the common case: a per-point factor (``‖X‖^(a-1)`` of a Chaboche back stress, the
#: ``sqrt`` of a von Mises norm) multiplies tangents of shape ``(K, *B, 6)``, and
#: inlined it was evaluated once per seed and component instead of once per point
#: (torch stores a reused value eagerly only for ``exp``, ``log``, ``tanh`` and the
#: like, not for ``pow`` or ``sqrt``). Chaboche 2 py-jit, first step at 1e4 points, one
#: thread: 1.60 s against 2.32 s a call (median of 3; ``pow`` fell from 17 % of the
#: samples to 4 %); J2, Perzyna and elasticity at 1e5 and scp at 1e4 unchanged within
#: the spread, every result bit-identical but scp's (1e-10).
OPTIONS: dict[str, object] = {"cpp.dynamic_threads": True, "realize_reads_threshold": 1}
if not FIX_APPLIES:  # pragma: no cover - see the module docstring
    OPTIONS["cpp.enable_loop_tail_vec"] = False

#: the mends' names and versions (those that apply to this torch). Inductor's own cache
#: of generated code (its FX graph cache) keys on torch's settings, not on a mend:
#: :func:`code_generation` adds this to ``torch.compiler.config.cache_key_tag``, so code
#: generated without a mend is not reused with it, nor the other way round.
FIX_TAG = "+".join(
    tag
    for tag, applies in (
        ("neml2-loop-depth-1", FIX_APPLIES),
        ("neml2-heavy-reuse-1", REUSE_FIX_APPLIES),
    )
    if applies
)
#: what an artifact cache must key on: :data:`OPTIONS` and the mends
CACHE_KEY = {**OPTIONS, "fix": FIX_TAG}

#: torch's threshold: the parallel region moves into an inner loop with 300 times the
#: steps of the loops outside it
_INNER_FACTOR = 300


def _mended(original):
    @functools.wraps(original)
    def max_parallel_depth(self):
        depth = original(self)
        if depth.start_depth == 0:
            return depth
        outer = self.loops[: depth.start_depth]
        if not any(FloorDiv(loop.size, loop.steps) == 0 for loop in outer):
            return depth  # every outer loop counted right: torch's choice stands
        steps = sympy.Integer(1)
        for loop in outer:
            steps = steps * CeilDiv(loop.size, loop.steps)
        inner = self.loops[depth.start_depth]
        if isinstance(steps, sympy.Integer) and steps * _INNER_FACTOR < FloorDiv(
            inner.size, inner.steps
        ):
            return depth  # the inner loop is far longer even counted right
        # the region stays on the outer loops: all of them (they share one kind,
        # reduction or not: that is why torch stopped there)
        return ParallelDepth(parallel_depth=depth.start_depth, start_depth=0)

    max_parallel_depth.neml2_mended = True
    return max_parallel_depth


def _realizing(original):
    @functools.wraps(original)
    def should_realize_on_reuse(self, users, *, graph_reuse=True):
        if original(self, users, graph_reuse=graph_reuse):
            return True
        data = self.data
        if users <= 1 or not isinstance(data, _ir.Pointwise) or not _ir.is_cpu(data):
            return False
        return not HEAVY_OPS.isdisjoint(data.inner_fn_opcount().used_ops)

    should_realize_on_reuse.neml2_mended = True
    return should_realize_on_reuse


@contextlib.contextmanager
def _patched(owner, name: str, mend) -> Iterator[None]:
    """``owner.name`` replaced by ``mend(owner.name)`` inside the block (once: a
    nested block leaves the mended function alone)."""
    original = getattr(owner, name)
    if getattr(original, "neml2_mended", False):
        yield
        return
    setattr(owner, name, mend(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextlib.contextmanager
def code_generation() -> Iterator[None]:
    """Inductor's settings (:data:`OPTIONS`) and the two mends above, for one compile.

    Wrap whatever triggers code generation: ``aoti_compile_and_package``, or the calls
    of a ``torch.compile``'d function (it generates code on its first call and on a
    recompile). Restores torch's own functions on exit; nesting is harmless.
    """
    tag = torch.compiler.config.cache_key_tag
    if FIX_TAG and FIX_TAG not in tag:
        tag = f"{tag}+{FIX_TAG}" if tag else FIX_TAG
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch._inductor.config.patch(OPTIONS))
        stack.enter_context(torch.compiler.config.patch(cache_key_tag=tag))
        if FIX_APPLIES:
            stack.enter_context(_patched(LoopNest, "max_parallel_depth", _mended))
        if REUSE_FIX_APPLIES:
            stack.enter_context(_patched(_ir.StorageBox, "should_realize_on_reuse", _realizing))
        yield


class MendedInductor(torch._TorchCompileInductorWrapper):
    """``torch.compile``'s Inductor backend, compiling inside :func:`code_generation`.

    ``torch.compile(fn, backend=MendedInductor(mode, options, dynamic))`` compiles as
    ``torch.compile(fn, mode=mode, options=options, dynamic=dynamic)`` does, with
    neml2's settings and mends in force while a graph is compiled (its first call, a
    recompile) and only then: a call of the compiled function that reuses its code
    does not enter :func:`code_generation` (26 µs a call, measured on py-jit's
    elasticity).
    """

    def __call__(self, *args, **kwargs):
        with code_generation():
            return super().__call__(*args, **kwargs)
