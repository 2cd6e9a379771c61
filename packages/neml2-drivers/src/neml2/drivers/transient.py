"""``TransientDriver``: step a model through a prescribed load history.

At step ``k`` the model receives the prescribed values of step ``k``, the time
``t`` and ``t~1``, and every history input ``x~1`` it asks for: the prescribed
value of step ``k-1`` when ``x`` is prescribed, else the model's output ``x``
of step ``k-1`` (step 0: the initial condition ``ic_<Type>_*``), else zero.
Older history ``x~m`` (``t~2``, ``x~2``, ...) is the same value of step ``k-m``,
zero (and not recorded) before step 0.
Strain, stress and mixed control are all just choices of prescribed variables.

Results come in two forms:

* ``driver.result``, flat: a ``dict[str, Tensor]`` with the keys
  ``input.<k>.<var>`` and ``output.<k>.<var>``, each value ``(*B, *base)``; step
  0 holds the prescribed values, the time and the initial conditions;
  zero-filled inputs are not recorded.
* ``driver.stacked``, one tensor per variable with the steps first:
  a :class:`~neml2.drivers.results.TransientResult`, ``stacked["stress"]`` of shape
  ``(steps, *B, 6)``, step 0 (the initial state) included.

``save_as`` writes both with ``torch.save``, only after the whole history
succeeded: the flat form to ``save_as``, the stacked one beside it
(:func:`~neml2.drivers.results.stacked_path`: ``result.pt`` ->
``result.stacked.pt``). A relative ``save_as`` resolves against the input file's
directory; both targets are checked before the first step (see
:func:`neml2.drivers._output.check_target`) and written atomically (a temporary
file in the same directory, given the user's umask, renamed over the target;
removed on any error, SIGINT or SIGTERM), the flat file first.
"""

from __future__ import annotations

import sys
import time as _time
import warnings
from pathlib import Path
from typing import Any

import torch

from neml2.drivers._driver import Driver, pair_fields
from neml2.drivers._output import check_target, save_atomically
from neml2.drivers.results import TransientResult, stacked_path
from neml2.models import register, suggest
from neml2.models._naming import history_of
from neml2.models._schema import option
from neml2.tensors import (
    MRP,
    R2,
    SR2,
    SSR4,
    WR2,
    ConvergenceError,
    FatalError,
    Scalar,
    TensorWrapper,
    Vec,
    broadcast_batch_shapes,
)

TYPES: dict[str, type] = {t.__name__: t for t in (Scalar, Vec, SR2, R2, WR2, SSR4, MRP)}


class HistoryWithoutSourceWarning(UserWarning):
    """A history input ``x~m`` of the driven model is zero at every step: nothing (an
    output, a prescribed value, an initial condition) ever gives ``x`` a value."""


def _only_predictors_read(model, name: str) -> bool:
    """Whether every leaf of *model* that takes the input *name* belongs to the
    ``predictor`` of an implicit update (an initial guess, not the answer)."""
    guesses: set[int] = set()
    for module in model.modules():
        predictor = getattr(module, "predictor", None)
        if isinstance(predictor, torch.nn.Module):
            guesses.update(id(m) for m in predictor.modules())
    readers = [
        m
        for m in model.modules()
        if name in (getattr(m, "input_spec", None) or {})
        and not any(name in (getattr(c, "input_spec", None) or {}) for c in m.children())
    ]
    return bool(readers) and all(id(m) in guesses for m in readers)


def _step(value: TensorWrapper, k: int) -> TensorWrapper:
    """Step *k* of a history stored with the step as the leading batch axis."""
    return type(value)(value.data[k], value.sub_batch_ndim)


