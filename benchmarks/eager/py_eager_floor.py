"""py-eager per-call time of the same model and calls as bench_eager (autograd off, one
thread): the part of cpp-eager's time that is the Python model itself, not the bridge.

Usage: python py_eager_floor.py INPUT.i [REPEATS]
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

import neml2


def per_call_us(f, repeats: int) -> tuple[float, float]:
    for _ in range(max(5, repeats // 10)):
        f()
    t = []
    for _ in range(repeats):
        a = time.perf_counter()
        f()
        t.append((time.perf_counter() - a) * 1e6)
    return statistics.median(t), min(t)


def main(path: str, repeats: int) -> None:
    torch.set_num_threads(1)
    model = neml2.load_model(path, "model")
    print("| batch | call | py-eager median (us) | py-eager min (us) |")
    print("|---:|---|---:|---:|")
    with torch.no_grad():
        for batch in (1, 10000):
            x = {"strain": torch.rand(batch, 6, dtype=torch.float64) * 1e-3}
            n = repeats * 5 if batch == 1 else repeats
            for call in ("forward", "jacobian"):
                fn = getattr(model, call)
                med, lo = per_call_us(lambda fn=fn, x=x: fn(x), n)
                print(f"| {batch} | {call} | {med:.1f} | {lo:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
