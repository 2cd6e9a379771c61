"""Compile time and per-call latency / throughput: py-eager vs py-aoti (libneml2 via pybind).

    uv run python benchmarks/aoti/bench_aoti.py [--batches 1 100 10000 100000] [--repeat 20]

Compiles (or takes from build/aoti-cache) linear elasticity with -d stress:strain,
records the compile time with the cache bypassed once (--cold), and times forward and
jacobian on both routes. Writes results.json / results.md next to this file.
py-aoti runs the C++ runtime (neml2::aoti::Model), so its numbers bound cpp-aoti's
from above by the Python call overhead (a few microseconds).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

import neml2
from neml2.aoti import Model as AOTI
from neml2.compiler import CompileOptions, compile_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ELASTICITY = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def _time(f, repeat: int) -> float:
    f()
    t0 = time.perf_counter()
    for _ in range(repeat):
        f()
    return (time.perf_counter() - t0) / repeat


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, nargs="+", default=[1, 100, 10_000, 100_000])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--cold", action="store_true", help="also time a compile without cache")
    a = p.parse_args()
    work = ROOT / "build" / "bench-aoti"
    work.mkdir(parents=True, exist_ok=True)
    src = work / "elasticity.i"
    src.write_text(ELASTICITY)
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"])
    results: dict = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    t0 = time.perf_counter()
    res = compile_file(src, opts, work, cache_dir=ROOT / "build" / "aoti-cache")
    results["compile_cached_s"] = time.perf_counter() - t0
    results["graphs"] = [
        {
            "graph": g.name,
            "cache_hit": g.cache_hit,
            "export_s": g.export_s,
            "compile_s": g.compile_s,
        }
        for g in res.graphs
    ]
    if a.cold:
        t0 = time.perf_counter()
        compile_file(src, opts, work / "cold", use_cache=False)
        results["compile_cold_s"] = time.perf_counter() - t0
    eager = neml2.load_model(src, "elasticity")
    aoti = AOTI(res.artifact_dir)
    rows = []
    with torch.no_grad():
        for n in a.batches:
            x = {"strain": 1e-3 * torch.rand(n, 6, dtype=torch.float64)}
            for call in ("forward", "jacobian"):
                te = _time(lambda c=call, x=x: getattr(eager, c)(x), a.repeat)
                ta = _time(lambda c=call, x=x: getattr(aoti, c)(x), a.repeat)
                rows.append(
                    {
                        "model": "elasticity",
                        "call": call,
                        "batch": n,
                        "py_eager_us": te * 1e6,
                        "py_aoti_us": ta * 1e6,
                        "py_eager_points_per_s": n / te,
                        "py_aoti_points_per_s": n / ta,
                    }
                )
                print(rows[-1])
    results["rows"] = rows
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        f"# AOTI benchmark (torch {results['torch']}, {results['threads']} threads)",
        "",
        f"compile (cache): {results['compile_cached_s']:.1f} s"
        + (f"; cold: {results['compile_cold_s']:.1f} s" if "compile_cold_s" in results else ""),
        "",
        "| model | call | batch | py-eager (us) | py-aoti (us) | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['call']} | {r['batch']} | {r['py_eager_us']:.1f} | "
            f"{r['py_aoti_us']:.1f} | {r['py_eager_us'] / r['py_aoti_us']:.2f} |"
        )
    (HERE / "results.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
