"""``ImplicitUpdate``: solve a nonlinear system for its unknowns, inside the graph.

Given inputs ``g`` (the system model's other inputs plus the predictor's), the
outputs are the unknowns ``u`` with ``r(u; g) = 0``, found by the configured
Newton solver from the predictor's guess. Derivatives follow from the implicit
function theorem, ``du/dg = -(∂r/∂u)⁻¹ ∂r/∂g``: for ``v=`` tangents (and so
``jvp`` / ``jacobian``) one extra linear solve per seed; for autograd (parameter
calibration) one Newton step ``u* - (∂r/∂u)⁻¹ r(u*)`` recorded on the tape.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping

import torch

from neml2.models._block_seeds import BLOCK_SEED, SEED, block_diagonal, block_diagonal_into
from neml2.models._domain import suspended as domain_checks_suspended
from neml2.models._model import Model, _as_tuple, _typed
from neml2.models._registry import register
from neml2.models._schema import ObjectRefField, model_ref, option
from neml2.solvers._block_jacobian import BlockJacobian, as_dense
from neml2.solvers._layout import Layout
from neml2.tensors import (
    ConvergenceError,
    FatalError,
    TensorWrapper,
    attach,
    broadcast_batch_shapes,
    seed,
    tangents_of,
)
from neml2.tensors._tangents import _tracing

_SEED = SEED
#: ``max_points_per_solve = 0``: an eager solve takes as many points as keep its Jacobian
#: ``(n, n_u, n_u)`` under this many bytes, at most :data:`MAX_POINTS_PER_SOLVE`, and a
#: larger batch is solved in chunks. The tangents that build the Jacobian take several
#: times more (Taylor, 5 grains, n_u = 62: over 24 GB at 1e5 points in one solve, killed).
#: 80 MiB keeps 1e4 points of Chaboche with 4 back stresses (n_u = 31) in one solve: py-eager,
#: 2 cores, 10-step transient at 1e4 points, one solve against three of 3334 (the 32 MiB
#: budget before): first step 1479 -> 1243 ms, later steps 332 -> 250 ms (medians of
#: three, in one process); at 1e5, ten chunks of 1e4 against thirty of 3334: 13.0 -> 10.3 s
#: and 2.63 -> 2.49 s. (Under 32 MiB the blocks of the Jacobian were copied into one
#: matrix and the LU ran on one thread; since they are read in place, and the LU is
#: threaded, larger chunks pay.)
JACOBIAN_BUDGET = 80 * 2**20
#: the most points an automatic chunk takes, whatever the budget allows: at 1e5 points, 5
#: chunks of 2e4 against 2 of 5e4 for Perzyna (n_u = 7): first step 1017 -> 784 ms, later
#: steps 284 -> 227 ms; Chaboche with 2 back stresses (n_u = 19), 5 of 2e4 against 9 of
#: 11112: 5619 -> 5701 ms and 1195 -> 1140 ms (py-eager, 2 cores, medians in one process)
MAX_POINTS_PER_SOLVE = 20_000
#: a system of few unknowns takes more points than :data:`MAX_POINTS_PER_SOLVE`: at most
#: this many points x (n_u + 1) (every intermediate of the residual carries its value and
#: one tangent per unknown, so a point's working set grows with n_u + 1), which leaves
#: n_u >= 7 at the cap above. J2 radial return (n_u = 1) at 1e5 points, py-eager, 2 cores,
#: 6-step transient, first / later steps (medians of six in one process): five chunks of 2e4
#: (the cap above) 209 / 92 ms, one solve 209 / 122 ms, three chunks of 3.4e4 182 / 80 ms,
#: two of 5e4 (this budget's) 179 / 77 ms
MAX_POINT_DIRECTIONS = 160_000
#: batches up to this size are never split
_MIN_CHUNK = 4096


def _batch_of(values: Mapping[str, TensorWrapper], label: str = "") -> tuple[int, ...]:
    """Broadcast dynamic-batch shape of *values* (right-aligned, like torch), each named
    by its key (``"input 'strain'"``): the error names two that do not broadcast."""
    return broadcast_batch_shapes({k: v.dynamic_shape for k, v in values.items()}, label)


def _flat_batch(x: TensorWrapper, batch: tuple[int, ...]) -> TensorWrapper:
    """*x* broadcast to the dynamic batch *batch* and flattened to ``(n, *sub, *base)``
    (*x* itself where it is that already: one dynamic axis of the batch's size)."""
    if len(batch) == 1 and x.dynamic_ndim == 1 and x.data.shape[0] == batch[0]:
        return x
    tail = x.data.shape[x.dynamic_ndim :]
    n = 1
    for b in batch:
        n *= b
    return type(x)(x.data.expand(*batch, *tail).reshape(n, *tail), x.sub_batch_ndim)


def _point_major(x: TensorWrapper, batch: tuple[int, ...], n: int) -> tuple[TensorWrapper, bool]:
    """*x* with its dynamic axes as one axis of points, and whether it holds one entry
    per point: a value that is the same at every point (every dynamic size 1) keeps one
    axis of size 1 (none where it has none); any other is broadcast to *batch* and
    flattened to *n* points."""
    if all(d == 1 for d in x.dynamic_shape):
        if x.dynamic_ndim <= 1:
            return x, False
        return type(x)(x.data.reshape(1, *x.data.shape[x.dynamic_ndim :]), x.sub_batch_ndim), False
    return _flat_batch(x, batch), True


def _parameters_per_point(model: torch.nn.Module) -> bool:
    """Whether a parameter of *model* (or of a model inside it) holds values per batch
    point (a dynamic batch axis longer than 1): then the points of a solve cannot be
    dropped one by one (the parameter's axis would no longer match theirs)."""
    for m in model.modules():
        for name, (typ, sub) in getattr(m, "_param_meta", {}).items():
            raw = getattr(m, name, None)  # none where the parameter is an input
            if isinstance(raw, torch.Tensor):
                dynamic = raw.shape[: raw.dim() - sub - len(typ.BASE_SHAPE)]
                if any(d > 1 for d in dynamic):
                    return True
    return False


def _first_point(x: TensorWrapper) -> TensorWrapper:
    """*x* at the first point of its dynamic batch (all dynamic axes of size 1)."""
    idx = tuple(slice(0, 1) for _ in range(x.dynamic_ndim))
    return type(x)(x.data[idx], x.sub_batch_ndim)


def _jacobian(
    rlay: Layout, tangents, ulay: Layout, batch, like: torch.Tensor, as_blocks: bool = False
) -> torch.Tensor | BlockJacobian:
    """``∂r/∂u`` at ``(*batch, n_r, n_u)`` from the residuals' tangents on the unknown seeds.

    Eagerly, each block is copied once into a preallocated matrix laid out seed-major,
    ``(n_u, *batch, n_r)`` (the layout of the tangents themselves, so every copy is a
    plain strided copy), and returned as a permuted view: no intermediate
    concatenations. With *as_blocks* (one batch axis), no copy at all: the tangents
    themselves, as a :class:`BlockJacobian` for ``DenseLU`` to solve with. Traced
    graphs keep :meth:`Layout.block_rows` (concatenation, which Inductor fuses).
    """
    if _tracing():
        return rlay.block_rows(tangents, ulay, batch, like, prefix=_SEED)
    blocks = []
    for s, r0 in zip(rlay.slots, rlay.offsets, strict=False):
        row = tangents.get(s.name, {})
        for c, c0 in zip(ulay.slots, ulay.offsets, strict=False):
            t = row.get(_SEED + c.name)
            if t is not None:
                blocks.append((s, r0, c, c0, t.data))
    if as_blocks:
        (n,) = batch
        return BlockJacobian(
            [
                (r0, c0, d.expand(c.size, n, *s.trailing).reshape(c.size, n, s.size))
                for s, r0, c, c0, d in blocks
            ],
            rlay.size,
            n,
        )
    shape = (ulay.size, *batch, rlay.size)
    if len(blocks) == len(rlay.slots) * len(ulay.slots):
        buf = like.new_empty(shape)
    else:
        buf = like.new_zeros(shape)
    _copy_blocks(buf, blocks, batch)
    return buf.movedim(0, -1)


def _copy_blocks(buf: torch.Tensor, blocks, batch, add: bool = False) -> None:
    for s, r0, c, c0, d in blocks:
        # d: (K = c.size, *batch', *sub_r, *base_r) -> buf[c0 + k, ..., r0 + (sub_r, base_r)]
        dst = buf[c0 : c0 + c.size, ..., r0 : r0 + s.size]
        dst = dst.unflatten(-1, s.trailing) if s.trailing else dst.squeeze(-1)
        d = d.expand(c.size, *batch, *s.trailing)
        dst.add_(d) if add else dst.copy_(d)


def _jacobian_block_seeded(
    rlay: Layout, tangents, ulay: Layout, batch, like: torch.Tensor, block_u, block_r
) -> torch.Tensor:
    """``∂r/∂u`` ``(*batch, n_r, n_u)`` from tangents in which the unknowns *block_u*
    carry shared per-grain seeds (:mod:`neml2.models._block_seeds`): the residuals
    *block_r* of their group get those columns on the grain diagonal; every other
    residual gets the ordinary columns, which a mean over the grains produced. Eagerly
    written block by block into one seed-major buffer (as :func:`_jacobian`); traced,
    concatenated (:meth:`Layout.block_rows` with :func:`block_diagonal`)."""
    if _tracing():
        # concatenated, as the ordinary traced assembly (Layout.block_rows): writes into
        # views of one buffer would each become a scatter of the whole matrix
        def diagonal(s, c):
            t = tangents.get(s.name, {}).get(BLOCK_SEED + c.name)
            if t is None or c.name not in block_u or s.name not in block_r:
                return None
            g = s.sub[0]
            k, bs = c.size // g, s.size // g
            return block_diagonal(t.data.expand(k, *batch, *s.trailing).reshape(k, *batch, g, bs))

        return rlay.block_rows(tangents, ulay, batch, like, prefix=SEED, extra=diagonal)
    buf = like.new_zeros((ulay.size, *batch, rlay.size))
    plain = []
    for s, r0 in zip(rlay.slots, rlay.offsets, strict=False):
        row = tangents.get(s.name, {})
        for c, c0 in zip(ulay.slots, ulay.offsets, strict=False):
            if c.name in block_u and s.name in block_r:
                t = row.get(BLOCK_SEED + c.name)
                if t is not None:
                    g = s.sub[0]
                    k, bs = c.size // g, s.size // g
                    d = t.data.expand(k, *batch, *s.trailing).reshape(k, *batch, g, bs)
                    block_diagonal_into(buf, c0, r0, g, k, bs, d)
            t = row.get(_SEED + c.name)
            if t is not None:
                plain.append((s, r0, c, c0, t.data))
    _copy_blocks(buf, plain, batch, add=True)  # onto the grain diagonals written above
    return buf.movedim(0, -1)


class SolveStatus:
    """What an implicit update reports about its Newton solves (one per update).

    Off (the default), a solve is checked eagerly, and a failure raises a
    ``ConvergenceError``. :func:`record_solves` turns logging on: every solve then
    appends ``(converged (*B) bool, residual_norm (*B), iterations ())``, which a
    traced graph returns as an output (a compiled route cannot raise in the graph);
    ``check=False`` also skips the eager check (a probe at arbitrary inputs).
    A plain object, not a module attribute swap: Dynamo and ``torch.export`` trace
    its two attribute writes like any Python state.
    """

    def __init__(self) -> None:
        self.log: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] | None = None
        self.check = True


