"""Machine probe for the roofline note: float64 copy / triad bandwidth and matmul rate.

    python _roofline.py OUT.json [--mb 256] [--repeats 5]

Prints and writes a JSON dict. Bandwidth counts the bytes the kernel must move
(copy: read + write; triad: two reads + one write), not write-allocate traffic; the
best repeat is the machine's capability, the median what a shared machine gave.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch


def _best_median(fn, repeats: int) -> tuple[float, float]:
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def probe(mb: int = 256, repeats: int = 5, n_mm: int = 1024) -> dict:
    n = mb * 1024 * 1024 // 8
    a = torch.rand(n, dtype=torch.float64)
    b = torch.rand(n, dtype=torch.float64)
    c = torch.empty(n, dtype=torch.float64)
    best, med = _best_median(lambda: c.copy_(a), repeats)
    copy = (2 * 8 * n / best / 1e9, 2 * 8 * n / med / 1e9)
    best, med = _best_median(lambda: torch.add(a, b, alpha=3.0, out=c), repeats)
    triad = (3 * 8 * n / best / 1e9, 3 * 8 * n / med / 1e9)
    a = b = c = None  # free the arrays before the matmul
    x = torch.rand(n_mm, n_mm, dtype=torch.float64)
    y = torch.rand(n_mm, n_mm, dtype=torch.float64)
    best, med = _best_median(lambda: x @ y, repeats)
    flops = (2 * n_mm**3 / best / 1e9, 2 * n_mm**3 / med / 1e9)
    return {
        "array_mb": mb,
        "repeats": repeats,
        "threads": torch.get_num_threads(),
        "copy_gb_s_best": copy[0],
        "copy_gb_s_median": copy[1],
        "triad_gb_s_best": triad[0],
        "triad_gb_s_median": triad[1],
        "matmul_n": n_mm,
        "matmul_gflop_s_best": flops[0],
        "matmul_gflop_s_median": flops[1],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--mb", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    r = probe(a.mb, a.repeats)
    a.out.write_text(json.dumps(r, indent=2) + "\n")
    print(json.dumps(r, indent=2))


if __name__ == "__main__":
    main()
