"""Command line shared by both workers (standard library only)."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--workload", required=True)
    p.add_argument("--route", required=True)
    p.add_argument("--batches", type=int, nargs="*", required=True)
    p.add_argument("--steps", type=int, default=100, help="transient steps (0: none)")
    p.add_argument("--repeats", type=int, default=5, help="max evaluation repeats per batch")
    p.add_argument("--latency-repeats", type=int, default=200, help="max repeats at batch 1")
    p.add_argument("--min-time", type=float, default=1.0, help="min seconds of evaluations")
    p.add_argument("--eval-budget", type=float, default=20.0, help="max seconds of evaluations")
    p.add_argument("--transient-repeats", type=int, default=3)
    p.add_argument(
        "--transient-min-time",
        type=float,
        default=0.0,
        help="repeat a transient run until this many seconds have passed (at least "
        "--transient-repeats runs, within --transient-budget)",
    )
    p.add_argument(
        "--transient-budget",
        type=float,
        default=60.0,
        help="skip a transient run estimated longer than this (s)",
    )
    p.add_argument(
        "--compile",
        choices=("cold", "cold-once", "cached", "reuse", "reuse-only"),
        default="cached",
        help="py-aoti: cold = a cold compile (empty caches), then a cached one; "
        "cold-once = only the cold one (reference side: saves minutes); reuse = the "
        "artifact and times of an earlier compile of the same input, if any (reuse-only: "
        "else skip the route)",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where inputs, models and compiled targets live (cuda: refused at once when "
        "torch sees no GPU; never a fallback to cpu)",
    )
    p.add_argument("--work-dir", type=Path, required=True, help="artifacts, scratch caches")
    p.add_argument("--cache-dir", type=Path, help="compile cache for the cached compile")
    p.add_argument("--cpp-exe", type=Path, help="cpp-aoti: the C++ timing program")
    p.add_argument("--out", type=Path, required=True, help="JSON-lines file to append rows to")
    p.add_argument(
        "--fingerprint-dir",
        type=Path,
        help="save each batch's results here for the agreement check (_agreement.py)",
    )
    return p


def private_inductor_cache(a) -> None:
    """Point Inductor at the worker's own cache, ``<work-dir>/inductor-cache``, before
    torch is imported (``--compile`` cold, cold-once, reuse, reuse-only). A cold compile
    empties it first: the folder outlives the run, and a later run's "cold" compile hit
    the graphs an earlier one left there (2026-12-05, elasticity: 8 s against 31 s)."""
    if a.compile not in ("cold", "cold-once", "reuse", "reuse-only"):
        return
    cache = a.work_dir / "inductor-cache"
    if a.compile in ("cold", "cold-once"):
        shutil.rmtree(cache, ignore_errors=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