class _Progress:
    """A one-line progress bar on stderr (only when it is a terminal, or when forced)."""

    #: A bar line was started and not ended (the run stopped before its last step).
    open_line = False

    @classmethod
    def end_line(cls) -> None:
        """End an unfinished bar line, so that the next message starts a line of its own."""
        if cls.open_line:
            cls.open_line = False
            sys.stderr.write("\n")
            sys.stderr.flush()

    def __init__(self, total: int, label: str, enabled: bool):
        self.total, self.label, self.enabled = total, label, enabled
        self.start = _time.perf_counter()
        self.last = 0.0

    def update(self, k: int) -> None:
        if not self.enabled:
            return
        now = _time.perf_counter()
        if k != self.total and now - self.last < 0.1:
            return
        self.last = now
        frac = k / max(self.total, 1)
        bar = "#" * int(30 * frac)
        rate = k / max(now - self.start, 1e-9)
        _Progress.open_line = k != self.total  # before the write: a signal may come right after
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {k}/{self.total} steps {rate:7.1f} steps/s")
        if k == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


@register()
class TransientDriver(Driver):
    """Run a model through a time history of prescribed variables."""

    #: Set by ``neml2-run``: show progress on a terminal and print the summary line.
    report: bool = False

    fields = (
        option("model", str, doc="the [Models] block to run"),
        option("prescribed_time", str, doc="[Tensors] name of the times, shape (nstep, *B)"),
        option("time", str, "t", doc="name of the time variable"),
        *pair_fields("prescribed", TYPES, "prescribed", formerly=("force",)),
        *pair_fields("ic", TYPES, "initial condition"),
        option(
            "save_as",
            str,
            "",
            doc="write the flat result to this .pt file and the stacked one beside it "
            "(x.pt -> x.stacked.pt; relative: to the input file's directory; checked before "
            "the run, written atomically)",
        ),
        option("device", str, "cpu", doc="torch device to run on"),
        option("show_progress", bool, False, doc="print a progress bar (default: on a TTY)"),
        option("verbose", bool, False, doc="print a summary line"),
    )

    def setup(self) -> None:
        """Check the options that depend on each other; start with no result."""
        #: the flat result of the last run: ``{"input.<k>.<var>": (*B, *base), ...}``
        self.result: dict[str, torch.Tensor] = {}
        self.elapsed = 0.0
        #: where save_as was written (None before that)
        self.saved_to: Path | None = None
        #: where the stacked result was written, beside save_as (None before that)
        self.stacked_saved_to: Path | None = None
        self._times: torch.Tensor | None = None  # (steps, *B), of the last run
        self._stacked: TransientResult | None = None

    @property
    def stacked(self) -> TransientResult:
        """The last run's result with the steps stacked first (built on first access).

        ``stacked["stress"]`` is ``(steps, *B, 6)`` and ``stacked[time]`` ``(steps, *B)``,
        step 0 (the initial state) included; see :mod:`neml2.drivers.results`.

        Raises:
            FatalError: the driver has not run yet.
        """
        if self._stacked is None:
            if not self.result:
                raise self.error("no result yet: run the driver first")
            self._stacked = TransientResult.from_flat(
                self.result, time=self.opts["time"], times=self._times
            )
        return self._stacked

    def _named(self, kind: str) -> dict[str, TensorWrapper]:
        return self.typed_pairs(kind, TYPES, self._tensor_value)

    def _tensor_value(self, typ: type, token: str, opt: str) -> TensorWrapper:
        try:  # a number stands for a value with every component equal to it
            number = float(token)
        except ValueError:
            number = None
        if number is not None:
            return typ.full(number, dtype=self.ctx.dtype, device=self.ctx.device)
        if not self.ctx.has_tensor(token):
            raise self.error(f"'{token}' is not a [Tensors] name", opt)
        value = self.ctx.tensor(token, self._locations.get(opt))
        if not isinstance(value, TensorWrapper) or tuple(value.base_shape) != tuple(typ.BASE_SHAPE):
            raise self.error(f"[Tensors/{token}] is not a {typ.__name__}", opt)
        return value if isinstance(value, typ) else typ(value)

    def run(self) -> bool:
        """Step the model through the whole history; save it if ``save_as`` says so.

        The flat result is in ``result`` (``{"input.<k>.<var>": (*B, *base), ...}``), the
        stacked one in ``stacked`` (``stacked["stress"]``: ``(steps, *B, 6)``).

        Returns:
            True (a transient run has no check of its own).

        Raises:
            FatalError: bad input (a prescribed history of the wrong length, an input
                with no value, a non-increasing time, an unwritable ``save_as``).
            ConvergenceError: a step's implicit update did not converge (naming the step).
        """
        target = self.save_target()  # before any work: a bad save_as fails at once
        model = self.ctx.top_model(self.opts["model"], self._locations.get("model"))
        device = torch.device(self.opts["device"])
        model = model.to(device)
        tname = self.opts["time"]
        times = self.ctx.tensor(
            self.opts["prescribed_time"], self._locations.get("prescribed_time")
        )
        if not isinstance(times, TensorWrapper) or times.batch_ndim < 1:
            raise self.error(
                "prescribed_time must be a Scalar with the steps first", "prescribed_time"
            )
        times = Scalar(times).to(device=device)
        nsteps = times.data.shape[0]
        forces = {n: v.to(device=device) for n, v in self._named("prescribed").items()}
        ics = {n: v.to(device=device) for n, v in self._named("ic").items()}
        for n, v in forces.items():
            if v.batch_ndim < 1 or v.data.shape[0] != nsteps:
                raise self.error(
                    f"prescribed '{n}' has {v.data.shape[0] if v.batch_ndim else 0} steps but the "
                    f"time history has {nsteps}"
                )
        self._check_times(times.data)
        self._check_inputs(model, forces, ics, tname)
        batch = self._batch_shape(times, forces, ics)

        result: dict[str, torch.Tensor] = {}
        for n, v in forces.items():
            result[f"input.0.{n}"] = v.data[0]
        result[f"input.0.{tname}"] = times.data[0]
        for n, v in ics.items():
            result[f"output.0.{n}"] = v.data
        prev_out: dict[str, TensorWrapper] = dict(ics)
        # states[j]: the values of step j (initial conditions, then outputs) for x~n
        states: list[dict[str, TensorWrapper]] = [prev_out]
        label = f"{self.hit_name or 'driver'}"
        bar = _Progress(
            nsteps - 1,
            label,
            self.opts["show_progress"] or (self.report and sys.stderr.isatty()),
        )
        start = _time.perf_counter()
        with torch.no_grad():
            for k in range(1, nsteps):
                inputs, recorded = self._inputs(model, k, times, forces, states, tname)
                try:
                    outs = model(*[inputs[n] for n in model.input_spec])
                except ConvergenceError as e:
                    t = times.data[k]
                    # the same error (failed points, iterations, worst residual), located
                    raise e.with_context(
                        f"step {k} of {nsteps - 1} (t = {float(t.flatten()[0]):g})"
                    ) from e
                outs = outs if isinstance(outs, tuple) else (outs,)
                for n in recorded:
                    result[f"input.{k}.{n}"] = inputs[n].data
                prev_out = dict(prev_out)
                for n, o in zip(model.output_spec, outs, strict=True):
                    result[f"output.{k}.{n}"] = o.data
                    prev_out[n] = o
                states.append(prev_out)
                bar.update(k)
        self.elapsed = _time.perf_counter() - start
        self.result = result
        self._times, self._stacked = times.data, None
        points = int(torch.Size(batch).numel())
        if self.opts["verbose"] or self.opts["show_progress"] or self.report:
            rate = (nsteps - 1) * points / max(self.elapsed, 1e-9)
            print(
                f"TransientDriver '{label}': {nsteps - 1} steps x {points} points in "
                f"{self.elapsed:.3f} s ({rate:.3g} point-steps/s)"
            )
        if target is not None:
            self._save(result, target)
        return True

    def save_target(self) -> Path | None:
        """The file ``save_as`` names (None without one), checked to be writable.

        A relative path resolves against the input file's directory.

        Returns:
            The path, or None without ``save_as``.

        Raises:
            FatalError: naming the ``save_as`` line: a directory, FIFO, device or
                socket (or a symlink to one), the input file itself, a parent that is
                a file or not writable.
        """
        raw = self.opts["save_as"]
        if not raw:
            return None
        base, protect = None, []
        if self.ctx is not None:
            base = Path(self.ctx.path).resolve().parent
            protect = [(Path(self.ctx.path), "the input file")]
        target = check_target(raw, self._save_what(), base, protect)
        self.stacked_target()  # the stacked file beside it must be writable too
        return target

    def _stacked_raw(self, base: Path | None) -> Path:
        """The stacked file's path: ``save_as`` with ``.stacked`` before its extension."""
        raw = Path(self.opts["save_as"])
        if not raw.is_absolute():
            raw = (base if base is not None else Path.cwd()) / raw
        return stacked_path(raw)

    def stacked_target(self) -> Path | None:
        """The file the stacked result goes to, checked as :meth:`save_target` does.

        Returns:
            ``save_as`` with ``.stacked`` before its extension, or None without
            ``save_as``.

        Raises:
            FatalError: as :meth:`save_target`.
        """
        if not self.opts["save_as"]:
            return None
        base, protect = None, []
        if self.ctx is not None:
            base = Path(self.ctx.path).resolve().parent
            protect = [(Path(self.ctx.path), "the input file")]
        return check_target(str(self._stacked_raw(base)), self._save_what(), base, protect)

    def _save_what(self) -> str:
        return f"{self._locations.get('save_as', self._where)}: save_as"

    def _check_times(self, t: torch.Tensor) -> None:
        """The time history must increase strictly at every step and batch point: a step
        with ``t[k] <= t[k-1]`` (a zero or negative increment) or a NaN is an error
        naming the first such step (none of the reference inputs repeats a time)."""
        if t.shape[0] < 2:
            return
        dt = t[1:] - t[:-1]
        bad = ~(dt > 0)  # NaN fails too
        if not bool(bad.any()):
            return
        steps = bad.reshape(bad.shape[0], -1).any(dim=1)
        k = int(steps.nonzero()[0, 0]) + 1
        row = bad[k - 1].reshape(-1)
        i = int(row.nonzero()[0, 0])
        now, before = float(t[k].reshape(-1)[i]), float(t[k - 1].reshape(-1)[i])
        at = "" if row.numel() == 1 else f" at batch index {i}"
        raise self.error(
            f"prescribed_time '{self.opts['prescribed_time']}' must increase at every step: "
            f"at step {k}{at}, t[{k}] = {now:g} does not exceed t[{k - 1}] = {before:g}",
            "prescribed_time",
        )

    def _batch_shape(self, times, forces, ics) -> tuple[int, ...]:
        """The run's batch shape ``B``: the broadcast of the time's and the prescribed
        values' batch shapes (after the step axis) and the initial conditions'. Shapes
        that do not broadcast are an error naming the two options and [Tensors] blocks
        (``prescribed_time 'times' has batch shape (3,) and prescribed_SR2_values
        'strains' (2,): they do not broadcast``)."""
        shapes = {f"prescribed_time '{self.opts['prescribed_time']}'": times.dynamic_shape[1:]}
        for kind, values, steps in (("prescribed", forces, 1), ("ic", ics, 0)):
            for tname in TYPES:
                opt = f"{kind}_{tname}_values"
                names = self.opts[f"{kind}_{tname}_names"]
                for n, token in zip(names, self.opts[opt], strict=True):
                    shapes[f"{opt} '{token}'"] = values[n].dynamic_shape[steps:]
        try:
            return broadcast_batch_shapes(shapes)
        except FatalError as e:
            raise self.error(str(e)) from None

    def _check_inputs(self, model, forces, ics, tname) -> None:
        """Every prescribed name is an input of the model, and every input of the model
        is prescribed, the time or history; a misspelled prescribed name is reported as
        such, with the closest inputs, before the inputs it left without a value."""
        for typ in TYPES:
            opt = f"prescribed_{typ}_names"
            for n in self.opts[opt]:
                if n not in model.input_spec:
                    raise self.error(
                        f"{opt}: unknown variable '{n}': not an input of model "
                        f"'{self.opts['model']}'{suggest(n, model.input_spec)}; its inputs: "
                        f"{', '.join(model.input_spec)}",
                        opt,
                    )
        bad = []
        for n in model.input_spec:
            if n == tname or n in forces or history_of(n) is not None:
                continue
            bad.append(n)
        if bad:
            origins = "".join(self.ctx.free_input_origin(n) for n in bad) if self.ctx else ""
            raise self.error(
                f"model '{self.opts['model']}' input(s) {', '.join(bad)} are neither prescribed "
                f"(prescribed_<Type>_names), the time '{tname}', nor history (name~1){origins}"
            )
        self._check_history_sources(model, forces, ics, tname)

    def _check_history_sources(self, model, forces, ics, tname) -> None:
        """Warn about a history input ``x~m`` that is zero at every step: ``x`` is not
        the time, prescribed, an output of the model nor given an initial condition, so
        nothing ever sets it (a model whose state is not among its outputs; results are
        then wrong, not failed). A history read only by an implicit update's predictor
        is exempt: it sets Newton's starting point, never the converged answer."""
        for n in model.input_spec:
            lag = history_of(n)
            if lag is None:
                continue
            base = lag[0]
            if base == tname or base in forces or base in model.output_spec or base in ics:
                continue
            if _only_predictors_read(model, n):
                continue
            warnings.warn(
                f"{self._where}: model '{self.opts['model']}' input '{n}' has no source, so "
                f"it is zero at every step: '{base}' is neither an output of the model, "
                f"prescribed, nor given an initial condition (ic_<Type>_names). If '{base}' is "
                f"the model's state, make it an output (e.g. additional_outputs = '{base}' "
                "on the ImplicitUpdate's composition)",
                HistoryWithoutSourceWarning,
                stacklevel=2,
            )

    def _inputs(self, model, k, times, forces, states, tname):
        inputs: dict[str, TensorWrapper] = {}
        recorded: list[str] = []
        for n, typ in model.input_spec.items():
            if n == tname:
                inputs[n] = _step(times, k)
            elif n in forces:
                inputs[n] = _step(forces[n], k)
            else:  # history x~m: the value of step k - m (zero before step 0)
                base, lag = history_of(n)
                j = k - lag
                if j >= 0 and base == tname:
                    inputs[n] = _step(times, j)
                elif j >= 0 and base in forces:
                    inputs[n] = _step(forces[base], j)
                elif j >= 0 and base in states[j]:
                    inputs[n] = states[j][base]
                else:
                    inputs[n] = typ(
                        torch.zeros(typ.BASE_SHAPE, dtype=times.dtype, device=times.device)
                    )
                    continue
            recorded.append(n)
        return inputs, recorded

    def _save(self, result: dict[str, Any], path: Path | None = None) -> None:
        """Write *result* to *path* (default: :meth:`save_target`) atomically, then
        the stacked form to :meth:`stacked_target`."""
        if path is None:
            path = self.save_target()
            if path is None:
                return
        data = {k: v.detach().cpu() for k, v in result.items()}
        save_atomically(
            path, data, self._save_what(), written=lambda p: setattr(self, "saved_to", p)
        )
        stacked = self.stacked.to_dict()
        save_atomically(
            self.stacked_target(),
            stacked,
            self._save_what(),
            written=lambda p: setattr(self, "stacked_saved_to", p),
        )
