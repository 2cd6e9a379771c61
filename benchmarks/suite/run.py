"""Benchmark suite: our routes side by side with the reference library (NEML2 3.1.0).

    python benchmarks/suite/run.py --quick                  # minutes: a smoke run
    python benchmarks/suite/run.py --reference              # full matrix, both sides
    python benchmarks/suite/run.py --workloads elasticity chaboche2 --routes py-eager \\
        --batches 1 1000 --sides ours

Every (side, workload, route) runs in a fresh subprocess (``_ours_worker.py`` with this
Python, ``_reference_worker.py`` with the reference environment's, see
``_reference_env.py``) that measures every batch size in turn: one model evaluation
(throughput, and latency at batch 1), a transient run of ``--steps`` steps, and the
peak resident memory of the cell (VmHWM, reset before each batch). Each worker also
saves its results per batch (``<out-dir>/fingerprints``, ``_agreement.py``); once all
have run, every route of ours is compared with the reference's py-eager and same route
and with our py-eager on the same inputs (rows ``agreement_max_rel:...``, the ``agree``
column of the side-by-side table; a cell that disagrees shows no ratio). Compile times
(cold: empty caches; cached) are measured by the py-aoti workers. Results go to
``benchmarks/results/<date>_<machine>/``: ``results.csv`` (every row),
``side_by_side.{md,csv}`` (ours / reference per cell), ``throughput_*.png`` and
``ROOFLINE.md`` (also written to ``benchmarks/suite/ROOFLINE.md``).

``--device cuda`` measures on the GPU (``_device.py``): both workers get ``--device
cuda``, inputs are copied there once, models load / compile for it, every timed call
synchronizes the device, peak memory is ``torch.cuda.max_memory_allocated``, and
``metadata.json`` records the GPU. On a machine whose torch (either side's) sees no GPU
the run is refused at once, naming why; it never falls back to the CPU.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import _agreement  # noqa: E402
import _device  # noqa: E402
import _reference_env  # noqa: E402
import _report  # noqa: E402
import _windows  # noqa: E402
from _measure import FIELDS, row  # noqa: E402
from _workloads import WORKLOADS  # noqa: E402

OUR_ROUTES = _report.ROUTES
REFERENCE_ROUTES = _report.REFERENCE_ROUTES
BATCHES = [1, 100, 1_000, 10_000, 100_000]
ROOFLINE_BATCH = 1_000_000
#: C++ routes need a timing program (benchmarks/aoti, benchmarks/dispatch); none yet
CPP_ROUTES = ("cpp-aoti", "cpp-dispatch")
#: cpp-aoti times single evaluations with this C++ program (built into build/bench-suite)
CPP_PROGRAM = ROOT / "benchmarks" / "aoti" / "cpp"


def machine_label(device: str = "cpu") -> str:
    """``<cores>core-<arch>`` (``-cuda`` appended for a GPU run): no hostname, nothing
    that identifies the machine."""
    label = f"{os.cpu_count()}core-{platform.machine()}".lower()
    return label if device == "cpu" else f"{label}-{device}"


def build_dir(device: str = "cpu") -> Path:
    """Compiled artifacts and scratch of the runs on *device*: ``build/bench-suite``,
    ``build/bench-suite/cuda`` for a GPU run (a cuda artifact never replaces a cpu one)."""
    base = ROOT / "build" / "bench-suite"
    return base if device == "cpu" else base / device


def work_dir(side: str, workload: str, route: str, device: str = "cpu") -> Path:
    """A worker's artifacts and scratch caches: ``<build_dir>/<side>/<workload>/<route>``.
    The C++ routes run the py-aoti artifact of the same workload."""
    return build_dir(device) / side / workload / ("py-aoti" if route in CPP_ROUTES else route)


def git_state(root: Path = ROOT) -> dict:
    """The commit measured and whether the tree differs from it.

    Returns:
        ``{"commit": short hash, "dirty": [paths git reports as changed or untracked]}``
        (``git status --porcelain``, results folders left out: they are the run's output).
        ``$NEML2_BENCH_GIT_STATE`` names a JSON file with these two keys to use instead:
        a copy of the tree without ``.git`` (the GPU machine, ``benchmarks/gpu``) carries
        the state recorded where the repository is.
    """
    carried = os.environ.get("NEML2_BENCH_GIT_STATE")
    if carried:
        try:
            state = json.loads(Path(carried).read_text())
            return {"commit": str(state["commit"]), "dirty": list(state["dirty"])}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"run.py: NEML2_BENCH_GIT_STATE={carried}: {e}") from e

    def git(*args: str) -> str:
        r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"run.py: git {' '.join(args)} failed: {r.stderr.strip()}")
        return r.stdout

    commit = git("rev-parse", "--short", "HEAD").strip()
    dirty = [
        line[3:]
        for line in git("status", "--porcelain", "--untracked-files=all").splitlines()
        if line[3:] and not line[3:].startswith("benchmarks/results/")
    ]
    return {"commit": commit, "dirty": dirty}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 workloads, py-eager + py-aoti (reference: py-eager), batches "
        "1 100 10000, short budgets, no cold compile",
    )
    p.add_argument("--workloads", nargs="+", choices=list(WORKLOADS))
    p.add_argument("--routes", nargs="+", choices=OUR_ROUTES, help="our routes")
    p.add_argument("--reference-routes", nargs="+", choices=[*REFERENCE_ROUTES, "py-jit"])
    p.add_argument("--batches", nargs="+", type=int)
    p.add_argument("--sides", nargs="+", choices=("ours", "reference"))
    p.add_argument(
        "--device",
        choices=_device.DEVICES,
        default="cpu",
        help="measure on the CPU (default) or the GPU: inputs, models and compiled targets "
        "on cuda, timers read after torch.cuda.synchronize(), peak memory from "
        "torch.cuda.max_memory_allocated, no roofline probe (it measures host memory); "
        "refused at once where torch sees no GPU, never a fallback to cpu",
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="also run the reference side (creates its environment if missing)",
    )
    p.add_argument("--steps", type=int, default=100, help="transient steps")
    p.add_argument("--repeats", type=int, help="max evaluation repeats per batch")
    p.add_argument("--min-time", type=float, help="min seconds of evaluation repeats")
    p.add_argument("--eval-budget", type=float, help="max seconds of evaluations per batch")
    p.add_argument(
        "--transient-budget",
        type=float,
        help="transient runs estimated longer than this are skipped (s)",
    )
    p.add_argument("--transient-repeats", type=int, help="transient runs per cell, at least")
    p.add_argument(
        "--transient-min-time",
        type=float,
        help="time transient runs until this many seconds have passed (cheap cells: many "
        "runs, their median reported)",
    )
    p.add_argument(
        "--cell-timeout", type=float, help="kill a (side, workload, route) worker after this many s"
    )
    p.add_argument(
        "--compile",
        choices=("cold", "cached"),
        help="py-aoti compile timing: cold also compiles with empty caches (the worker's "
        "Inductor cache emptied first); every compile runs in a worker of its own, and a "
        "fresh worker loads the artifact to measure it",
    )
    p.add_argument(
        "--reference-compile",
        choices=("cold", "cold-once", "cached", "reuse-only"),
        default="cold-once",
        help="reference py-aoti: cold-once (default) compiles once with an empty "
        "Inductor cache; cold adds a second, cached compile (minutes); reuse-only loads "
        "the artifact of an earlier --compile-only run (as --reuse-compiled does for both "
        "sides), e.g. when only our side's code changed",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every (workload, route) cell this many times, the two sides alternating "
        "(ours, reference, ours, reference, ...), and report each timing as the best of "
        "its rounds (the others in its note and in rounds.csv): this machine's speed "
        "swings by up to 2x for minutes at a time; later rounds reuse the first's artifact",
    )
    p.add_argument(
        "--window-retries",
        type=int,
        default=0,
        help="measure a batch again, up to this many times, when its sync probe (either "
        "side's worker, before the batch, after its evaluations or after it) says "
        "the machine was in a slow window; "
        "the attempt with the lowest probe is kept, the others go to window_retries.csv "
        "(_windows.py; CPU only)",
    )
    p.add_argument(
        "--window-retries-at-end",
        type=int,
        default=0,
        help="after every worker has run (with its --window-retries), measure the batches "
        "still in a slow window again, up to this many more times: a window lasts seconds "
        "to minutes, often longer than the retries right after it, and the end of the run "
        "is an hour or more later (the same rule for both sides; CPU only)",
    )
    p.add_argument(
        "--window-retry-max-s",
        type=float,
        default=600.0,
        help="do not retry a worker whose measuring run took longer than this (s)",
    )
    p.add_argument(
        "--window-retry-wait-s",
        type=float,
        default=0.0,
        help="wait this long (s, nothing running) before each retry: a slow window lasts "
        "seconds to a minute, so a retry started at once often lands in the same one",
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        help="start no new worker after this many minutes (the rest is recorded as skipped); "
        "a worker is killed at that deadline less --reserve-s for each worker after it, and "
        "a window retry that would end past it is not made",
    )
    p.add_argument(
        "--reserve-s",
        type=float,
        default=120.0,
        help="with --max-minutes: the time (s) kept back for each worker still to run "
        "when a worker's time limit is set (default 120 s)",
    )
    p.add_argument(
        "--compile-only",
        action="store_true",
        help="only compile (py-aoti, both sides of --sides) and record the compile times "
        "under build/bench-suite for a later --reuse-compiled run",
    )
    p.add_argument(
        "--reuse-compiled",
        action="store_true",
        help="py-aoti: load artifacts (and report compile times) of an earlier compile of "
        "the same input (--compile-only) instead of compiling; without one the route is "
        "skipped",
    )
    p.add_argument(
        "--jit-workloads",
        nargs="+",
        choices=list(WORKLOADS),
        default=["elasticity"],
        help="py-jit only for these (its first call compiles for minutes on implicit models)",
    )
    p.add_argument(
        "--keep-freed-memory",
        action="store_true",
        help="run every worker (both sides) with glibc's malloc keeping freed memory "
        "(MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ = 4 GB): large outputs are then "
        "reused instead of being page-faulted in again on every call",
    )
    p.add_argument(
        "--allow-dirty",
        action="store_true",
        help="measure a tree with uncommitted changes (recorded as dirty in metadata.json "
        "and the README); without it such a run is refused: a table comes from one clean "
        "commit",
    )
    p.add_argument("--no-roofline", action="store_true")
    p.add_argument(
        "--keep-fingerprints",
        action="store_true",
        help="keep the results both sides saved for the agreement check "
        "(<out-dir>/fingerprints/*.pt; removed once compared otherwise)",
    )
    p.add_argument("--out-dir", type=Path, help="default benchmarks/results/<date>_<machine>")
    p.add_argument("--note", default="", help="a line for the results README")
    a = p.parse_args(argv)
    quick = a.quick
    defaults = {
        "workloads": ["elasticity", "j2_radret", "perzyna"] if quick else list(WORKLOADS),
        "routes": ["py-eager", "py-aoti"] if quick else OUR_ROUTES,
        "reference_routes": ["py-eager"] if quick else REFERENCE_ROUTES,
        "batches": [1, 100, 10_000] if quick else BATCHES,
        "sides": ["ours", "reference"] if a.reference else ["ours"],
        "repeats": 3 if quick else 7,
        "min_time": 0.3 if quick else 1.0,
        "eval_budget": 10.0 if quick else 30.0,
        "transient_budget": 10.0 if quick else 600.0,
        "transient_repeats": 1 if quick else 3,
        "transient_min_time": 0.0 if quick else 2.0,
        "cell_timeout": 300.0 if quick else 1800.0,
        "compile": "cached" if quick else "cold",
    }
    for k, v in defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.rounds < 1:
        p.error(f"--rounds must be at least 1, got {a.rounds}")
    for name in (
        "window_retries",
        "window_retries_at_end",
        "window_retry_max_s",
        "window_retry_wait_s",
        "reserve_s",
    ):
        if not getattr(a, name) >= 0:  # (a NaN too: time.sleep would refuse it later)
            opt = "--" + name.replace("_", "-")
            p.error(f"{opt} must be 0 or more, got {getattr(a, name):g}")
    refused = _device.problem(a.device)
    if refused is not None:
        p.error(refused)
    if a.device != "cpu":
        a.no_roofline = True  # the probe measures the host's memory, not the GPU's
    if a.compile_only:
        a.routes, a.reference_routes, a.batches, a.no_roofline = ["py-aoti"], ["py-aoti"], [], True
        a.out_dir = a.out_dir or build_dir(a.device) / "compile-only"
    a.git = git_state()
    if a.git["dirty"] and not a.allow_dirty:
        shown = "\n  ".join(a.git["dirty"][:10])
        more = f"\n  ... and {len(a.git['dirty']) - 10} more" if len(a.git["dirty"]) > 10 else ""
        p.error(
            f"the tree at {a.git['commit']} has uncommitted changes:\n  {shown}{more}\n"
            "commit them (a table comes from one clean commit) or pass --allow-dirty"
        )
    if a.compile_only:
        a.rounds = 1
    if a.reuse_compiled:
        a.compile = a.reference_compile = "reuse-only"
    if a.out_dir is None:
        date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
        suffix = "_quick" if quick else ""
        label = machine_label(a.device)
        a.out_dir = ROOT / "benchmarks" / "results" / f"{date}_{label}{suffix}"
    return a


#: glibc malloc settings of --keep-freed-memory (the same for both sides)
KEEP_FREED_MEMORY = {
    "MALLOC_MMAP_THRESHOLD_": str(4 * 1024**3),
    "MALLOC_TRIM_THRESHOLD_": str(4 * 1024**3),
}


def worker_command(
    python: Path,
    script: str,
    side: str,
    workload: str,
    route: str,
    batches: list[int],
    a,
    raw: Path,
    compile_mode: str | None = None,
) -> list[str]:
    """The command line of one (side, workload, route) worker (``_worker_args.py``),
    appending its rows to *raw*; *compile_mode* replaces the ``--compile`` the options
    give (a later round: ``reuse``)."""
    # the C++ routes run the py-aoti artifact of the same workload (compiled if missing)
    cpp = route in CPP_ROUTES
    cmd = [
        str(python),
        str(HERE / script),
        "--workload",
        workload,
        "--route",
        route,
        "--batches",
        *map(str, batches),
        "--steps",
        str(a.steps),
        "--repeats",
        str(a.repeats),
        "--min-time",
        str(a.min_time),
        "--eval-budget",
        str(a.eval_budget),
        "--transient-budget",
        str(a.transient_budget),
        "--transient-repeats",
        str(a.transient_repeats),
        "--transient-min-time",
        str(a.transient_min_time),
        "--compile",
        compile_mode
        or (
            ("reuse-only" if a.reuse_compiled else "reuse")
            if cpp
            else a.compile
            if side == "ours"
            else a.reference_compile
        ),
        "--device",
        a.device,
        "--work-dir",
        str(work_dir(side, workload, route, a.device)),
        "--cache-dir",
        str(ROOT / "build" / "aoti-cache"),
        "--out",
        str(raw),
        "--fingerprint-dir",
        str(a.fingerprint_dir),
    ]
    if route == "cpp-aoti" and a.cpp_exe is not None:
        cmd += ["--cpp-exe", str(a.cpp_exe)]
    return cmd


def compiles_in_worker(route: str, compile_mode: str, round_index: int) -> bool:
    """Whether a (route, ``--compile`` mode, round) worker may compile its artifact in
    the process that then measures it. Such a job is split in two (the compile in a worker
    of its own): small compiled calls measured in the process that had just compiled ran
    up to 1.8x slower than in a fresh one (2026-12-05: our elasticity py-aoti at 1e3,
    8.4 against 4.7 us a call; Perzyna 7.0 against 5.1 ms). py-aoti compiles in its first
    round; cpp-dispatch (which runs in the worker's process) compiles its ``forward_into``
    variant where none is recorded; cpp-aoti times a separate C++ program; with
    ``reuse-only`` nothing compiles."""
    if round_index > 0 or compile_mode == "reuse-only":
        return False
    return route in ("py-aoti", "cpp-dispatch")


def run_worker(
    python: Path,
    script: str,
    side: str,
    workload: str,
    route: str,
    batches: list[int],
    a,
    raw: Path,
    log,
    timeout: float,
    compile_mode: str | None = None,
) -> None:
    """One (side, workload, route) subprocess; on timeout the missing batches are recorded."""
    cmd = worker_command(python, script, side, workload, route, batches, a, raw, compile_mode)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the reference worker must see only its own environment
    env.setdefault("PYTHONWARNINGS", "ignore")
    if a.keep_freed_memory:
        env.update(KEEP_FREED_MEMORY)
    log(f"[{side} {workload} {route}] batches {' '.join(map(str, batches))}")
    t0 = time.perf_counter()
    # own session: on timeout the worker and its children (Inductor compile workers) go
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        for line in stdout.splitlines():
            log(line)
        if proc.returncode != 0:
            tail = " ".join(stderr.strip().splitlines()[-3:])[:300]
            log(f"  worker exited with {proc.returncode}: {tail}")
            _fill_missing(
                raw,
                side,
                workload,
                route,
                batches,
                "failed",
                f"worker exit {proc.returncode}: {tail}",
            )
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        log(f"  worker killed after {timeout:.0f} s")
        _fill_missing(
            raw,
            side,
            workload,
            route,
            batches,
            "skipped (over budget)",
            f"worker killed after {timeout:.0f} s",
        )
    log(f"  ({time.perf_counter() - t0:.0f} s)")


def _fill_missing(raw: Path, side, workload, route, batches, status, note) -> None:
    seen = set()
    if raw.is_file():
        for line in raw.read_text().splitlines():
            r = json.loads(line)
            if (r["side"], r["workload"], r["route"]) == (side, workload, route):
                seen.add(r["batch"])
                if r["metric"] == "available" and r["status"] != "ok":
                    return  # the route itself failed; already recorded
    with raw.open("a") as f:
        for b in batches:
            if b not in seen:
                r = row(
                    side,
                    workload,
                    route,
                    b,
                    "eval_points_per_s",
                    unit="points/s",
                    status=status,
                    note=note,
                )
                f.write(json.dumps(r) + "\n")


def device_probe(python: Path, device: str, side: str) -> dict:
    """Ask *python*'s torch (``_device.py``) whether it sees *device*; its description
    of the GPU (``_device.describe``). Exits with the refusal when it does not."""
    r = subprocess.run(
        [str(python), str(HERE / "_device.py"), device], capture_output=True, text=True
    )
    if r.returncode != 0:
        tail = " ".join(r.stderr.strip().splitlines()[-3:])
        raise SystemExit(f"run.py: --device {device}: the {side} side's probe failed: {tail}")
    d = json.loads(r.stdout.strip().splitlines()[-1])
    if d["problem"]:
        raise SystemExit(f"run.py: the {side} side: {d['problem']}")
    return d["gpu"]


def build_cpp_program(log) -> Path | None:
    """Build the cpp-aoti timing program against the installed runtime; None if impossible."""
    if not (CPP_PROGRAM / "CMakeLists.txt").is_file():
        log(f"cpp-aoti: no C++ timing program in {CPP_PROGRAM.relative_to(ROOT)}")
        return None
    build = ROOT / "build" / "bench-suite" / "cpp"
    probe = "import neml2.aoti as a; print(a.cmake_prefix_path())"
    try:
        prefix = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.strip()
        for cmd in (
            ["cmake", "-S", str(CPP_PROGRAM), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"],
            ["cmake", "--build", str(build)],
        ):
            subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=900)
    except (subprocess.SubprocessError, OSError) as e:
        err = getattr(e, "stderr", "") or str(e)
        log(f"cpp-aoti: building the C++ timing program failed: {err.strip()[-300:]}")
        return None
    exe = build / "bench_cpp"
    return exe if exe.is_file() else None


def _shown(path: Path) -> str:
    """*path* relative to the repository when inside it (results never name this machine)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return path.name


def main(argv=None) -> int:
    a = parse_args(argv)
    out: Path = a.out_dir
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "rows.jsonl"
    if raw.exists():
        raw.unlink()
    a.fingerprint_dir = out / "fingerprints"
    if a.fingerprint_dir.exists():
        shutil.rmtree(a.fingerprint_dir)
    logf = (out / "run.log").open("w")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    started = time.time()
    meta = {
        "started_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_label(a.device),
        "device": a.device,
        "gpu": None,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average_start": os.getloadavg(),
        "python": platform.python_version(),
        "args": {k: (_shown(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        "git_commit": a.git["commit"],
        "git_dirty": bool(a.git["dirty"]),
        "git_dirty_paths": a.git["dirty"],
        "note": a.note,
    }
    ref_python = None
    if "reference" in a.sides:
        ref_python = _reference_env.ensure(log)
    if a.device != "cpu":
        # each side's own torch must see the GPU: refused here, before any worker runs
        for side, py in (("ours", Path(sys.executable)), ("reference", ref_python)):
            if py is not None:
                gpu = device_probe(py, a.device, side)
                meta["gpu"] = meta["gpu"] or gpu
        log(f"device {a.device}: {json.dumps(meta['gpu'])}")
    versions = {}
    for side, py in (("ours", Path(sys.executable)), ("reference", ref_python)):
        if py is None:
            continue
        probe = (
            "import torch, importlib.metadata as m; "
            "print(torch.__version__, torch.get_num_threads(), m.version('neml2') "
            "if side == 'reference' else m.version('neml2-models'))"
        ).replace("side == 'reference'", str(side == "reference"))
        r = subprocess.run([str(py), "-c", probe], capture_output=True, text=True)
        versions[side] = r.stdout.strip()
    meta["versions"] = versions
    log(f"results -> {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    log(f"versions: {versions}")

    roofline = None
    if not a.no_roofline:
        log("roofline probe (copy / triad / matmul)")
        rf = out / "roofline.json"
        subprocess.run(
            [
                sys.executable,
                str(HERE / "_roofline.py"),
                str(rf),
                "--mb",
                "64" if a.quick else "256",
            ],
            check=True,
            capture_output=True,
        )
        roofline = json.loads(rf.read_text())
        log(json.dumps(roofline))

    a.cpp_exe = build_cpp_program(log) if "cpp-aoti" in a.routes else None
    scripts = {"ours": "_ours_worker.py", "reference": "_reference_worker.py"}
    pythons = {"ours": Path(sys.executable), "reference": ref_python}
    routes = {"ours": a.routes, "reference": a.reference_routes}
    # first the routes both sides have, then ours alone (cut first by --max-minutes)
    shared = [r for r in OUR_ROUTES if r in REFERENCE_ROUTES]
    # rounds alternate the sides within a cell: ours, reference, ours, reference, ...
    jobs = [
        (w, route, k, side)
        for group in (shared, [r for r in OUR_ROUTES if r not in REFERENCE_ROUTES])
        for w in a.workloads
        for route in group
        for k in range(a.rounds)
        for side in a.sides
        if route in routes[side] and (route != "py-jit" or w in a.jit_workloads)
    ]
    raws = [raw] if a.rounds == 1 else [out / f"rows.round{k + 1}.jsonl" for k in range(a.rounds)]
    for r in raws:
        r.unlink(missing_ok=True)
    later = "reuse-only" if a.reuse_compiled else "reuse"  # a later round's compile
    planned: dict[tuple[str, str, str], list[int]] = {}
    deferred = []  # (worker, measure, raw, measuring time): --window-retries-at-end
    deadline = started + 60 * a.max_minutes if a.max_minutes else None  # time.time()
    for i, (w, route, k, side) in enumerate(jobs):
        batches = list(a.batches)
        if w == "elasticity" and roofline is not None and route != "py-jit":
            batches.append(ROOFLINE_BATCH)
        planned[(side, w, route)] = batches
        timeout = a.cell_timeout
        if deadline is not None:
            left = deadline - time.time()
            if left <= 0:
                log(f"[{side} {w} {route}] not started: past --max-minutes {a.max_minutes}")
                _fill_missing(
                    raws[k],
                    side,
                    w,
                    route,
                    batches,
                    "skipped (over budget)",
                    f"run past its {a.max_minutes:g} min budget",
                )
                continue
            # up to the deadline, less a reserve for each worker after this one: an equal
            # share of what is left killed the reference's Taylor py-eager worker (about
            # 37 minutes, the run's longest) at 30 minutes in two tables
            n_after = len(jobs) - i - 1
            timeout = min(timeout, max(30.0, left - a.reserve_s * n_after))
        if a.rounds > 1:
            log(f"round {k + 1} of {a.rounds}")
        mode = later if k > 0 else None
        side_mode = a.compile if side == "ours" else a.reference_compile
        if batches and compiles_in_worker(route, side_mode, k):
            # the compile in a worker of its own, then a fresh one that loads its artifact
            # and measures (the compile's rows come from the record it leaves, `reuse`)
            run_worker(
                pythons[side],
                scripts[side],
                side,
                w,
                route,
                [],
                a,
                out / "compile.jsonl",
                log,
                timeout,
            )
            (out / "compile.jsonl").unlink(missing_ok=True)
            mode = "reuse"
        t_measure = time.perf_counter()
        run_worker(
            pythons[side],
            scripts[side],
            side,
            w,
            route,
            batches,
            a,
            raws[k],
            log,
            timeout,
            compile_mode=mode,
        )
        spent = time.perf_counter() - t_measure

        def measure(todo, dest, s=side, w=w, route=route, m=mode, t=timeout):
            run_worker(pythons[s], scripts[s], s, w, route, todo, a, dest, log, t, compile_mode=m)

        if batches and a.device == "cpu":
            worker = (side, w, route)
            seen = [*raws, out / RETRIED]
            # a retry now may not eat into the reserve of the workers still to run
            until = deadline - a.reserve_s * n_after if deadline is not None else None
            retry_windows(a, worker, measure, raws[k], seen, out, spent, log, deadline=until)
            deferred.append((worker, measure, raws[k], spent))
    if a.window_retries_at_end and a.device == "cpu":
        for worker, measure, raw_k, spent in deferred:
            if deadline is not None and time.time() > deadline:
                log(f"no retries at the end of the run: past --max-minutes {a.max_minutes:g}")
                break
            seen = [*raws, out / RETRIED]
            retry_windows(
                a, worker, measure, raw_k, seen, out, spent, log, at_end=True, deadline=deadline
            )
    per_round = [_read_rows(r) for r in raws]
    rows = per_round[0] if a.rounds == 1 else best_of_rounds(per_round)
    if a.rounds > 1:
        write_rounds_csv(out / "rounds.csv", per_round)
    rows += agreement_rows(a.fingerprint_dir, planned, log)
    retried = _read_rows(out / RETRIED)
    if retried:
        with (out / "window_retries.csv").open("w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=FIELDS)
            wr.writeheader()
            wr.writerows(retried)
    (out / RETRIED).unlink(missing_ok=True)
    meta["finished_utc"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta["wall_s"] = round(time.time() - started)
    meta["load_average_end"] = os.getloadavg()
    write_results(out, rows, meta, roofline, log)
    for r in raws:
        r.unlink(missing_ok=True)  # only once the results are written
    if not a.keep_fingerprints:
        shutil.rmtree(a.fingerprint_dir, ignore_errors=True)
    log(f"done in {meta['wall_s']} s")
    return 0


#: rows a window retry replaced (``window_retries.csv`` at the end of the run)
RETRIED = "window_retries.jsonl"


def _read_rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


def retry_windows(
    a,
    worker: tuple,
    measure,
    raw: Path,
    seen: list[Path],
    out: Path,
    spent: float,
    log,
    at_end: bool = False,
    deadline: float | None = None,
) -> None:
    """``--window-retries``: measure the batches of *worker* (side, workload, route) whose
    sync probe says they ran in a slow window again, up to ``a.window_retries`` times, by
    ``measure(batches, dest)``; per batch the attempt with the lowest probe stays in
    *raw*, the others go to ``out / RETRIED`` (``_windows.pick_attempts``). The baseline
    is the lower quartile of every probe in the files *seen* so far. A worker whose
    measuring run took longer than ``a.window_retry_max_s`` is not retried (logged); each
    retry starts ``a.window_retry_wait_s`` seconds after the window was seen. *at_end*:
    the pass after every worker has run, up to ``a.window_retries_at_end`` more times,
    the attempts numbered on from the retries right after the worker. *deadline* (a
    ``time.time()`` value, from ``--max-minutes``): an attempt whose wait and measuring
    run, as long as the last one, would end past it is not made (logged)."""
    label = " ".join(worker)
    first = a.window_retries + 1 if at_end else 1
    last = a.window_retries + (a.window_retries_at_end if at_end else 0)
    for attempt in range(first, last + 1):
        rows = _read_rows(raw)
        probes = [v for p in seen for v in _windows.probe_values(_read_rows(p))]
        base = _windows.baseline(probes, _windows.MIN_VALUES)
        todo = _windows.windowed_batches(rows, *worker, base)
        if not todo:
            return
        if spent > a.window_retry_max_s:
            if not at_end:  # (said once)
                log(
                    f"[{label}] in a slow window at {todo}, not retried: its run took "
                    f"{spent:.0f} s > --window-retry-max-s {a.window_retry_max_s:g}"
                )
            return
        wait = a.window_retry_wait_s
        if deadline is not None and time.time() + wait + spent > deadline:
            log(
                f"[{label}] in a slow window at {todo}, not retried: "
                f"{max(0.0, deadline - time.time()):.0f} s left before --max-minutes (less "
                f"--reserve-s for each worker still to run), a retry takes {wait + spent:.0f} s"
            )
            return
        log(
            f"[{label}] slow window (probe over {_windows.WINDOW_FACTOR:g} x {base:.2f} us) "
            f"at batches {todo}: retry {attempt} of {last}"
            + (" (at the end of the run)" if at_end else "")
            + (f" after {wait:g} s" if wait else "")
        )
        if wait:
            time.sleep(wait)
        dest = out / "retry.jsonl"
        dest.unlink(missing_ok=True)
        t0 = time.perf_counter()
        measure(todo, dest)
        spent = time.perf_counter() - t0
        mine = [r for r in rows if (r["side"], r["workload"], r["route"]) == worker]
        again = [r for r in _read_rows(dest) if r["batch"] in todo]
        dest.unlink(missing_ok=True)
        kept, dropped = _windows.pick_attempts(
            [mine, again], todo, labels=("the measurement before", f"retry {attempt}")
        )
        others = [r for r in rows if (r["side"], r["workload"], r["route"]) != worker]
        raw.write_text("".join(json.dumps(r) + "\n" for r in others + kept))
        with (out / RETRIED).open("a") as f:
            f.writelines(json.dumps(r) + "\n" for r in dropped)


def _better(metric: str):
    """How the best of several rounds' values of *metric* is chosen: ``max`` for a
    throughput, ``min`` for a time, ``max`` (the worst case) for peak memory; ``None``:
    not a measurement (the first round's row stands)."""
    if metric.endswith("_per_s"):
        return max
    if metric.endswith(("_time_s", "_us")) or metric.startswith("compile_"):
        return min
    if metric.endswith("_mb"):
        return max
    return None


def _measured(r: dict) -> bool:
    """A row with a finite value and status ok (a NaN timing is never a round's best)."""
    v = r["value"]
    return r["status"] == "ok" and isinstance(v, (int, float)) and math.isfinite(v)


def best_of_rounds(per_round: list[list[dict]]) -> list[dict]:
    """One row per (side, workload, route, batch, metric) from the rows of each round.

    A measurement's row is that of the round with the best value (peak memory: the
    largest) among the rounds where it is ``ok`` (``_better``); its note says which round
    and lists every round's value.
    Where no round is ok, or for a row that is not a measurement, the first round's row.
    The order is the first round's, then rows only later rounds have.
    """
    keyed: dict[tuple, list[tuple[int, dict]]] = {}
    for k, rows in enumerate(per_round):
        for r in rows:
            key = (r["side"], r["workload"], r["route"], r["batch"], r["metric"])
            keyed.setdefault(key, []).append((k, r))
    out = []
    for key, found in keyed.items():
        pick = _better(key[4])
        ok = [(k, r) for k, r in found if _measured(r)]
        if pick is None or not ok:
            out.append(found[0][1])
            continue
        k, best = pick(ok, key=lambda kr: kr[1]["value"])
        values = ", ".join(
            f"r{j + 1} {r['value']:.4g}" if _measured(r) else f"r{j + 1} {r['status']}"
            for j, r in found
        )
        which = "largest" if key[4].endswith("_mb") else "best"
        note = f"round {k + 1} of {len(found)} ({which}; {values})"
        out.append({**best, "note": "; ".join(x for x in (best["note"], note) if x)})
    return out


def write_rounds_csv(path: Path, per_round: list[list[dict]]) -> None:
    """Every round's rows, with a leading ``round`` column (1-based)."""
    with path.open("w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["round", *FIELDS])
        for k, rows in enumerate(per_round):
            for r in rows:
                wr.writerow([k + 1, *(r[c] for c in FIELDS)])


def comparisons(planned: dict) -> list[tuple]:
    """``(workload, route, batch, other_side, other_route)`` per agreement check: each
    of our routes against the reference's py-eager and the reference's same route, and
    each of our routes but py-eager against our py-eager, at the batches both ran."""
    out = []
    for (side, w, route), batches in planned.items():
        if side != "ours":
            continue
        others = [("reference", "py-eager")]
        if route != "py-eager":
            others += [("reference", route), ("ours", "py-eager")]
        for other in others:
            theirs = planned.get((other[0], w, other[1]))
            if theirs is None:
                continue
            out += [(w, route, b, *other) for b in batches if b in theirs]
    return out


def agreement_rows(fp_dir: Path, planned: dict, log=print) -> list[dict]:
    """Rows ``agreement_max_rel:<quantity>:<side>-<route>`` for our (workload, route,
    batch): the max relative difference of our results from the other side's on the
    same inputs (``_agreement.compare``), status ok / disagree / missing."""
    rows = []
    cache: dict[tuple, dict | None] = {}

    def fp(side, w, route, b):
        key = (side, w, route, b)
        if key not in cache:
            cache[key] = _agreement.load(_agreement.path(fp_dir, *key))
        return cache[key]

    for w, route, b, oside, oroute in comparisons(planned):
        mine, theirs = fp("ours", w, route, b), fp(oside, w, oroute, b)
        for q in _agreement.QUANTITIES:
            if (
                mine is not None
                and theirs is not None
                and mine[q] is None
                and theirs[q] is None
                and mine[f"{q}_reason"] == theirs[f"{q}_reason"]
            ):
                continue  # neither side computed it (e.g. no transient run at 1e6)
            status, value, note = _agreement.compare(
                mine, theirs, q, (f"ours {route}", f"{oside} {oroute}")
            )
            rows.append(
                row(
                    "ours",
                    w,
                    route,
                    b,
                    f"agreement_max_rel:{q}:{oside}-{oroute}",
                    value,
                    n=1,
                    unit="rel",
                    status=status,
                    note=note,
                )
            )
            shown = "–" if value is None else f"{value:.2e}"
            log(f"agreement {w} {b} {q}: ours {route} vs {oside} {oroute}: {shown} {status}")
    return rows


def write_results(out: Path, rows: list[dict], meta: dict, probe, log) -> None:
    """``metadata.json``, ``results.csv`` and the report (tables, plots, roofline) in *out*."""
    (out / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
    with (out / "results.csv").open("w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=FIELDS)
        wr.writeheader()
        wr.writerows(rows)
    _report.write_all(rows, meta, probe, out, HERE / "ROOFLINE.md", log)


if __name__ == "__main__":
    sys.exit(main())
