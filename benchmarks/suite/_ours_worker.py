"""Worker for our side: one workload on one route, every batch size, rows to --out.

Run by ``run.py`` with the workspace's Python, one process per (workload, route), so
each has its own peak-memory account. Routes: py-eager (``neml2.load_model``), py-jit
(``neml2.compile(model)`` where it exists), py-aoti (``neml2.compiler.compile_file`` ->
``neml2.aoti.Model``), cpp-aoti (the C++ program of ``benchmarks/aoti/cpp`` on the same
artifact: evaluations only, its outputs of one call read back for the agreement check)
and cpp-dispatch (``neml2.aoti.DispatchedModel``, one CPU worker per core, or one
worker per GPU on cuda, called through its binding). ``--device cuda``: models loaded,
compiled (``neml2-compile --device cuda``) and fed on the GPU.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _agreement
import _cpp_io
import _device
import _measure as M
from _adapters import RawAdapter, TypedAdapter
from _worker_args import parser, private_inductor_cache
from _workloads import WORKLOADS, history, initial_state, to_device

SIDE = "ours"


#: the variant (``_measure.compiled``) of the artifact with the forward_into graph
INTO = "-into"


def _compile(w, a, rows, variant: str = ""):
    """Compile with neml2.compiler; cold (empty caches) and cached compile times.
    *variant* ``INTO``: with the forward_into graph (cpp-dispatch stores its chunks in
    place), in its own folder ``artifact-into``."""
    from neml2.compiler import CompileOptions, compile_file

    write_into = variant == INTO
    opts = CompileOptions.from_strings(w.model, [], devices=[a.device], write_into=write_into)
    # per-grain state (Taylor): the input file declares no sub-batch shapes
    opts = dataclasses.replace(opts, sub_batch=dict(w.state_sub_batch))
    if a.compile in ("cold", "cold-once"):
        cold_dir = Path(tempfile.mkdtemp(prefix="cold-", dir=a.work_dir))
        t0 = time.perf_counter()
        compile_file(w.path, opts, cold_dir / "artifact", use_cache=False)
        rows.append(
            M.row(
                SIDE,
                w.name,
                "py-aoti",
                "",
                "compile_cold_s",
                time.perf_counter() - t0,
                n=1,
                unit="s",
            )
        )
        shutil.rmtree(cold_dir, ignore_errors=True)
    # cached: twice, the first fills build/aoti-cache if it is empty
    dest = a.work_dir / f"artifact{variant}"
    t0 = time.perf_counter()
    res = compile_file(w.path, opts, dest, cache_dir=a.cache_dir)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = compile_file(w.path, opts, dest, cache_dir=a.cache_dir)
    cached = time.perf_counter() - t0
    rows.append(
        M.row(
            SIDE,
            w.name,
            "py-aoti",
            "",
            "compile_cached_s",
            cached,
            n=1,
            unit="s",
            note=f"first compile of this run {first:.1f} s",
        )
    )
    return res.artifact_dir


def _library_key() -> str:
    """Digest of our installed library code: an artifact compiled by other code is stale."""
    from neml2.compiler._compile import _sources_digest

    return _sources_digest()


#: seconds the C++ program warms up before its timed calls (a fresh process's first
#: calls on a large batch are several times slower than its steady state)
CPP_WARMUP_S = 1.0


def cpp_command(
    exe: Path, artifact: Path, inputs: Path, repeat: int, device: str, outputs: Path | None = None
) -> list[str]:
    """The C++ program's command line: *inputs* and *outputs* are file stems
    (``_cpp_io``); with *outputs* it writes the outputs of one more forward call."""
    cmd = [str(exe), str(artifact), str(inputs), str(repeat), str(CPP_WARMUP_S)]
    cmd += ["--device", device]
    if outputs is not None:
        cmd += ["--outputs", str(outputs)]
    return cmd


def _cpp_caller(a, artifact: Path):
    """``call(x, repeat, outputs)`` runs the C++ program on inputs *x*: it loads the
    artifact's ``--device`` target, copies the inputs there, calls
    ``neml2::aoti::Model::forward`` for ``CPP_WARMUP_S`` seconds (at least once) to warm
    up and then ``repeat`` times (on cuda each call synchronizes the device before its
    clock is read), and returns its median per-call time and its report (first call,
    warm-up calls); the caller's own clock is not used. With *outputs* (a file stem) the
    program also writes the outputs of one more call there (``_cpp_io``)."""

    def call(x, repeat=1, outputs: Path | None = None):
        stem = a.work_dir / "inputs"
        _cpp_io.save(stem, x)
        cmd = cpp_command(a.cpp_exe, artifact, stem, repeat, a.device, outputs)
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            tail = " ".join(out.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"{a.cpp_exe.name} exited with {out.returncode}: {tail}")
        report = json.loads(out.stdout.strip().splitlines()[-1])
        return report["forward_us"] * 1e-6, report

    return call


def _measure_cpp(w, a, adapter, b: int) -> list[dict]:
    """cpp-aoti: median per-call time reported by the C++ program (no transient run);
    with ``--fingerprint-dir``, the outputs of one more call of the same program, read
    back (``_cpp_io``) and saved for the agreement check. The inputs stay on the CPU
    here: the program copies them to ``--device`` itself, before its timed calls."""
    hist = history(w, b, max(a.steps, 100))
    st = M.Stepper(adapter, hist, initial_state(w, b), w.state_sub_batch, b)
    x = st.first_step_inputs()
    first, _ = adapter.call(x, 1)
    repeat = a.latency_repeats if b == 1 else a.repeats
    repeat = max(1, min(repeat, int(a.eval_budget / max(first, 1e-6))))
    outputs = None if a.fingerprint_dir is None else a.work_dir / "cpp-outputs"
    med, report = adapter.call(x, repeat, outputs)
    warm = (
        f"after {report['forward_warmup_calls']} warm-up calls in "
        f"{CPP_WARMUP_S:g} s (first call {report['forward_first_us'] * 1e-6:.4g} s)"
    )
    rows = [
        M.row(
            SIDE,
            w.name,
            "cpp-aoti",
            b,
            "eval_points_per_s",
            b / med,
            n=repeat,
            unit="points/s",
            note=f"median reported by the C++ program, {warm}",
        ),
        M.row(SIDE, w.name, "cpp-aoti", b, "eval_time_s", med, n=repeat, unit="s", note=warm),
        M.row(
            SIDE,
            w.name,
            "cpp-aoti",
            b,
            "transient_points_per_s",
            unit="point-steps/s",
            status="not measured",
            note="the C++ program times single evaluations",
        ),
    ]
    if b == 1:
        rows.append(
            M.row(SIDE, w.name, "cpp-aoti", b, "latency_us", med * 1e6, n=repeat, unit="us")
        )
    if outputs is not None:
        eval_out, eval_reason = None, ""
        try:
            eval_out = _cpp_io.load(outputs)
        except (OSError, ValueError, KeyError) as e:
            eval_reason = f"failed: the C++ program's outputs: {type(e).__name__}: {e}"
        for suffix in (".json", ".bin"):
            outputs.with_suffix(suffix).unlink(missing_ok=True)
        _agreement.save(
            _agreement.path(a.fingerprint_dir, SIDE, w.name, "cpp-aoti", b),
            eval_out=eval_out,
            eval_reason=eval_reason,
            eval_inputs=x,
            eval_digest=st.inputs_digest(1),
            transient_out=None,
            transient_reason="the C++ timing program runs no transient",
            transient_digest="",
        )
    return rows


def main() -> int:
    a = parser(__doc__.splitlines()[0]).parse_args()
    a.work_dir.mkdir(parents=True, exist_ok=True)
    private_inductor_cache(a)  # (emptied for a cold compile)
    import torch

    refused = _device.problem(a.device)
    if refused is not None:  # before anything is loaded, compiled or measured
        raise SystemExit(f"_ours_worker.py: {refused}")

    import neml2

    torch.set_grad_enabled(False)
    w = WORKLOADS[a.workload]
    rows: list[dict] = []
    try:
        if a.route == "py-eager":
            model = neml2.load_model(w.path, w.model, device=a.device)
            adapter = TypedAdapter(model)
        elif a.route == "py-jit":
            if not hasattr(neml2, "compile"):
                rows.append(
                    M.row(
                        SIDE,
                        w.name,
                        a.route,
                        "",
                        "available",
                        status="not available",
                        note="neml2.compile does not exist yet",
                    )
                )
                M.emit(rows, a.out)
                return 0
            model = neml2.load_model(w.path, w.model, device=a.device)
            t0 = time.perf_counter()
            jit = neml2.compile(model)
            rows.append(
                M.row(
                    SIDE,
                    w.name,
                    a.route,
                    "",
                    "compile_cached_s",
                    time.perf_counter() - t0,
                    n=1,
                    unit="s",
                    note="neml2.compile(model); graphs compile on first call",
                )
            )
            adapter = TypedAdapter(model, jit)
        elif a.route == "py-aoti":
            from neml2.aoti import Model as AOTIModel

            artifact = M.compiled(w, a, rows, lambda r: _compile(w, a, r), "cold", _library_key())
            adapter = RawAdapter(AOTIModel(artifact, device=a.device))
        elif a.route == "cpp-dispatch":
            # neml2::aoti::DispatchedModel through its binding: the call runs in C++ (GIL
            # released), the batch split over one CPU worker per core, each storing its
            # chunks into the result (the artifact has forward_into, --write-into); on
            # cuda one worker per visible GPU, inputs and outputs on the current one
            from neml2.aoti import DispatchedModel

            artifact = M.compiled(
                w,
                a,
                [],
                lambda r: _compile(w, a, r, variant=INTO),
                "cached",
                _library_key(),
                variant=INTO,
            )
            if a.device == "cuda":
                workers = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
            else:
                workers = ["cpu"] * max(1, os.cpu_count() or 1)
            adapter = RawAdapter(DispatchedModel(str(artifact), workers=workers, device=a.device))
        elif a.route == "cpp-aoti":
            from neml2.aoti import Model as AOTIModel

            if a.cpp_exe is None or not a.cpp_exe.is_file():
                raise FileNotFoundError("no C++ timing program (benchmarks/aoti/cpp) was built")
            artifact = M.compiled(w, a, [], lambda r: _compile(w, a, r), "cached", _library_key())
            # inputs' names and shapes only
            adapter = RawAdapter(AOTIModel(artifact, device=a.device))
            adapter.call = _cpp_caller(a, artifact)
        else:
            raise SystemExit(f"unknown route {a.route}")
    except M.NotCompiled as e:
        rows.append(
            M.row(
                SIDE, w.name, a.route, "", "available", status="skipped (over budget)", note=str(e)
            )
        )
        M.emit(rows, a.out)
        return 0
    except Exception as e:  # a route that cannot build this workload: record it
        msg = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        rows.append(M.row(SIDE, w.name, a.route, "", "available", status="failed", note=msg))
        M.emit(rows, a.out)
        print(msg, file=sys.stderr)
        return 0
    M.emit(rows, a.out)
    last = None  # (batch, median seconds of one evaluation)
    for b in a.batches:
        # times grow with the batch: skip a batch predicted over the evaluation budget
        if last is not None and last[1] * max(1.0, 0.1 * b / last[0]) > a.eval_budget:
            note = f"one evaluation at batch {last[0]} took {last[1]:.3g} s"
            M.emit(
                [
                    M.row(
                        SIDE,
                        w.name,
                        a.route,
                        b,
                        m,
                        unit=u,
                        status="skipped (over budget)",
                        note=note,
                    )
                    for m, u in M.SKIPPABLE
                ],
                a.out,
            )
            continue
        try:
            # the history always has >= 100 increments (step sizes as in the reference
            # benchmarks); a transient run takes the first --steps of them
            if a.route == "cpp-aoti":
                rows = _measure_cpp(w, a, adapter, b)
            else:
                hist = to_device(history(w, b, max(a.steps, 100)), a.device)
                ics = to_device(initial_state(w, b), a.device)
                rows = M.measure_batch(SIDE, w.name, a.route, adapter, w, b, hist, ics, a)
            last = (b, next(r["value"] for r in rows if r["metric"] == "eval_time_s"))
        except Exception as e:
            msg = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
            rows = [M.row(SIDE, w.name, a.route, b, "eval_points_per_s", status="failed", note=msg)]
            print(msg, file=sys.stderr)
        M.emit(rows, a.out)
        for r in rows:
            if r["metric"] in ("eval_points_per_s", "transient_points_per_s"):
                v = r["value"]
                print(
                    f"  {SIDE:9s} {w.name:10s} {a.route:8s} {b:>7d} {r['metric']:24s} "
                    f"{v if v is None else f'{v:.4g}'} {r['status']}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
