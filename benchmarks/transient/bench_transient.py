"""Transient throughput of implicit models: point-steps per second vs batch size.

    uv run python benchmarks/transient/bench_transient.py [--batches 100 10000 100000]
        [--steps 20] [--big-steps 5] [--repeat 3] [--threads N] [--models j2 chaboche]

Runs the TransientDriver of ``j2_isoharden.i`` and ``chaboche.i`` (uniaxial strain
control, a different strain amplitude per batch point, every point yielding) on
the py-eager route, after one untimed warm-up run. Batches of 1e5 use
``--big-steps`` steps to keep the run short. ``--threads`` sets
``torch.set_num_threads`` (default: torch's choice); on a machine shared with other
jobs one thread is often faster, because every parallel region waits for the
slowest thread. Besides wall time, the process CPU time of each run is recorded.
Writes ``results.csv`` and ``results.md`` next to this file (``--out`` names
another stem), median and spread of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

import neml2.drivers  # noqa: F401
from neml2.models import load_input

HERE = Path(__file__).resolve().parent
MODELS = {
    "j2": ("J2 isotropic (Voce)", "j2_isoharden.i"),
    "chaboche": ("Chaboche (2 back stresses)", "chaboche.i"),
}


def overrides(nbatch: int, nsteps: int) -> list[str]:
    n = nsteps + 1
    return [
        f"Tensors/times/expr='Scalar(torch.linspace(0.0, 1.0, {n}).unsqueeze(-1)"
        f".expand({n}, {nbatch}))'",
        f"Tensors/strains/expr='SR2(torch.linspace(0.0, 1.0, {n}).reshape({n}, 1, 1) * "
        f"torch.linspace(0.005, 0.05, {nbatch}).reshape(1, {nbatch}, 1) * "
        "torch.tensor([1.0, -0.5, -0.5, 0.0, 0.0, 0.0]))'",
    ]


def run_once(path: Path, nbatch: int, nsteps: int) -> tuple[float, float]:
    """Wall time of the driver run (the driver's own clock) and the process CPU time."""
    ctx = load_input(path, overrides(nbatch, nsteps))
    driver = ctx.object("Drivers", "driver")
    c0 = time.process_time()
    driver.run()
    return driver.elapsed, time.process_time() - c0


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[100, 10_000, 100_000])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--big-steps", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--out", default="results", help="stem of the .csv / .md written here")
    a = ap.parse_args()
    if a.threads is not None:
        torch.set_num_threads(a.threads)
    rows = []
    for key in a.models:
        label, fname = MODELS[key]
        path = HERE / fname
        run_once(path, 10, 2)  # warm-up: imports, first-call costs
        for nb in a.batches:
            steps = a.steps if nb < 100_000 else a.big_steps
            runs = [run_once(path, nb, steps) for _ in range(a.repeat)]
            times = [w for w, _ in runs]
            med = statistics.median(times)
            cpu = statistics.median(c for _, c in runs)
            rate = nb * steps / med
            spread = (max(times) - min(times)) / med * 100 if med else 0.0
            rows.append(
                {
                    "model": label,
                    "route": "py-eager",
                    "threads": torch.get_num_threads(),
                    "batch": nb,
                    "steps": steps,
                    "median_s": f"{med:.4f}",
                    "spread_pct": f"{spread:.1f}",
                    "point_steps_per_s": f"{rate:.4g}",
                    "cpu_s": f"{cpu:.4f}",
                }
            )
            print(
                f"{label:28s} batch {nb:>7d} x {steps:>3d} steps: {med:8.3f} s "
                f"({rate:10.4g} point-steps/s, spread {spread:.0f}%, cpu {cpu:.3f} s)",
                flush=True,
            )
    with (HERE / f"{a.out}.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Transient throughput (py-eager)",
        "",
        f"Written by `benchmarks/transient/bench_transient.py` on {stamp}.",
        f"Machine: {cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; float64; median of {a.repeat} runs.",
        "",
        f"Load average at the end: {_loadavg()} (the machine is shared; wall times vary).",
        "",
        "| model | batch | steps | median (s) | spread | point-steps / s | CPU (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['steps']} | {r['median_s']} | "
            f"{r['spread_pct']} % | {r['point_steps_per_s']} | {r['cpu_s']} |"
        )
    (HERE / f"{a.out}.md").write_text("\n".join(lines) + "\n")


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
