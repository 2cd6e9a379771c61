"""Compile time and per-call latency / throughput: py-eager vs py-aoti vs cpp-aoti.

    uv run --no-sync python benchmarks/aoti/bench_aoti.py [--models elasticity j2 chaboche]
        [--batches 1 100 10000 100000] [--repeat 10] [--budget 3]

Compiles (or takes from build/aoti-cache) elasticity (-d stress:strain), J2 isoharden and
Chaboche (-d stress:E), the same sources and options as the C++ route test
(cpp/tests/make_artifact.py, whose input generators this reuses), then times forward and
jacobian per call on the three routes: py-eager (``neml2.load_model``), py-aoti
(``neml2.aoti.Model``) and cpp-aoti (``bench_cpp``, built here from benchmarks/aoti/cpp
against the wheel's SDK; inputs handed over as raw float64 files). Each number is the
median of up to ``--repeat`` calls after a warm-up, fewer when the calls of one cell
exceed ``--budget`` seconds (the machine is shared: medians, not means).

Writes results.json / results.md next to this file. Compile times: the cached compile is
measured here; a graph compiled cold in this run reports its export + AOT Inductor time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import torch

import neml2
from neml2.aoti import Model as AOTI
from neml2.compiler import CompileOptions, compile_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORK = ROOT / "build" / "bench-aoti"
CACHE = ROOT / "build" / "aoti-cache"


def _routes_module():
    """cpp/tests/make_artifact.py: the model cases, input generators and file format."""
    spec = importlib.util.spec_from_file_location(
        "make_artifact", ROOT / "cpp" / "tests" / "make_artifact.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _median(f, repeat: int, budget: float) -> tuple[float, int]:
    f()  # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat and (not times or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _bench_cpp() -> Path:
    build = WORK / "cpp"
    exe = build / "bench_cpp"
    prefix = neml2.aoti.cmake_prefix_path()
    subprocess.run(
        ["cmake", "-S", str(HERE / "cpp"), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run(["cmake", "--build", str(build)], check=True, stdout=subprocess.DEVNULL)
    return exe


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["elasticity", "j2", "chaboche"])
    p.add_argument("--batches", type=int, nargs="+", default=[1, 100, 10_000, 100_000])
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--budget", type=float, default=3.0, help="seconds per cell")
    p.add_argument("--no-cpp", action="store_true", help="skip cpp-aoti (no cmake)")
    a = p.parse_args()
    ma = _routes_module()
    WORK.mkdir(parents=True, exist_ok=True)
    exe = None if a.no_cpp else _bench_cpp()
    results: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with ~7 users "
        "(load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " at start)",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "compile": {},
        "rows": [],
    }
    for name in a.models:
        src, model, pairs, params, make_inputs = ma.CASES[name]
        if src is None:
            src = WORK / f"{name}.i"
            src.write_text(ma.ELASTICITY)
        opts = CompileOptions.from_strings(model, pairs, params)
        t0 = time.perf_counter()
        res = compile_file(src, opts, WORK / name, cache_dir=CACHE, progress=print)
        results["compile"][name] = {
            "total_s": time.perf_counter() - t0,
            "graphs": [
                {
                    "graph": g.name,
                    "cache_hit": g.cache_hit,
                    "export_s": g.export_s,
                    "compile_s": g.compile_s,
                }
                for g in res.graphs
            ],
        }
        eager = neml2.load_model(src, model)
        aoti = AOTI(res.artifact_dir)
        for n in a.batches:
            x, _ = make_inputs(n, torch.Generator().manual_seed(n))
            row = {"model": name, "batch": n}
            with torch.no_grad():
                for call in ("forward", "jacobian"):
                    for route, m in (("py_eager", eager), ("py_aoti", aoti)):
                        t, k = _median(
                            lambda m=m, c=call, x=x: getattr(m, c)(x), a.repeat, a.budget
                        )
                        row[f"{route}_{call}_us"] = t * 1e6
                        row[f"{route}_{call}_calls"] = k
            if exe is not None:
                stem = WORK / "inputs" / f"{name}_b{n}"
                ma.save_tensors(stem, {f"input/{k}": v for k, v in x.items()})
                out = subprocess.run(
                    [str(exe), str(res.artifact_dir), str(stem), str(a.repeat)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                cpp = json.loads(out.strip().splitlines()[-1])
                row["cpp_aoti_forward_us"] = cpp["forward_us"]
                row["cpp_aoti_jacobian_us"] = cpp["jacobian_us"]
            print(row, flush=True)
            results["rows"].append(row)
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    _write_md(results)


def _write_md(results: dict) -> None:
    lines = [
        f"# AOTI benchmark (torch {results['torch']}, {results['threads']} threads)",
        "",
        f"Machine: {results['machine']}. Per-call medians; numbers on a loaded shared",
        "machine are noisy (compare ratios, not absolute values).",
        "",
        "## Compile",
        "",
        "| model | graph | cache hit | export (s) | compile (s) |",
        "|---|---|---|---|---|",
    ]
    for name, c in results["compile"].items():
        for g in c["graphs"]:
            lines.append(
                f"| {name} | {g['graph']} | {g['cache_hit']} | {g['export_s']:.1f} | "
                f"{g['compile_s']:.1f} |"
            )
    cold = HERE / "cold_compile.json"
    if cold.is_file():
        lines += [
            "",
            "Cold compiles (no cache), measured separately (`cold_compile.json`):",
            "",
            "| model | graph | export (s) | AOT Inductor (s) | load average | note |",
            "|---|---|---|---|---|---|",
        ]
        for c in json.loads(cold.read_text()):
            lines.append(
                f"| {c['model']} | {c['graph']} | {c['export_s']:.0f} | {c['compile_s']:.0f} | "
                f"{c['load']} | {c.get('note', '')} |"
            )
    lines += [
        "",
        "## Per call (us) and throughput (points/s)",
        "",
        "| model | call | batch | py-eager | py-aoti | cpp-aoti | py-aoti points/s | "
        "speed-up py-aoti / py-eager |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        for call in ("forward", "jacobian"):
            e, pa = r[f"py_eager_{call}_us"], r[f"py_aoti_{call}_us"]
            c = r.get(f"cpp_aoti_{call}_us")
            lines.append(
                f"| {r['model']} | {call} | {r['batch']} | {e:.0f} | {pa:.0f} | "
                f"{'' if c is None else f'{c:.0f}'} | {r['batch'] / pa * 1e6:.3g} | "
                f"{e / pa:.1f} |"
            )
    (HERE / "results.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
