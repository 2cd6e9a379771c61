"""``TransientDriver``: step a model through a prescribed load history.

At step ``k`` the model receives the prescribed values of step ``k``, the time
``t`` and ``t~1``, and every history input ``x~1`` it asks for: the prescribed
value of step ``k-1`` when ``x`` is prescribed, else the model's output ``x``
of step ``k-1`` (step 0: the initial condition ``ic_<Type>_*``), else zero.
Strain, stress and mixed control are all just choices of prescribed variables.

Results are a flat ``dict[str, Tensor]``: ``input.<k>.<var>`` and
``output.<k>.<var>``; step 0 holds the prescribed values and initial
conditions; zero-filled inputs are not recorded. ``save_as`` writes it with
``torch.save`` only after the whole history succeeded (atomically).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time as _time
from pathlib import Path
from typing import Any

import torch

from neml2.drivers._driver import Driver, pair_fields
from neml2.models import register
from neml2.models._schema import option
from neml2.tensors import (
    MRP,
    R2,
    SR2,
    SSR4,
    WR2,
    ConvergenceError,
    Scalar,
    TensorWrapper,
    Vec,
)

TYPES: dict[str, type] = {t.__name__: t for t in (Scalar, Vec, SR2, R2, WR2, SSR4, MRP)}


def _step(value: TensorWrapper, k: int) -> TensorWrapper:
    """Step *k* of a history stored with the step as the leading batch axis."""
    return type(value)(value.data[k], value.sub_batch_ndim)


class _Progress:
    """A one-line progress bar on stderr (only when it is a terminal, or when forced)."""

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
        *pair_fields("prescribed", TYPES, "prescribed"),
        *pair_fields("ic", TYPES, "initial condition"),
        option("save_as", str, "", doc="write the results to this .pt file"),
        option("device", str, "cpu", doc="torch device to run on"),
        option("show_progress", bool, False, doc="print a progress bar (default: on a TTY)"),
        option("verbose", bool, False, doc="print a summary line"),
    )

    def setup(self) -> None:
        self.result: dict[str, torch.Tensor] = {}
        self.elapsed = 0.0

    def _named(self, kind: str) -> dict[str, TensorWrapper]:
        return self.typed_pairs(kind, TYPES, self._tensor_value)

    def _tensor_value(self, typ: type, token: str, opt: str) -> TensorWrapper:
        if not self.ctx.has_tensor(token):
            raise self.error(f"'{token}' is not a [Tensors] name", opt)
        value = self.ctx.tensor(token, self._locations.get(opt))
        if not isinstance(value, TensorWrapper) or tuple(value.base_shape) != tuple(typ.BASE_SHAPE):
            raise self.error(f"[Tensors/{token}] is not a {typ.__name__}", opt)
        return value if isinstance(value, typ) else typ(value)

    def run(self) -> bool:
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
        self._check_inputs(model, forces, tname)

        result: dict[str, torch.Tensor] = {}
        for n, v in forces.items():
            result[f"input.0.{n}"] = v.data[0]
        result[f"input.0.{tname}"] = times.data[0]
        for n, v in ics.items():
            result[f"output.0.{n}"] = v.data
        prev_out: dict[str, TensorWrapper] = dict(ics)
        label = f"{self.hit_name or 'driver'}"
        bar = _Progress(
            nsteps - 1,
            label,
            self.opts["show_progress"] or (self.report and sys.stderr.isatty()),
        )
        start = _time.perf_counter()
        with torch.no_grad():
            for k in range(1, nsteps):
                inputs, recorded = self._inputs(model, k, times, forces, prev_out, tname)
                try:
                    outs = model(*[inputs[n] for n in model.input_spec])
                except ConvergenceError as e:
                    t = times.data[k]
                    raise ConvergenceError(
                        f"step {k} of {nsteps - 1} (t = {float(t.flatten()[0]):g}): {e}"
                    ) from e
                outs = outs if isinstance(outs, tuple) else (outs,)
                for n in recorded:
                    result[f"input.{k}.{n}"] = inputs[n].data
                prev_out = dict(prev_out)
                for n, o in zip(model.output_spec, outs, strict=True):
                    result[f"output.{k}.{n}"] = o.data
                    prev_out[n] = o
                bar.update(k)
        self.elapsed = _time.perf_counter() - start
        self.result = result
        points = int(torch.Size(times.data.shape[1:]).numel())
        if self.opts["verbose"] or self.opts["show_progress"] or self.report:
            rate = (nsteps - 1) * points / max(self.elapsed, 1e-9)
            print(
                f"TransientDriver '{label}': {nsteps - 1} steps x {points} points in "
                f"{self.elapsed:.3f} s ({rate:.3g} point-steps/s)"
            )
        if self.opts["save_as"]:
            self._save(result)
        return True

    def _check_inputs(self, model, forces, tname) -> None:
        bad = []
        for n in model.input_spec:
            if n in (tname, f"{tname}~1") or n in forces or n.endswith("~1"):
                continue
            bad.append(n)
        if bad:
            raise self.error(
                f"model '{self.opts['model']}' input(s) {', '.join(bad)} are neither prescribed "
                f"(prescribed_<Type>_names), the time '{tname}', nor history (name~1)"
            )
        unused = [n for n in forces if n not in model.input_spec]
        if unused:
            raise self.error(
                f"prescribed variable(s) {', '.join(unused)} are not inputs of model "
                f"'{self.opts['model']}' (its inputs: {', '.join(model.input_spec)})"
            )

    def _inputs(self, model, k, times, forces, prev_out, tname):
        inputs: dict[str, TensorWrapper] = {}
        recorded: list[str] = []
        for n, typ in model.input_spec.items():
            if n == tname:
                inputs[n] = _step(times, k)
            elif n == f"{tname}~1":
                inputs[n] = _step(times, k - 1)
            elif n in forces:
                inputs[n] = _step(forces[n], k)
            else:  # history x~1
                base = n[:-2]
                if base in forces:
                    inputs[n] = _step(forces[base], k - 1)
                elif base in prev_out:
                    inputs[n] = prev_out[base]
                else:
                    inputs[n] = typ(
                        torch.zeros(typ.BASE_SHAPE, dtype=times.dtype, device=times.device)
                    )
                    continue
            recorded.append(n)
        return inputs, recorded

    def _save(self, result: dict[str, Any]) -> None:
        path = Path(self.opts["save_as"])
        if not path.is_absolute():
            path = Path(self.ctx.path).resolve().parent / path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            torch.save({k: v.detach().cpu() for k, v in result.items()}, tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
