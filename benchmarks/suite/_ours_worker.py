"""Worker for our side: one workload on one route, every batch size, rows to --out.

Run by ``run.py`` with the workspace's Python, one process per (workload, route), so
each has its own peak-memory account. Routes: py-eager (``neml2.load_model``), py-jit
(``neml2.compile(model)`` where it exists), py-aoti (``neml2.compiler.compile_file`` ->
``neml2.aoti.Model``), cpp-aoti (the C++ program of ``benchmarks/aoti/cpp`` on the same
artifact: evaluations only) and cpp-dispatch (``neml2.aoti.DispatchedModel``, one CPU
worker per core, called through its binding).
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
import _measure as M
from _adapters import RawAdapter, TypedAdapter
from _worker_args import parser
from _workloads import WORKLOADS, history, initial_state

SIDE = "ours"


def _compile(w, a, rows, write_into: bool = False):
    """Compile with neml2.compiler; cold (empty caches) and cached compile times.
    *write_into*: with the forward_into graph (cpp-dispatch stores its chunks in place)."""
    from neml2.compiler import CompileOptions, compile_file

    opts = CompileOptions.from_strings(w.model, [], write_into=write_into)
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
    t0 = time.perf_counter()
    res = compile_file(w.path, opts, a.work_dir / "artifact", cache_dir=a.cache_dir)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = compile_file(w.path, opts, a.work_dir / "artifact", cache_dir=a.cache_dir)
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


def _save_inputs(stem: Path, x: dict) -> None:
    """The C++ program's input format: ``stem.json`` ({"tensors": {"input/<name>":
    {shape, offset}}}, offsets in float64 elements) + ``stem.bin`` (raw float64)."""
    import torch

    index, chunks, offset = {}, [], 0
    for name, t in x.items():
        t = t.to(torch.float64).contiguous()
        index[f"input/{name}"] = {"shape": list(t.shape), "offset": offset}
        chunks.append(t.numpy().astype("<f8").tobytes())
        offset += t.numel()
    stem.with_suffix(".bin").write_bytes(b"".join(chunks))
    stem.with_suffix(".json").write_text(json.dumps({"tensors": index}))


#: seconds the C++ program warms up before its timed calls (a fresh process's first
#: calls on a large batch are several times slower than its steady state)
CPP_WARMUP_S = 1.0


def _cpp_caller(a, artifact: Path):
    """``call(x)`` runs the C++ program on inputs *x*: it loads the artifact, calls
    ``neml2::aoti::Model::forward`` for ``CPP_WARMUP_S`` seconds (at least once) to warm
    up and then ``repeat`` times, and returns its median per-call time and its report
    (first call, warm-up calls); the caller's own clock is not used."""

    def call(x, repeat=1):
        stem = a.work_dir / "inputs"
        _save_inputs(stem, x)
        out = subprocess.run(
            [str(a.cpp_exe), str(artifact), str(stem), str(repeat), str(CPP_WARMUP_S)],
            capture_output=True,
            text=True,
            check=True,
        )
        report = json.loads(out.stdout.strip().splitlines()[-1])
        return report["forward_us"] * 1e-6, report

    return call


def _measure_cpp(w, a, adapter, b: int) -> list[dict]:
    """cpp-aoti: median per-call time reported by the C++ program (no transient run)."""
    hist = history(w, b, max(a.steps, 100))
    st = M.Stepper(adapter, hist, initial_state(w, b), w.state_sub_batch, b)
    x = st.first_step_inputs()
    first, _ = adapter.call(x, 1)
    repeat = a.latency_repeats if b == 1 else a.repeats
    repeat = max(1, min(repeat, int(a.eval_budget / max(first, 1e-6))))
    med, report = adapter.call(x, repeat)
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
    if a.fingerprint_dir is not None:
        _agreement.save_missing(
            _agreement.path(a.fingerprint_dir, SIDE, w.name, "cpp-aoti", b),
            "the C++ timing program returns no outputs",
        )
    return rows


def main() -> int:
    a = parser(__doc__.splitlines()[0]).parse_args()
    a.work_dir.mkdir(parents=True, exist_ok=True)
    if a.compile in ("cold", "cold-once", "reuse", "reuse-only"):
        # a private, empty Inductor cache: the cold compile hits nothing
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(a.work_dir / "inductor-cache")
    import torch

    import neml2

    torch.set_grad_enabled(False)
    w = WORKLOADS[a.workload]
    rows: list[dict] = []
    try:
        if a.route == "py-eager":
            model = neml2.load_model(w.path, w.model)
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
            model = neml2.load_model(w.path, w.model)
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
            adapter = RawAdapter(AOTIModel(artifact))
        elif a.route == "cpp-dispatch":
            # neml2::aoti::DispatchedModel through its binding: the call runs in C++ (GIL
            # released), the batch split over one CPU worker per core, each storing its
            # chunks into the result (the artifact has forward_into, --write-into)
            from neml2.aoti import DispatchedModel

            artifact = M.compiled(
                w, a, [], lambda r: _compile(w, a, r, write_into=True), "cached", _library_key()
            )
            workers = ["cpu"] * max(1, os.cpu_count() or 1)
            adapter = RawAdapter(DispatchedModel(str(artifact), workers=workers))
        elif a.route == "cpp-aoti":
            from neml2.aoti import Model as AOTIModel

            if a.cpp_exe is None or not a.cpp_exe.is_file():
                raise FileNotFoundError("no C++ timing program (benchmarks/aoti/cpp) was built")
            artifact = M.compiled(w, a, [], lambda r: _compile(w, a, r), "cached", _library_key())
            adapter = RawAdapter(AOTIModel(artifact))  # inputs' names and shapes only
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
                hist = history(w, b, max(a.steps, 100))
                rows = M.measure_batch(
                    SIDE, w.name, a.route, adapter, w, b, hist, initial_state(w, b), a
                )
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