def implicit_updates(model: torch.nn.Module) -> list[ImplicitUpdate]:
    """Every implicit update in *model* (itself included), in module order.

    Args:
        model: any model.

    Returns:
        The ``ImplicitUpdate`` modules, the order ``model.modules()`` visits them.
    """
    return [m for m in model.modules() if isinstance(m, ImplicitUpdate)]


def record_solves(
    updates: list[ImplicitUpdate], *, check: bool = True
) -> list[list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
    """Make each of *updates* log its solves until :func:`stop_recording`.

    Args:
        updates: what :func:`implicit_updates` returned.
        check: whether a failed solve still raises eagerly (``False``: a probe).

    Returns:
        One list per update, in order, that its solves append
        ``(converged (*B), residual_norm (*B), iterations ())`` to.
    """
    logs: list[list] = []
    for m in updates:
        log: list = []
        m.solve_status.log, m.solve_status.check = log, check
        logs.append(log)
    return logs


def stop_recording(updates: list[ImplicitUpdate]) -> None:
    """Turn the logging of :func:`record_solves` off again (and the eager check on).

    Args:
        updates: what was passed to :func:`record_solves`.
    """
    for m in updates:
        m.solve_status.log, m.solve_status.check = None, True


@register()
class ImplicitUpdate(Model):
    """Unknowns ``u`` such that ``r(u; g) = 0`` (Newton inside the graph; IFT derivatives)."""

    fields = (
        ObjectRefField("equation_system", "the [EquationSystems] block", section="EquationSystems"),
        ObjectRefField("solver", "the [Solvers] Newton block", section="Solvers"),
        model_ref("predictor", None, doc="model giving the initial guess of the unknowns"),
        option(
            "max_points_per_solve",
            int,
            0,
            bounds="[0, inf)",
            doc="eager evaluation: solve at most this many material points at once (a larger "
            "batch is solved in chunks, each to the solver's tolerances); 0: as many as keep "
            f"one Jacobian under {JACOBIAN_BUDGET // 2**20} MiB, at most "
            f"{MAX_POINTS_PER_SOLVE} (more for fewer than "
            f"{MAX_POINT_DIRECTIONS // MAX_POINTS_PER_SOLVE - 1} unknowns: "
            f"{MAX_POINT_DIRECTIONS} / (unknowns + 1))",
        ),
    )

    def setup(self) -> None:
        system = self.opts["equation_system"]
        self.system = system
        #: the solves' status, for the traced routes (:func:`record_solves`)
        self.solve_status = SolveStatus()
        self.solver = self.opts["solver"]
        if not hasattr(self.solver, "solve") or not hasattr(self.solver, "check"):
            raise self.error("is not a nonlinear solver (Newton, NewtonWithLineSearch)", "solver")
        self.add_module("implicit_model", system.model)
        pred = self.opts["predictor"]
        self.predictor = pred
        inputs = dict.fromkeys(system.givens)
        if pred is not None:
            # a composed predictor may have further outputs (its trial state): ignored
            if not any(o in system.unknowns for o in pred.output_spec):
                raise self.error(
                    f"predictor outputs ({', '.join(pred.output_spec) or 'none'}) include none "
                    f"of the unknowns ({', '.join(system.unknowns)})",
                    "predictor",
                )
            inputs.update(dict.fromkeys(n for n in pred.input_spec if n not in system.unknowns))
        spec = {**system.model.input_spec, **(pred.input_spec if pred is not None else {})}
        for n in inputs:
            self.declare_input(n, spec[n])
        for u in system.unknowns:
            self.declare_output(u, system.model.input_spec[u])
        # imported here: neml2.solvers registers its types through neml2.models
        from neml2.solvers.linear import DenseLU, SchurComplement, block_lu_applies

        # a DenseLU takes an eager step's Jacobian as its blocks (_as_blocks)
        linear = getattr(self.solver, "linear", None)
        self._block_lu = block_lu_applies if type(linear) is DenseLU else None
        if isinstance(linear, SchurComplement):
            self._schur = self.solver.linear
        else:
            self._schur = None
        # a Krylov solver's block preconditioner takes the unknowns' sizes (set_blocks)
        self._krylov = linear if hasattr(linear, "set_blocks") else None
        # groups declared 'block' (per-grain): their Jacobian block may be seeded per grain
        blocks = [i for i, k in enumerate(system.structure) if k == "block"]
        self._block_u = {u for i in blocks for u in system.unknown_groups[i]}
        self._block_r = {r for i in blocks for r in system.residual_groups[i]}
        self._block_ok: bool | None = None  # checked against the full Jacobian once
        # whether the Schur complement's primary block is block-diagonal over the grains
        # (no grain's residual reads another grain's unknowns, not even through a mean);
        # checked with _block_ok
        self._grain_ok = False
        self._layout_cache: dict = {}  # _shape_key -> (residual layout, batch, sub-batches)

    # ------------------------------------------------------------------ pieces
    def _guess(self, values: dict[str, TensorWrapper]) -> dict[str, TensorWrapper]:
        spec = self.system.model.input_spec
        guess: dict[str, TensorWrapper] = {}
        if self.predictor is not None:
            outs = _as_tuple(self.predictor(*[values[n] for n in self.predictor.input_spec]))
            guess.update(zip(self.predictor.output_spec, outs, strict=True))
        ref = next(iter(values.values()), None)
        dtype = ref.dtype if ref is not None else self.dtype
        device = ref.device if ref is not None else self.device
        for u in self.system.unknowns:
            if u not in guess:
                typ = spec[u]
                guess[u] = typ(torch.zeros(typ.BASE_SHAPE, dtype=dtype, device=device))
            else:
                guess[u] = _typed(guess[u], spec[u]).primal()
        return guess

    def _call(self, values: dict[str, TensorWrapper], v=None):
        m = self.system.model
        args = [values[n] for n in m.input_spec]
        return m(*args, v=v) if v is not None else m(*args)

    def _shape_key(self, given, guess) -> tuple | None:
        """What the residuals' shapes depend on: the type, shape, sub-batch ndim, dtype and
        device of every input and the shapes of the system model's parameters and buffers
        (None when tracing: symbolic shapes)."""
        if _tracing():
            return None
        values = [(n, x) for part in (given, guess) for n, x in part.items()]
        key = [
            (n, type(x), x.data.shape, x.sub_batch_ndim, x.data.dtype, x.data.device)
            for n, x in values
        ]
        m = self.system.model
        key.append(tuple(t.shape for t in (*m.parameters(), *m.buffers())))
        return tuple(key)

    def _layouts(self, given, guess):
        """Unknown and residual layouts and the batch shape, from one residual evaluation.

        The residuals' shapes depend only on the inputs' shapes (:meth:`_shape_key`): an
        eager call whose inputs are shaped as the last one's reuses what that one found
        instead of evaluating the residuals again (each step of a transient run; J2 radial
        return at 1e3 points spent 15 % of a step on that evaluation)."""
        key = self._shape_key(given, guess)
        found = self._layout_cache.get(key) if key is not None else None
        if found is None:
            outs = _as_tuple(self._call({**given, **guess}))
            res = dict(zip(self.system.model.output_spec, outs, strict=True))
            residuals = {r: res[r] for r in self.system.residuals}
            batch = _batch_of(
                {
                    **{f"input '{n}'": x for n, x in given.items()},
                    **{f"unknown '{n}'": x for n, x in guess.items()},
                    **{f"residual '{n}'": x for n, x in residuals.items()},
                },
                self._label(),
            )
            rlay = Layout.of(residuals, self.system.residuals)
            # the residuals' sub-batch shapes, which the unknowns take on where theirs is shorter
            subs = {
                r: tuple(x.batch_shape[x.batch_ndim - x.sub_batch_ndim :])
                for r, x in residuals.items()
            }
            found = (rlay, batch, subs)
            if key is not None:
                self._layout_cache = {key: found}  # the last shapes only
        rlay, batch, subs = found
        shaped = {}
        for u, r in zip(self.system.unknowns, self.system.residuals, strict=True):
            g = guess[u]
            shaped[u] = (
                g
                if g.sub_batch_ndim >= len(subs[r])
                else type(g)(
                    g.data.expand(
                        *g.batch_shape[: g.batch_ndim - g.sub_batch_ndim],
                        *subs[r],
                        *g.base_shape,
                    ),
                    len(subs[r]),
                )
            )
        ulay = Layout.of(shaped, self.system.unknowns)
        if rlay.size != ulay.size:
            raise self.error(
                f"the system has {rlay.size} residual entries but {ulay.size} unknown entries "
                "per point"
            )
        return ulay, rlay, batch, shaped

    @staticmethod
    def _values_of(given, ulay: Layout):
        """``values(u, datas)``: the typed inputs of the system model from the flat
        unknowns and the raw data of *given* (in its order)."""
        names = list(given)
        kinds = [(type(given[n]), given[n].sub_batch_ndim) for n in names]

        def values(u, datas):
            vals = {n: k(d, s) for n, (k, s), d in zip(names, kinds, datas, strict=True)}
            vals.update(ulay.unflatten(u))
            return vals

        return values

    def _flat_residuals(self, outs, rlay: Layout, batch) -> torch.Tensor:
        """``(*batch, n_r)``: the residuals among the system model's outputs *outs*, packed."""
        res = dict(zip(self.system.model.output_spec, outs, strict=True))
        return rlay.flatten({n: res[n] for n in rlay.names}, batch)

    def _as_blocks(self, u: torch.Tensor, ulay: Layout, rlay: Layout) -> bool:
        """Whether the Jacobian at *u* (``(N, n)``, eagerly) goes to the linear solver as
        its blocks (:class:`BlockJacobian`): the linear solver is a ``DenseLU`` and its
        block operator takes the systems (``block_lu_applies``)."""
        return (
            self._block_lu is not None
            and u.dim() == 2
            and ulay.size == rlay.size
            and self._block_lu(u, ulay.size)
        )

    def _residual_fn(self, given, ulay, rlay, batch):
        names = list(given)
        values = self._values_of(given, ulay)

        def fn(u, *datas):
            # the batch shape from u itself, not the enclosing *batch*: inside a traced
            # while_loop body a symbolic size captured from outside cannot be a reshape
            # argument (Dynamo: "Unsupported argument type in tensor method call")
            batch = tuple(u.shape[:-1])
            seeds = ulay.seeds(u.dtype, u.device)
            v = {n: {_SEED + n: seeds[n]} for n in ulay.names}
            *outs, v_out = self._call(values(u, datas), v)
            r = self._flat_residuals(outs, rlay, batch)
            rt = {rn: v_out[rn] for rn in rlay.names}
            return r, _jacobian(rlay, rt, ulay, batch, u, self._as_blocks(u, ulay, rlay))

        def residual(u, *datas):
            """``r`` alone (no tangents): the line search's trial points."""
            outs = _as_tuple(self._call(values(u, datas)))
            return self._flat_residuals(outs, rlay, tuple(u.shape[:-1]))

        return fn, residual, tuple(given[n].data for n in names)

    def _block_seeded_fn(self, given, ulay: Layout, rlay: Layout):
        """``fn(u, *datas) -> (r, J)`` with the unknowns of 'block' groups seeded once per
        base component, shared by their grains (:mod:`neml2.models._block_seeds`); None
        where that does not apply (no block group, or a block variable whose sub-batch
        is not one axis of the same length)."""
        bu = [c for c in ulay.slots if c.name in self._block_u]
        br = [s for s in rlay.slots if s.name in self._block_r]
        if not bu or len({(*c.sub,) for c in (*bu, *br)}) != 1 or len(bu[0].sub) != 1:
            return None
        values = self._values_of(given, ulay)
        block_u, block_r = {c.name for c in bu}, {s.name for s in br}

        def fn(u, *datas):
            batch = tuple(u.shape[:-1])
            seeds = ulay.seeds(u.dtype, u.device)
            v = {}
            for c in ulay.slots:
                if c.name in block_u:
                    k = c.size // c.sub[0]
                    eye = torch.eye(k, dtype=u.dtype, device=u.device).reshape(k, *c.base)
                    v[c.name] = {BLOCK_SEED + c.name: c.type(eye, 0)}
                else:
                    v[c.name] = {_SEED + c.name: seeds[c.name]}
            *outs, v_out = self._call(values(u, datas), v)
            r = self._flat_residuals(outs, rlay, batch)
            rt = {rn: v_out[rn] for rn in rlay.names}
            return r, _jacobian_block_seeded(rlay, rt, ulay, batch, u, block_u, block_r)

        return fn

    def _grain_blocks(self, ulay: Layout, rlay: Layout, like: torch.Tensor):
        """``(rows, cols)``, ``(G, m)`` positions in the Schur complement's primary block of
        each grain's residuals and unknowns, where the primary groups are the 'block'
        groups (whose Jacobian block the block seeds make block-diagonal over the grains);
        else None. Variables are flattened sub-batch first, so entry ``j`` of grain ``g``
        of a variable of ``k`` entries per grain at offset ``o`` sits at ``o + g k + j``."""
        schur = self._schur
        ug = self.system.unknown_groups[schur.opts["unknown_primary_group"]]
        rg = self.system.residual_groups[schur.opts["residual_primary_group"]]
        if not (set(ug) <= self._block_u and set(rg) <= self._block_r):
            return None

        def positions(lay: Layout, names) -> list[list[int]] | None:
            # plain ints (a traced solve bakes them into its graph as constants)
            slots = [
                (s, o) for s, o in zip(lay.slots, lay.offsets, strict=False) if s.name in names
            ]
            if not slots or any(len(s.sub) != 1 for s, _ in slots):
                return None
            grains = {s.sub[0] for s, _ in slots}
            if len(grains) != 1:
                return None
            (G,) = grains
            return [
                [o + g * (s.size // G) + j for s, o in slots for j in range(s.size // G)]
                for g in range(G)
            ]

        rows, cols = positions(rlay, set(rg)), positions(ulay, set(ug))
        p = schur.n_primary
        if rows is None or cols is None or len(rows) != len(cols) or len(rows[0]) != len(cols[0]):
            return None
        if max(map(max, rows)) >= p or max(map(max, cols)) >= p:
            return None  # the primary groups are not the leading entries
        return (
            torch.tensor(rows, dtype=torch.int64, device=like.device),
            torch.tensor(cols, dtype=torch.int64, device=like.device),
        )

    def _jacobian_fn(self, fn, given, ulay, rlay, u0, args):
        """*fn*, or the block-seeded one where it gives the same Jacobian: checked once per
        model, eagerly, against *fn*'s near the first solve's initial guess (moved by a
        relative 1e-6 so that no unknown sits at a kink such as ``|x|`` at 0, where a
        term that mixes grains could have a zero derivative). A traced solve (py-jit,
        neml2-compile's graphs) uses the block-seeded one only where an eager call of the
        same model has checked it (neml2-compile's probe of the sub-batch shapes is one);
        otherwise *fn*."""
        if self._block_ok is False or (_tracing() and self._block_ok is not True):
            return fn
        blocked = self._block_seeded_fn(given, ulay, rlay)
        if blocked is None:
            return fn
        if self._block_ok is None:
            wiggle = torch.sin(1.7 * torch.arange(u0.shape[-1], dtype=u0.dtype) + 0.3)
            u = u0 + 1e-6 * (u0.abs() + 1e-3) * wiggle.to(u0.device)
            J = as_dense(fn(u, *args)[1])
            Jb = blocked(u, *args)[1]
            # a point with a NaN residual (bad input there) must not decide for all the
            # others: the scale comes from the finite entries, and NaN matches NaN; with
            # no finite entry at all nothing is decided
            finite = J[torch.isfinite(J)]
            if finite.numel() == 0:
                return fn
            tol = 1e-12 * float(finite.abs().max())
            self._block_ok = bool(torch.allclose(Jb, J, rtol=1e-10, atol=tol, equal_nan=True))
            self._grain_ok = self._block_ok and self._off_grain_zero(J, ulay, rlay, tol)
        return blocked if self._block_ok else fn

    def _off_grain_zero(self, J: torch.Tensor, ulay: Layout, rlay: Layout, tol: float) -> bool:
        """Whether *J*'s primary block is zero (within *tol*) outside the grains' blocks."""
        if self._schur is None:
            return False
        grains = self._grain_blocks(ulay, rlay, J)
        if grains is None:
            return False
        rows, cols = grains
        p = self._schur.n_primary
        inside = torch.zeros(p, p, dtype=torch.bool, device=J.device)
        inside[rows.unsqueeze(-1), cols.unsqueeze(-2)] = True
        off = J[..., :p, :p][..., ~inside]
        finite = off[torch.isfinite(off)]
        if off.numel() and not finite.numel():
            return False  # nothing to decide on: the dense solve
        return bool((finite.abs() <= tol).all())

    def _solve(self, values: dict[str, TensorWrapper]):
        """Primal solve: the typed unknowns at the solution, plus layouts for derivatives."""
        given = {n: values[n].primal() for n in self.system.givens}
        guess = self._guess({n: values[n].primal() for n in values})
        ulay, rlay, batch, shaped = self._layouts(given, guess)
        if self._schur is not None:
            g0 = self.system.unknown_groups[self._schur.opts["unknown_primary_group"]]
            self._schur.split(sum(s.size for s in ulay.slots if s.name in g0))
        if self._krylov is not None:
            self._krylov.set_blocks([s.size for s in ulay.slots])
        u0 = ulay.flatten(shaped, batch)
        per_point = None
        if not _tracing() and batch and not _parameters_per_point(self.system.model):
            # eagerly, one axis of points: the solver can then drop the points that have
            # settled (Newton._solve_active)
            n = u0[..., 0].numel()
            flat = {g: _point_major(x, batch, n) for g, x in given.items()}
            given = {g: x for g, (x, _) in flat.items()}
            per_point = tuple(p for _, p in flat.values())
            u0 = u0.reshape(n, u0.shape[-1])
        fn, residual, datas = self._residual_fn(given, ulay, rlay, batch)
        # no grad-mode switch where grad is off already: torch.export (2.13) loses the
        # inner loop of the line search when a set_grad_enabled node surrounds nested
        # while_loops ("'<lambda>' object has no attribute 'while_loop_cond_graph_0'")
        with torch.no_grad() if torch.is_grad_enabled() else contextlib.nullcontext():
            args = [d.detach() if d.requires_grad else d for d in datas]
            jac_fn = self._jacobian_fn(fn, given, ulay, rlay, u0.detach(), args)
            if self._schur is not None and jac_fn is not fn and self._grain_ok:
                # the primary block is block-diagonal over the grains: G small solves
                self._schur.split(self._schur.n_primary, self._grain_blocks(ulay, rlay, u0))
            extra = {} if per_point is None else {"per_point": per_point}
            res = self.solver.solve(jac_fn, u0.detach(), *args, residual=residual, **extra)
        if per_point is not None:  # the per-point status on the batch's own axes
            res = dataclasses.replace(
                res,
                converged=res.converged.reshape(batch),
                residual_norm=res.residual_norm.reshape(batch),
                initial_norm=res.initial_norm.reshape(batch),
            )
        status = self.solve_status
        if status.log is not None:
            status.log.append((res.converged, res.residual_norm, res.iterations))
        if status.check and not _tracing():
            self.solver.check(res, self._label())
        u = res.u
        if torch.is_grad_enabled() and (
            any(p.requires_grad for p in self.parameters()) or any(d.requires_grad for d in datas)
        ):
            # one recorded Newton step: its gradient is the implicit-function derivative
            r, J = fn(u, *datas)
            u = u - self.solver.linear.solve(J.detach(), r)
        return ulay.unflatten(u.reshape(*batch, u.shape[-1])), ulay, rlay, batch

    # ------------------------------------------------------------------ chunks
    def _chunk_size(self, values: dict[str, TensorWrapper], n: int) -> int | None:
        """Points per solve for an eager call on *n* points, or None: one solve."""
        if _tracing() or any(x.tangents or x.tangents2 is not None for x in values.values()):
            return None
        k = self.opts["max_points_per_solve"]
        if k == 0:
            if n <= _MIN_CHUNK:
                return None
            one = {name: _first_point(x) for name, x in values.items()}
            given = {g: one[g].primal() for g in self.system.givens}
            guess = self._guess({name: x.primal() for name, x in one.items()})
            nu = self._layouts(given, guess)[0].size
            itemsize = next(iter(values.values())).data.element_size()
            k = max(_MIN_CHUNK, JACOBIAN_BUDGET // max(1, nu * nu * itemsize))
            k = min(k, max(MAX_POINTS_PER_SOLVE, MAX_POINT_DIRECTIONS // (nu + 1)))
        return k if n > k else None

    def _forward_chunked(self, values: dict[str, TensorWrapper], batch, k: int):
        """``forward`` on at most *k* points at a time, the results joined in batch order.

        The chunks are as equal as can be (1e4 points at most 8713 a time: two of 5000,
        not 8713 and 1287): every chunk costs one Newton loop's fixed overhead, and a
        chunk no larger than the others keeps its per-point cost the others' too."""
        n = 1
        for b in batch:
            n *= b
        k = -(-n // -(-n // k))  # ceil(n / number of chunks)
        flat = {
            name: x if all(d == 1 for d in x.dynamic_shape) else _flat_batch(x, batch)
            for name, x in values.items()
        }
        parts: list[tuple] = []
        for a in range(0, n, k):
            b = min(n, a + k)
            chunk = [
                x
                if all(d == 1 for d in x.dynamic_shape)
                else type(x)(x.data[a:b], x.sub_batch_ndim)
                for x in (flat[name] for name in self.input_spec)
            ]
            part = dict(zip(self.input_spec, chunk, strict=True))
            try:
                parts.append(_as_tuple(self._forward(part)))
            except ConvergenceError as e:
                # indices into the whole batch; the points after this chunk were not solved
                raise e.within(
                    a,
                    batch,
                    f" (points [{a}, {b}) of {n}: solved {k} at a time, max_points_per_solve;"
                    " later points not attempted)",
                ) from e
        out = []
        for ys in zip(*parts, strict=True):
            y0 = ys[0]
            if y0.dynamic_ndim == 0:  # independent of the batch: the same in every chunk
                out.append(y0)
                continue
            data = torch.cat([y.data for y in ys])
            out.append(type(y0)(data.reshape(*batch, *data.shape[1:]), y0.sub_batch_ndim))
        return tuple(out) if len(out) != 1 else out[0]

    # ------------------------------------------------------------------ calls
    def forward(self, *inputs):
        values = dict(zip(self.input_spec, inputs, strict=True))
        if _tracing():
            return self._forward(values)
        # an iterate may leave a leaf's domain on its way: the solve's per-point status
        # reports what does not converge (neml2.models._domain)
        with domain_checks_suspended():
            batch = _batch_of({f"input '{n}'": x for n, x in values.items()}, self._label())
            n = 1
            for b in batch:
                n *= b
            k = self._chunk_size(values, n)
            if k is not None:
                return self._forward_chunked(values, batch, k)
            return self._forward(values)

    def _forward(self, values: dict[str, TensorWrapper]):
        u, ulay, rlay, batch = self._solve(values)
        if any(x.tangents2 is not None for x in values.values()):
            raise FatalError(
                f"{self._label()}: second-order tangents through an implicit update are not "
                "supported"
            )
        if any(x.tangents for x in values.values()):
            u = self._with_tangents(values, u, ulay, rlay, batch)
        out = tuple(u[n] for n in self.output_spec)
        return out if len(out) != 1 else out[0]

    def _with_tangents(self, values, u, ulay, rlay, batch):
        """Attach ``du = -(∂r/∂u)⁻¹ (∂r/∂g · dg)`` for every tangent the inputs carry."""
        like = next(iter(u.values())).data
        seeds = ulay.seeds(like.dtype, like.device)
        vals = {n: values[n] for n in self.system.givens}
        vals.update({n: seed(u[n], _SEED + n, seeds[n]) for n in ulay.names})
        outs = _as_tuple(self._call(vals))
        res = dict(zip(self.system.model.output_spec, outs, strict=True))
        v_res = {r: tangents_of(res[r]) for r in rlay.names}
        A = _jacobian(rlay, v_res, ulay, batch, like)
        leaves: dict[str, int] = {}
        for n in self.system.givens:
            for leaf, t in (values[n].tangents or {}).items():
                leaves.setdefault(leaf, t.shape[0])
        tangents: dict[str, dict[str, TensorWrapper]] = {n: {} for n in ulay.names}
        for leaf, k in leaves.items():
            rhs = rlay.tangent_rows(v_res, leaf, k, batch, like)
            if rhs is None:
                continue
            du = -self.solver.linear.solve(A.unsqueeze(0).expand(k, *A.shape), rhs)
            for name, t in ulay.unflatten(du).items():
                tangents[name][leaf] = t
        return {n: attach(u[n], tangents[n]) if tangents[n] else u[n] for n in ulay.names}
