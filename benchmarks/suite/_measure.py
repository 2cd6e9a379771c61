"""Timing, memory and the transient step loop shared by both workers.

Imports only torch and the standard library: the reference worker runs it in the
reference library's virtual environment. A route is seen through a small adapter:

    adapter.input_names, adapter.output_names   lists of variable names
    adapter.input_base_shape(name)              base shape of an input, e.g. (6,)
    adapter.wrap(raw, name, sub_batch_ndim)     raw tensor -> what ``call`` takes
    adapter.call(values) -> dict                one model evaluation, name-keyed

Rows are dicts with the keys of ``FIELDS``; ``value`` is the median of ``n`` repeats,
``lo``/``hi`` the spread: first and third quartile from 4 repeats on, else the fastest
and slowest repeat.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import statistics
import time
from pathlib import Path

import _agreement
import _device
import torch

FIELDS = [
    "side",
    "workload",
    "route",
    "batch",
    "metric",
    "value",
    "lo",
    "hi",
    "n",
    "unit",
    "status",
    "note",
]


#: metrics recorded per batch (rows written as skipped when a batch is not run)
SKIPPABLE = (
    ("eval_points_per_s", "points/s"),
    ("eval_time_s", "s"),
    ("transient_points_per_s", "point-steps/s"),
    ("transient_time_s", "s"),
)


def row(
    side,
    workload,
    route,
    batch,
    metric,
    value=None,
    lo=None,
    hi=None,
    n=0,
    unit="",
    status="ok",
    note="",
) -> dict:
    return dict(
        zip(
            FIELDS,
            (side, workload, route, batch, metric, value, lo, hi, n, unit, status, note),
            strict=True,
        )
    )


def emit(rows: list[dict], out: Path) -> None:
    with out.open("a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


# --------------------------------------------------------------------------- memory


def _status_kb(key: str) -> int:
    """``VmHWM`` / ``VmRSS`` of this process in kB (0 where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak() -> bool:
    """Reset this process's peak resident set (Linux: ``5`` into ``clear_refs``)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def rss_mb() -> float:
    return _status_kb("VmRSS") / 1024.0


def peak_mb() -> float:
    return _status_kb("VmHWM") / 1024.0


# --------------------------------------------------------------------------- timing


#: seconds of warm-up calls before the timed ones (at least one call), the same on both
#: sides. A fresh process's first calls on a large output are slower than its steady
#: state: glibc hands the output fresh pages (page faults, 117 per call for the 480 kB
#: of elasticity at 1e4) until its heap settles, after 2-8 calls, by chance. One warm-up
#: call measured that transient: elasticity py-aoti at 1e4 took 300 us per call on
#: either side in one process, 45-55 us in another.
WARMUP_S = 1.0


#: a first call longer than this many seconds is the evaluation's one timed call, not a
#: warm-up (the same on both sides): the heap settling that the warm-up absorbs costs
#: milliseconds, and a second call of the reference's Taylor model at 1e5 points would
#: add 15 minutes to a table.
LONG_CALL_S = 60.0


#: the sync probe's operation: an elementwise add of this many float64 values (just over
#: ATen's parallel grain of 32768, so each call is one fork/join of the intra-op threads
#: with a few microseconds of work per thread), timed over PROBE_REPS calls
PROBE_POINTS = 40_000
PROBE_REPS = 200


def sync_probe_us(reps: int = PROBE_REPS) -> float | None:
    """Microseconds per fork/join of the intra-op threads on a tiny elementwise add (the
    faster of two rounds of *reps* calls); None with one thread.

    This 2-vCPU machine has windows, seconds to minutes long, where the same compiled
    graph runs 2x slower with two threads (Perzyna py-aoti at 1e3 points: 4.0 ms per
    call, 8.4 ms in such a window, 6.2 ms on one thread) while neither CPU is stolen and
    a compute-bound op still scales 2x: the cost of a cache line passing between the two
    vCPUs rises, and graphs with many small parallel loops (a barrier each) pay it. This
    probe pays it too (about 6.5 us per call on a free machine, 8.5 us in a window), so
    a cell measured in a window can be told apart from a slow route (``_report``)."""
    threads = torch.get_num_threads()
    if threads < 2:
        return None
    a = torch.ones(PROBE_POINTS, dtype=torch.float64)
    b, c = a.clone(), torch.empty_like(a)
    best = float("inf")
    for _ in range(2):
        for _ in range(5):
            torch.add(a, b, out=c)
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.add(a, b, out=c)
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


def warm_up(fn, seconds: float) -> tuple[float, int]:
    """Call *fn* for *seconds* (at least once, and never again once one call takes
    longer than that); the first call's time and the number of calls."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    calls = 1
    while first < seconds and time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return first, calls


def timed(fn, *, min_repeats: int, max_repeats: int, min_time: float, budget: float):
    """Call *fn* (already warmed up) repeatedly; per-call wall times in seconds.

    Stops after ``max_repeats`` calls, or once ``min_repeats`` calls and ``min_time``
    seconds are reached, or when ``budget`` seconds are spent (at least one call).
    """
    times: list[float] = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        spent = time.perf_counter() - start
        if len(times) >= max_repeats or spent >= budget:
            break
        if len(times) >= min_repeats and spent >= min_time:
            break
    return times


def summary(times: list[float]) -> tuple[float, float, float]:
    """Median and spread: the quartiles from 4 repeats on, else fastest and slowest."""
    med = statistics.median(times)
    if len(times) >= 4:
        q = statistics.quantiles(times, n=4)
        return med, q[0], q[2]
    return med, min(times), max(times)


# --------------------------------------------------------------------------- stepping


def split_lag(name: str) -> tuple[str, int]:
    """``'x~2'`` -> ``('x', 2)``, ``'x'`` -> ``('x', 0)``."""
    if "~" in name:
        base, lag = name.rsplit("~", 1)
        if lag.isdigit():
            return base, int(lag)
    return name, 0


class Stepper:
    """Feeds a model through a load history, carrying its state from step to step.

    An input ``x`` / ``x~j`` is the prescribed ``x`` at step ``k`` / ``k - j`` when ``x`` is
    in the history, else the model output ``x`` of step ``k - 1`` / ``k - j`` (the
    current value of a state variable that is also an input is its previous value:
    the initial guess). Steps before 0 read step 0. State starts from
    ``initial_state`` or zero, on the device of the history's tensors.
    """

    def __init__(self, adapter, forces: dict, ics: dict, state_sub: dict, batch: int):
        self.a = adapter
        self.outputs = list(adapter.output_names)
        first = next(iter(forces.values()))[0]
        nsteps, device = first.shape[0], first.device
        self.nsteps = nsteps - 1
        self.lags = {n: split_lag(n) for n in adapter.input_names}
        used = {base for base, _ in self.lags.values()}
        # pre-wrapped prescribed values per step: the timed loop only calls the model
        self.forces = {
            n: [
                adapter.wrap(v[k], n if n in adapter.input_names else f"{n}~1", sub)
                for k in range(nsteps)
            ]
            for n, (v, sub) in forces.items()
            if n in used
        }
        # history of a variable that is neither prescribed nor an output: zero (as the
        # TransientDriver of both libraries does)
        self.zeros = {}
        for n, (base, lag) in self.lags.items():
            if base not in self.forces and base not in self.outputs:
                if lag == 0:
                    raise KeyError(f"input '{n}' is neither prescribed nor a model output")
                z = torch.zeros(
                    (batch, *adapter.input_base_shape(n)), dtype=torch.float64, device=device
                )
                self.zeros[n] = adapter.wrap(z, n, 0)
        self.state0 = {}
        for n in self.outputs:
            if n in ics:
                v, sub = ics[n]
                self.state0[n] = adapter.wrap(v, n, sub)
                continue
            name = n if n in adapter.input_names else f"{n}~1"
            if name not in adapter.input_names:
                continue  # an output that is never fed back
            sub_shape = tuple(state_sub.get(n, ()))
            z = torch.zeros(
                (batch, *sub_shape, *adapter.input_base_shape(name)),
                dtype=torch.float64,
                device=device,
            )
            self.state0[n] = adapter.wrap(z, n, len(sub_shape))

    def inputs(self, k: int, states: list[dict]) -> dict:
        """Inputs of step *k*; ``states[-j]`` is the state of step ``k - j``."""
        vals = {}
        for n, (base, lag) in self.lags.items():
            if n in self.zeros:
                vals[n] = self.zeros[n]
            elif base in self.forces:
                vals[n] = self.forces[base][max(k - lag, 0)]
            else:
                j = max(lag, 1)
                vals[n] = states[-j][base] if j <= len(states) else states[0][base]
        return vals

    def inputs_digest(self, nsteps: int) -> str:
        """SHA-256 of every input steps 1..*nsteps* read: the prescribed values of
        steps 0..*nsteps*, the initial state and the zero histories."""
        named = {f"history/{n}": v[: nsteps + 1] for n, v in self.forces.items()}
        named.update({f"initial/{n}": [v] for n, v in self.state0.items()})
        named.update({f"zero/{n}": [v] for n, v in self.zeros.items()})
        return _agreement.digest(named)

    def first_step_inputs(self) -> dict:
        return self.inputs(1, [self.state0])

    def run(self, nsteps: int | None = None) -> dict:
        """Steps 1..nsteps; returns the last state."""
        nsteps = self.nsteps if nsteps is None else nsteps
        states = [self.state0]
        for k in range(1, nsteps + 1):
            out = self.a.call(self.inputs(k, states))
            new = dict(states[-1])
            new.update(out)
            states.append(new)
            if len(states) > 3:
                states.pop(0)
        return states[-1]


# --------------------------------------------------------------------------- one cell


#: A transient run at batch B takes ``min(--steps, max(TRANSIENT_MIN_STEPS,
#: TRANSIENT_POINT_STEPS // B))`` steps of the same history, on both sides alike: 100 up
#: to 1e3 points, 10 at 1e4, 5 at 1e5. The first steps of every workload's history are
#: past yield, so the shortened runs still solve plastic steps with the state fed back;
#: a full 100-step run at 1e5 points would take the reference's implicit models
#: 30-90 minutes per route here.
TRANSIENT_POINT_STEPS = 100_000
TRANSIENT_MIN_STEPS = 5


def transient_steps(steps: int, batch: int) -> int:
    """The steps of the transient run at *batch* points, for ``--steps`` *steps*."""
    if steps <= 0:
        return 0
    return min(steps, max(TRANSIENT_MIN_STEPS, TRANSIENT_POINT_STEPS // max(batch, 1)))


def measure_batch(
    side, workload, route, adapter, w, batch: int, hist: dict, ics: dict, opts
) -> list[dict]:
    """Evaluation throughput, latency (batch 1), transient throughput and peak memory.

    On ``opts.device`` cuda (*hist* and *ics* already there) every timed call and
    transient run ends with ``torch.cuda.synchronize()`` before the clock is read, and
    the peak device memory (``torch.cuda.max_memory_allocated`` above what was
    allocated before the batch) is a row ``peak_cuda_delta_mb`` next to the host's
    ``peak_rss_delta_mb``.

    With ``opts.fingerprint_dir`` the results (one evaluation's outputs, the transient
    run's final state) are saved there for ``run.py``'s agreement check (``_agreement``),
    after the timings and the peak memory are taken.
    """
    rows = []
    final, transient_reason = None, "not run"
    stepper = Stepper(adapter, hist, ics, w.state_sub_batch, batch)
    x = stepper.first_step_inputs()
    device = getattr(opts, "device", "cpu")
    probes = [sync_probe_us()] if device == "cpu" else []  # (before the peak is reset)
    probes = [p for p in probes if p is not None]  # (none with one thread)
    _device.reset_peak(device)
    base_device = _device.allocated_mb(device)
    reset_peak()
    base_rss = rss_mb()
    call = _device.synced(adapter.call, device)
    with torch.no_grad():
        first, warmups = warm_up(lambda: call(x), WARMUP_S)
        if first > LONG_CALL_S:
            times, warmups = [first], 0
        elif batch == 1:
            times = timed(
                lambda: call(x),
                min_repeats=20,
                max_repeats=opts.latency_repeats,
                min_time=opts.min_time,
                budget=opts.eval_budget,
            )
        else:
            times = timed(
                lambda: call(x),
                min_repeats=min(3, opts.repeats),
                max_repeats=opts.repeats,
                min_time=opts.min_time,
                budget=opts.eval_budget,
            )
        if probes:
            # right after the timed calls (the one before the batch precedes the 1 s of
            # warm-up, and the evaluations of a small batch take milliseconds: a window
            # that opened in between was invisible to it); not between the repeats: a
            # probe there slowed the next call of elasticity py-eager 1.3-3x, and one
            # untimed call after it did not undo that at 1e5
            probes.append(sync_probe_us())
        med, lo, hi = summary(times)
        n = len(times)
        rows.append(
            row(
                side,
                workload,
                route,
                batch,
                "eval_points_per_s",
                batch / med,
                batch / hi,
                batch / lo,
                n,
                "points/s",
            )
        )
        rows.append(
            row(
                side,
                workload,
                route,
                batch,
                "eval_time_s",
                med,
                lo,
                hi,
                n,
                "s",
                note=(
                    f"first call {first:.4g} s, {warmups} warm-up calls"
                    if warmups
                    else f"one call of {first:.4g} s (over {LONG_CALL_S:.0f} s: no warm-up)"
                ),
            )
        )
        if batch == 1:
            rows.append(
                row(
                    side,
                    workload,
                    route,
                    batch,
                    "latency_us",
                    med * 1e6,
                    lo * 1e6,
                    hi * 1e6,
                    n,
                    "us",
                )
            )
        # transient run: skip when the estimate (steps x one evaluation) is over budget
        steps = transient_steps(opts.steps, batch)
        estimate = steps * med
        if opts.steps <= 0 or batch > 100_000:
            # the roofline batch (1e6) measures evaluations only
            transient_reason = "no transient run at this batch"
        elif estimate > opts.transient_budget:
            note = f"estimated {estimate:.0f} s > budget {opts.transient_budget:.0f} s"
            transient_reason = f"skipped (over budget): {note}"
            for m, u in (("transient_points_per_s", "point-steps/s"), ("transient_time_s", "s")):
                rows.append(
                    row(
                        side,
                        workload,
                        route,
                        batch,
                        m,
                        unit=u,
                        status="skipped (over budget)",
                        note=note,
                    )
                )
        else:
            ttimes = []
            status, note = "ok", ""
            start = time.perf_counter()
            while True:
                t0 = time.perf_counter()
                try:
                    final = None  # the last repeat's state only (not two at once)
                    final = stepper.run(steps)
                    _device.synchronize(device)
                except Exception as e:  # convergence failure etc.: record, go on
                    status = "failed"
                    note = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                    final, transient_reason = None, f"failed: {note}"
                    break
                ttimes.append(time.perf_counter() - t0)
                spent = time.perf_counter() - start
                # at least --transient-repeats runs, more until --transient-min-time
                # has passed (a cheap run, microseconds per step, is timed many times)
                if len(ttimes) >= opts.transient_repeats and spent >= opts.transient_min_time:
                    break
                if spent + ttimes[-1] > opts.transient_budget:
                    break
            if ttimes:
                tm, tl, th = summary(ttimes)
                rows.append(
                    row(
                        side,
                        workload,
                        route,
                        batch,
                        "transient_points_per_s",
                        batch * steps / tm,
                        batch * steps / th,
                        batch * steps / tl,
                        len(ttimes),
                        "point-steps/s",
                        status,
                        "; ".join(x for x in (note, f"{steps} steps") if x),
                    )
                )
                rows.append(
                    row(
                        side,
                        workload,
                        route,
                        batch,
                        "transient_time_s",
                        tm,
                        tl,
                        th,
                        len(ttimes),
                        "s",
                        status,
                        note,
                    )
                )
            else:
                for m, u in (
                    ("transient_points_per_s", "point-steps/s"),
                    ("transient_time_s", "s"),
                ):
                    rows.append(
                        row(side, workload, route, batch, m, unit=u, status=status, note=note)
                    )
    peak = peak_mb()
    if probes:
        probes.append(sync_probe_us())
        # the worse end: a probe that is not a finite number marks a window (_windows)
        finite = [v for v in probes if math.isfinite(v)]
        worst = max(probes) if len(finite) == len(probes) else math.nan
        before, after_eval, after = probes
        rows.append(
            row(
                side,
                workload,
                route,
                batch,
                "sync_probe_us",
                worst,
                min(finite, default=math.nan),
                worst,
                len(probes),
                "us",
                note=f"before the evaluations {before:.2f} us, after them {after_eval:.2f} us, "
                f"after the transient run {after:.2f} us ({torch.get_num_threads()} threads)",
            )
        )
    rows.append(
        row(
            side,
            workload,
            route,
            batch,
            "peak_rss_delta_mb",
            peak - base_rss,
            n=1,
            unit="MB",
            note=f"process peak {peak:.0f} MB",
        )
    )
    if device == "cuda":
        peak_device = _device.peak_mb(device)
        rows.append(
            row(
                side,
                workload,
                route,
                batch,
                "peak_cuda_delta_mb",
                peak_device - base_device,
                n=1,
                unit="MB",
                note=f"torch.cuda.max_memory_allocated {peak_device:.0f} MB",
            )
        )
    fp_dir = getattr(opts, "fingerprint_dir", None)
    if fp_dir is not None:
        # copied before the next call: a compiled route may reuse its output buffers
        if final is not None:
            final = {n: _agreement.points(_agreement.raw(v)) for n, v in final.items()}
        eval_out, eval_reason = None, ""
        try:
            with torch.no_grad():
                eval_out = call(x)
        except Exception as e:
            eval_reason = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        _agreement.save(
            _agreement.path(fp_dir, side, workload, route, batch),
            eval_out=eval_out,
            eval_reason=eval_reason,
            eval_inputs=x,
            eval_digest=stepper.inputs_digest(1),
            transient_out=final,
            transient_reason=transient_reason,
            transient_digest=stepper.inputs_digest(steps) if final is not None else "",
        )
    return rows


# --------------------------------------------------------------------------- compile reuse


class NotCompiled(RuntimeError):
    """``--compile reuse-only`` and no earlier compile of this input."""


def compiled(
    w, a, rows: list[dict], compile_fn, fallback: str, library_key: str = "", variant: str = ""
) -> Path:
    """The artifact of workload *w*: ``compile_fn(rows) -> path`` appends its timing rows.

    *variant* names a differently compiled artifact of the same input in the same work
    directory (``"-into"``: with the ``forward_into`` graph, for cpp-dispatch): its own
    record ``compile<variant>.json``, so neither is mistaken for the other.

    With ``--compile reuse`` (or ``reuse-only``) an artifact that an earlier run compiled
    from the same input file with the same library (*library_key*: a digest of the
    compiling library's code; ``<work-dir>/compile.json``) is loaded, and its compile
    times are reported again (the note says when they were measured); a compile that
    failed then fails again with the same message. Otherwise ``reuse`` compiles in mode
    *fallback* (and records the result for reuse) and ``reuse-only`` raises NotCompiled.
    """
    stamp = a.work_dir / f"compile{variant}.json"
    key = hashlib.sha256(w.path.read_bytes() + library_key.encode()).hexdigest()
    if a.compile in ("reuse", "reuse-only") and stamp.is_file():
        d = json.loads(stamp.read_text())
        if d["key"] == key and d.get("error"):
            raise RuntimeError(f"{d['error']} (compiled {d['when']})")
        if d["key"] == key and Path(d["artifact"]).is_dir():
            for r in d["rows"]:
                r["note"] = "; ".join(x for x in (r["note"], f"compiled {d['when']}") if x)
            rows.extend(d["rows"])
            return Path(d["artifact"])
    if a.compile == "reuse-only":
        raise NotCompiled("no earlier compile of this input (run.py --compile-only)")
    if a.compile == "reuse":
        a.compile = fallback
    mine: list[dict] = []
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    try:
        artifact = Path(compile_fn(mine))
    except Exception as e:
        msg = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        stamp.write_text(json.dumps({"key": key, "error": msg, "when": when}))
        raise
    stamp.write_text(
        json.dumps({"key": key, "artifact": str(artifact), "rows": mine, "when": when})
    )
    rows.extend(mine)
    return artifact
