"""Throughput of cpp-dispatch (``neml2.aoti.DispatchedModel``) vs workers and scheduler.

    uv run --no-sync python benchmarks/dispatch/bench_dispatch.py [--models elasticity j2]
        [--batches 10000 100000 1000000] [--jacobian-max 100000] [--repeat 5] [--budget 4]

Compiles (or takes from build/aoti-cache) elasticity (-d stress:strain -p elasticity.E)
and J2 isotropic hardening (tests-integration/conformance/data/.../isoharden,
-d stress:E), then times
``forward`` (and ``jacobian`` up to --jacobian-max points) per call for one
``neml2.aoti.Model`` (the baseline) and for ``DispatchedModel`` with 1, 2 and 4 CPU
workers under each scheduler (round-robin, hybrid, queue), plus 2 workers with 2
intra-op threads each. The calls run in C++ with the GIL released, so this measures
the C++ route. Each cell is the median of up to --repeat calls after a warm-up, fewer
when a cell exceeds --budget seconds. Writes results.json / results.md next to this file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from neml2.aoti import DispatchedModel, Model
from neml2.compiler import CompileOptions, compile_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORK = ROOT / "build" / "bench-dispatch"
CACHE = ROOT / "build" / "aoti-cache"
SOLID = ROOT / "tests-integration" / "conformance" / "data" / "regression" / "solid_mechanics"
ELASTICITY = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def _rand(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return scale * (torch.rand(*shape, generator=g, dtype=torch.float64) - 0.5)


def _elasticity(n: int, g: torch.Generator) -> dict[str, torch.Tensor]:
    return {"strain": _rand(g, n, 6, scale=1e-2)}


def _j2(n: int, g: torch.Generator) -> dict[str, torch.Tensor]:
    """A first load step from a virgin state that yields at most points (Newton runs)."""
    zeros = torch.zeros(n, dtype=torch.float64)
    return {
        "E": _rand(g, n, 6, scale=0.02),
        "t": torch.ones(n, dtype=torch.float64),
        "t~1": zeros,
        "equivalent_plastic_strain~1": zeros,
        "plastic_strain~1": torch.zeros(n, 6, dtype=torch.float64),
        "flow_rate~1": zeros,
    }


#: name -> (input file or None for ELASTICITY, model, -d pairs, -p params, inputs(n, g))
MODELS = {
    "elasticity": (None, "elasticity", ["stress:strain"], ["elasticity.E"], _elasticity),
    "j2": (
        SOLID / "rate_independent_plasticity" / "isoharden" / "model.i",
        "model",
        ["stress:E"],
        [],
        _j2,
    ),
}

#: label -> DispatchedModel keyword arguments (None: one neml2.aoti.Model)
CONFIGS: dict[str, dict | None] = {"Model": None}
for _w in (1, 2, 4):
    for _s in ("round-robin", "hybrid", "queue"):
        CONFIGS[f"{_w} worker{'s' if _w > 1 else ''}, {_s}"] = {
            "workers": ["cpu"] * _w,
            "scheduler": _s,
        }
CONFIGS["2 workers x 2 threads, round-robin"] = {
    "workers": ["cpu", "cpu"],
    "scheduler": "round-robin",
    "threads_per_worker": 2,
}


def _median(f, repeat: int, budget: float) -> tuple[float, int]:
    f()  # warm-up (loads the graphs; hybrid calibrates)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat and (not times or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _artifact(name: str) -> Path:
    src, model, pairs, params, _ = MODELS[name]
    if src is None:
        src = WORK / "elasticity.i"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(ELASTICITY)
    if not Path(src).is_file():
        raise SystemExit(
            f"{src} not found (the J2 input comes from tests-integration/conformance/data)"
        )
    opts = CompileOptions.from_strings(model, pairs, params)
    t0 = time.perf_counter()
    res = compile_file(src, opts, WORK / name, cache_dir=CACHE, progress=print)
    print(f"{name}: artifact ready in {time.perf_counter() - t0:.1f} s")
    return Path(res.artifact_dir)


def _report(rows: list[dict], load0: tuple[float, ...], repeat: int) -> None:
    """Write results.json and results.md (after every model, so a long run keeps its rows)."""
    load1 = os.getloadavg()
    meta = {
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "intra_op_threads_main": torch.get_num_threads(),
        "load_average_start": load0,
        "load_average_end": load1,
        "note": "shared machine (~7 people), busy throughout: medians, noisy",
    }
    (HERE / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [
        f"# cpp-dispatch throughput (torch {meta['torch']}, {meta['cpus']} CPUs)",
        "",
        f"Shared 2-core machine, busy: load average {load0[0]:.1f} at the start, "
        f"{load1[0]:.1f} at the end (other people's builds and tests). Medians of up to "
        f"{repeat} calls; throughput in points per second; x = speed-up over one "
        "`neml2.aoti.Model`.",
        "",
        "| model | call | batch | config | threads | ms / call | points / s | x |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        th = ",".join(map(str, r.get("threads", []))) or "-"
        lines.append(
            f"| {r['model']} | {r['call']} | {r['batch']} | {r['config']} | {th} | "
            f"{r['seconds'] * 1e3:.2f} | {r['points_per_s']:.3g} | {r['speedup_vs_Model']:.2f} |"
        )
    (HERE / "results.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {HERE / 'results.md'}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--batches", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--jacobian-max", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--budget", type=float, default=4.0)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS))
    a = p.parse_args()

    load0 = os.getloadavg()
    rows = []
    for name in a.models:
        art = _artifact(name)
        make = MODELS[name][4]
        models = {
            label: Model(art) if CONFIGS[label] is None else DispatchedModel(art, **CONFIGS[label])
            for label in a.configs
        }
        for n in a.batches:
            x = make(n, torch.Generator().manual_seed(n))
            calls = ["forward"] + (["jacobian"] if n <= a.jacobian_max else [])
            for call in calls:
                base = None
                for label, m in models.items():
                    f = getattr(m, call)
                    t, k = _median(lambda f=f, x=x: f(x), a.repeat, a.budget)
                    base = t if base is None else base
                    row = {
                        "model": name,
                        "call": call,
                        "batch": n,
                        "config": label,
                        "seconds": t,
                        "calls": k,
                        "points_per_s": n / t,
                        "speedup_vs_Model": base / t,
                    }
                    if isinstance(m, DispatchedModel):
                        row["threads"] = [w[1] for w in m.workers]
                    rows.append(row)
                    print(
                        f"{name:10s} {call:8s} {n:>8d} {label:36s} {t * 1e3:9.2f} ms "
                        f"{n / t:12.0f} pts/s  x{base / t:.2f}  ({k} calls)"
                    )
        _report(rows, load0, a.repeat)


if __name__ == "__main__":
    main()
