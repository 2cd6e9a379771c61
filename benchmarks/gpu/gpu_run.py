"""The first run on a GPU (issue #65): one prepared script, every step on a time budget.

Here, on the development machine, once before the device call (no GPU needed)::

    bash benchmarks/gpu/run.sh --prepare    # wheels + git state into build/gpu-carry

There, on a machine with one CUDA GPU (the device tool; see benchmarks/README.md,
*Running on a GPU*)::

    bash benchmarks/gpu/run.sh --out build/gpu-results --bundle "$OUT"

Steps, in order, each with a time budget (seconds, ``--budget STEP=S``) inside a total
(``--total``, default 570 s, under the device tool's 600 s limit of one command):

``env``
    Install our packages into the Python that runs this script, over the torch already
    installed there, without a network: the five pure-Python packages from the wheels
    ``--prepare`` built (``pip install --no-deps --no-index``), the compiled runtime
    built from source against that torch (``pip install --no-deps --no-build-isolation``,
    the cpp-eager module left out), then an import check. A second run on the same
    machine finds them installed and skips the install.
``probe``
    What the run measured on: torch, its CUDA build, the GPU, ``nvcc``, the torch the
    lock pins (``probe.json``).
``routes``
    ``gpu_routes.py``: py-eager, py-jit, py-aoti, cpp-aoti and cpp-dispatch on the GPU
    against py-eager on the CPU, forward / jvp / Jacobian of elasticity, J2 and Chaboche
    (``routes.jsonl``).
``suite``
    ``benchmarks/suite/run.py --device cuda``: py-eager and py-aoti of elasticity, J2
    radial return, Perzyna and Chaboche 2 at 1e4, 1e5 and 1e6 points, with the agreement
    checks (``suite/``). The reference library (NEML2 3.1.0) is measured beside ours
    only where its environment is ready (``_reference_env.ready()``); it needs torch
    2.12.1, which a machine without a network cannot install, and its columns then read
    "not measured (offline)".

A step that fails or runs out of its time is killed (its whole process group) and
recorded; the steps after it that need it are recorded as not run; the script never
stops at a failure. At the end it writes ``table.md`` (printed), ``steps.json`` and, with
``--bundle DIR``, a copy of those plus ``results.tar.gz`` (the whole results folder) into
DIR. Exit status: 0 when every step and every cell passed (reference columns not
measured offline do not count against it), 1 otherwise, 2 when refused: no CUDA device
(``torch.cuda.is_available()`` is False) or bad options. ``--dry-run`` prints the plan of
commands and exits without running anything (no GPU needed).

Only the standard library is imported here: our packages may not be installed yet when
this starts, and torch is asked about the GPU in a subprocess.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = ROOT / "benchmarks" / "suite"

#: what ``--prepare`` leaves for the device call (``build/`` is ignored by git, so it
#: travels only when the device tool's ``carry`` names it)
CARRY = ROOT / "build" / "gpu-carry"
WHEELS = CARRY / "wheels"
GIT_STATE = CARRY / "git-state.json"
#: the pure-Python members, built into wheels here (their build backend, hatchling, is
#: not installed on the GPU machine); the runtime is built there, against its torch
PURE_PACKAGES = ("neml2-hit", "neml2-tensors", "neml2-models", "neml2-drivers", "neml2-compile")
RUNTIME = ROOT / "packages" / "neml2-aoti-runtime"

STEPS = ("env", "probe", "routes", "suite")
#: seconds per step; they add up to 555, inside TOTAL_S with RESERVE_S to spare
BUDGETS = {"env": 180.0, "probe": 30.0, "routes": 165.0, "suite": 180.0}
TOTAL_S = 570.0
#: kept back from the last step for the table and the bundle
RESERVE_S = 15.0
#: a step with less time than this left is not started
MIN_STEP_S = 10.0
#: steps that need another one to have passed
NEEDS = {"probe": ("env",), "routes": ("env", "probe"), "suite": ("env", "probe")}

ROUTE_MODELS = ("elasticity", "j2_isoharden", "chaboche")
ROUTES = ("py-eager", "py-jit", "py-aoti", "cpp-aoti", "cpp-dispatch")
OPS = ("forward", "jvp", "jacobian")
WORKLOADS = ("elasticity", "j2_radret", "perzyna", "chaboche2")
SUITE_ROUTES = ("py-eager", "py-aoti")
BATCHES = (10_000, 100_000, 1_000_000)
#: the suite's agreement tolerance (``_agreement.RTOL``, the conformance checks' rtol)
AGREE_RTOL = 1e-5
OFFLINE = "not measured (offline)"


# ---------------------------------------------------------------------- options
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="benchmarks/gpu/run.sh",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--prepare",
        action="store_true",
        help="here, before the device call: build the wheels and record the git state "
        "into build/gpu-carry (no GPU needed)",
    )
    mode.add_argument(
        "--dry-run", action="store_true", help="print the plan of commands; run nothing"
    )
    p.add_argument("--out", type=Path, default=ROOT / "build" / "gpu-results")
    p.add_argument("--bundle", type=Path, help="copy table, steps and a tarball here ($OUT)")
    p.add_argument(
        "--steps", nargs="+", choices=STEPS, default=list(STEPS), help="the steps to run"
    )
    p.add_argument(
        "--skip-env",
        action="store_true",
        help="use the Python's packages as they are (the env step passes without installing)",
    )
    p.add_argument("--total", type=float, default=TOTAL_S, help="seconds for the whole run")
    p.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="STEP=S",
        help=f"a step's budget in seconds (defaults {BUDGETS})",
    )
    p.add_argument("--python", default=sys.executable, help="the Python of every step")
    p.add_argument("--probe", type=Path, help=argparse.SUPPRESS)  # the probe step itself
    a = p.parse_args(argv)
    a.budgets = dict(BUDGETS)
    for item in a.budget:
        name, _, value = item.partition("=")
        if name not in STEPS:
            p.error(f"--budget {item}: unknown step {name!r} (steps: {', '.join(STEPS)})")
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not (seconds > 0 and math.isfinite(seconds)):
            p.error(f"--budget {item}: the seconds must be a positive number")
        a.budgets[name] = seconds
    if not (a.total > 0 and math.isfinite(a.total)):
        p.error(f"--total must be a positive number of seconds, got {a.total}")
    a.out = a.out.resolve()
    return a


# ---------------------------------------------------------------------- time budgets
def step_timeout(
    budget: float, now: float, deadline: float, reserve: float = RESERVE_S
) -> float | None:
    """Seconds a step may run: its *budget*, cut to what is left before *deadline* less
    *reserve*; None when under ``MIN_STEP_S`` would be left (the step is not started)."""
    left = deadline - reserve - now
    t = min(budget, left)
    return t if t >= MIN_STEP_S else None


# ---------------------------------------------------------------------- refusal
CUDA_PROBE = (
    "import json, sys\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    print(json.dumps({'python': sys.executable, 'error': f'{type(e).__name__}: {e}'}))\n"
    "else:\n"
    "    print(json.dumps({'python': sys.executable, 'torch': torch.__version__,\n"
    "                      'cuda_build': torch.version.cuda,\n"
    "                      'available': torch.cuda.is_available()}))\n"
)


def cuda_state(python: str) -> dict:
    """What *python*'s torch says about CUDA (a subprocess: torch is not imported here)."""
    r = subprocess.run([python, "-c", CUDA_PROBE], capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        tail = " ".join(r.stderr.strip().splitlines()[-2:])
        return {"python": python, "error": f"exit {r.returncode}: {tail}"}
    return json.loads(lines[-1])


def refusal(state: dict) -> str | None:
    """One line saying why this machine cannot run the GPU steps; None when it can."""
    if "error" in state:
        return (
            f"gpu_run: no usable torch in {state['python']} ({state['error']}); nothing was "
            "run (--dry-run prints the plan)"
        )
    if not state.get("available"):
        build = f"CUDA {state['cuda_build']} build" if state.get("cuda_build") else "CPU-only build"
        return (
            f"gpu_run: no CUDA device: torch {state['torch']} ({build}) in {state['python']} "
            "says torch.cuda.is_available() is False; nothing was run (--dry-run prints the plan)"
        )
    return None


# ---------------------------------------------------------------------- the plan
@dataclass
class Step:
    """One step: its commands (a function of the seconds it gets, for the commands that
    pace themselves) and extra environment variables."""

    name: str
    budget: float
    commands: Callable[[float], list[list[str]]]
    env: dict[str, str] = field(default_factory=dict)
    #: set when the step has nothing to run (the reason is its note, it passes)
    done: str = ""


def locked_torch(lock: Path = ROOT / "uv.lock") -> str | None:
    """The torch version uv.lock pins."""
    try:
        text = lock.read_text()
    except OSError:
        return None
    mark = 'name = "torch"\nversion = "'
    i = text.find(mark)
    return text[i + len(mark) :].split('"', 1)[0] if i >= 0 else None


def reference_ready() -> bool:
    """Whether the reference library's environment exists and holds neml2 3.1.0 with
    torch 2.12.1 (never created here: that needs the network)."""
    sys.path.insert(0, str(SUITE))
    try:
        import _reference_env

        return _reference_env.ready()
    finally:
        sys.path.remove(str(SUITE))


def installed_stamp() -> dict:
    """What the env step installs: the wheels' names and sizes, the git state carried."""
    wheels = sorted((w.name, w.stat().st_size) for w in WHEELS.glob("*.whl"))
    state = json.loads(GIT_STATE.read_text()) if GIT_STATE.is_file() else None
    return {"wheels": wheels, "git": state}


STAMP = ROOT / "build" / "gpu-env" / "stamp.json"


def stamp_json() -> dict:
    """:func:`installed_stamp` as it reads back from JSON (tuples as lists)."""
    return json.loads(json.dumps(installed_stamp()))


IMPORT_CHECK = (
    "import importlib.metadata as m, neml2, neml2.aoti, neml2.compiler, torch; "
    "print('neml2-models', m.version('neml2-models'), 'runtime built against torch', "
    "neml2.aoti.torch_version(), 'running torch', torch.__version__)"
)


def env_step(a) -> Step:
    py = a.python
    pip = [py, "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir"]
    pip += ["--disable-pip-version-check", "--no-build-isolation", "--force-reinstall"]

    def commands(_timeout: float) -> list[list[str]]:
        wheels = sorted(str(w) for w in WHEELS.glob("*.whl"))
        return [
            [*pip, *wheels] if wheels else [py, "-c", f"raise SystemExit({NO_WHEELS!r})"],
            # against the torch installed there; cpp-eager is no route of this run
            [*pip, "-C", "cmake.define.NEML2_BUILD_EAGER=OFF", str(RUNTIME)],
            [py, "-c", IMPORT_CHECK],
        ]

    jobs = {"CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 4)}
    step = Step("env", a.budgets["env"], commands, jobs)
    if a.skip_env:
        step.done = "--skip-env: the Python's packages as they are"
    elif STAMP.is_file() and json.loads(STAMP.read_text()) == stamp_json():
        step.done = "installed by an earlier run on this machine (same wheels and commit)"
    return step


NO_WHEELS = (
    "no wheels in build/gpu-carry/wheels: run `bash benchmarks/gpu/run.sh --prepare` on "
    "the development machine and name build/gpu-carry in the device tool's carry"
)


def probe_step(a) -> Step:
    cmd = [a.python, str(HERE / "gpu_run.py"), "--probe", str(a.out / "probe.json")]
    return Step("probe", a.budgets["probe"], lambda _t: [cmd])


def probe(path: Path) -> int:
    """``--probe PATH`` (the probe step, in the Python of the run): torch, its CUDA
    build, the GPU (``_device.describe``), nvcc and the lock's torch, as JSON to *path*;
    exit 1 when torch sees no GPU."""
    import torch

    sys.path.insert(0, str(SUITE))
    import _device

    why = _device.problem("cuda")
    nvcc = shutil.which("nvcc")
    version = None
    if nvcc:
        r = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
        version = (r.stdout.strip().splitlines() or [None])[-1]
    d = {
        "python": sys.executable,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "locked_torch": locked_torch(),
        "problem": why,
        "gpu": None if why else _device.describe("cuda"),
        "nvcc": nvcc,
        "nvcc_version": version,
        "cores": os.cpu_count(),
    }
    if d["torch"].split("+")[0] != d["locked_torch"]:
        d["torch_note"] = (
            f"torch {d['torch']} is not the lock's {d['locked_torch']}: our packages run on it "
            "as installed (--no-deps), the runtime was built against it, and every artifact "
            "is compiled and loaded by it"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(d, indent=1) + "\n")
    print(json.dumps(d))
    return 1 if why else 0


def routes_step(a) -> Step:
    cmd = [a.python, str(HERE / "gpu_routes.py"), "--device", "cuda"]
    cmd += ["--models", *ROUTE_MODELS, "--routes", *ROUTES, "--ops", *OPS]
    cmd += ["--out", str(a.out / "routes.jsonl")]
    env = {"TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache-cuda")}
    return Step("routes", a.budgets["routes"], lambda _t: [cmd], env)


def suite_command(a, timeout: float, reference: bool) -> list[str]:
    """run.py on the GPU, paced to end inside *timeout*: no worker starts after
    ``timeout - 30`` s, and none runs longer than the time left."""
    minutes = max(0.25, (timeout - 30.0) / 60.0)
    cmd = [a.python, str(SUITE / "run.py"), "--device", "cuda"]
    cmd += ["--sides", "ours", *(["reference"] if reference else [])]
    cmd += ["--workloads", *WORKLOADS, "--routes", *SUITE_ROUTES]
    cmd += ["--reference-routes", *SUITE_ROUTES, "--batches", *map(str, BATCHES)]
    cmd += ["--compile", "cached", "--reference-compile", "cached"]
    cmd += ["--repeats", "3", "--min-time", "0.3", "--eval-budget", "10"]
    cmd += ["--transient-budget", "10", "--transient-repeats", "1", "--transient-min-time", "0"]
    cmd += ["--max-minutes", f"{minutes:.2f}", "--reserve-s", "5"]
    cmd += ["--cell-timeout", f"{max(30.0, timeout - 30.0):.0f}"]
    cmd += ["--allow-dirty", "--no-roofline", "--out-dir", str(a.out / "suite")]
    cmd += ["--note", "issue #65: the first run on a GPU (benchmarks/gpu/run.sh)"]
    return cmd


def suite_step(a, reference: bool) -> Step:
    env = {"TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache-cuda")}
    if GIT_STATE.is_file():  # no .git travels to the GPU machine
        env["NEML2_BENCH_GIT_STATE"] = str(GIT_STATE)
    return Step("suite", a.budgets["suite"], lambda t: [suite_command(a, t, reference)], env)


def plan(a, reference: bool) -> list[Step]:
    makers = {
        "env": env_step,
        "probe": probe_step,
        "routes": routes_step,
        "suite": lambda a: suite_step(a, reference),
    }
    return [makers[s](a) for s in STEPS if s in a.steps]


def plan_text(a, steps: list[Step], reference: bool) -> str:
    """The plan as text: each step's budget, environment and commands (shell-quoted)."""
    lines = [
        f"results: {a.out}",
        f"total: {a.total:g} s (reserve {RESERVE_S:g} s for the table)",
        f"torch pinned by uv.lock: {locked_torch()}",
        f"reference (NEML2 3.1.0): {'measured' if reference else OFFLINE}",
    ]
    for s in steps:
        lines.append(f"[{s.name}] budget {s.budget:g} s" + (f" ({s.done})" if s.done else ""))
        for k, v in s.env.items():
            lines.append(f"    export {k}={shlex.quote(v)}")
        for cmd in s.commands(s.budget):
            lines.append("    " + shlex.join(cmd))
    return "\n".join(lines)


# ---------------------------------------------------------------------- running a step
@dataclass
class StepResult:
    name: str
    status: str  # pass / fail / timeout / not run
    seconds: float = 0.0
    budget: float = 0.0
    note: str = ""
    log: str = ""


def run_commands(
    name: str,
    commands: list[list[str]],
    timeout: float,
    log: Path,
    env: dict[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> StepResult:
    """Run *commands* one after the other within *timeout* seconds in all, output to
    *log*; the first that fails ends the step. On the timeout the command's whole process
    group is killed (its workers and compilers too)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = clock()
    full_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    with log.open("w") as f:
        for cmd in commands:
            f.write(f"$ {shlex.join(cmd)}\n")
            f.flush()
            left = timeout - (clock() - t0)
            if left <= 0:
                return StepResult(name, "timeout", clock() - t0, timeout, "out of time", str(log))
            try:
                proc = subprocess.Popen(
                    cmd,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    cwd=ROOT,
                    env=full_env,
                    start_new_session=True,
                )
            except OSError as e:
                return StepResult(name, "fail", clock() - t0, timeout, f"{e}", str(log))
            try:
                rc = proc.wait(timeout=left)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                note = f"killed after {timeout:.0f} s: {shlex.join(cmd)[:120]}"
                return StepResult(name, "timeout", clock() - t0, timeout, note, str(log))
            if rc != 0:
                f.flush()
                note = f"exit {rc}: {shlex.join(cmd)[:120]}; {_last_line(log)}"
                return StepResult(name, "fail", clock() - t0, timeout, note, str(log))
    return StepResult(name, "pass", clock() - t0, timeout, "", str(log))


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group of *proc*, SIGKILL after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_line(log: Path) -> str:
    lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""


def run_steps(a, steps: list[Step], deadline: float, clock=time.monotonic, say=print):
    """Every step in turn under its budget; a step whose needs did not pass is not run."""
    results: dict[str, StepResult] = {}
    for s in steps:
        missing = [n for n in NEEDS.get(s.name, ()) if n in results and results[n].status != "pass"]
        if missing:
            results[s.name] = StepResult(
                s.name, "not run", 0.0, s.budget, f"{missing[0]} did not pass"
            )
        elif s.done:
            results[s.name] = StepResult(s.name, "pass", 0.0, s.budget, s.done)
        else:
            t = step_timeout(s.budget, clock(), deadline)
            if t is None:
                note = f"out of time (the total is {a.total:g} s)"
                results[s.name] = StepResult(s.name, "not run", 0.0, s.budget, note)
            else:
                say(f"[{s.name}] up to {t:.0f} s")
                log = a.out / "logs" / f"{s.name}.log"
                results[s.name] = run_commands(s.name, s.commands(t), t, log, s.env, clock)
        r = results[s.name]
        if s.name == "env" and r.status == "pass" and not s.done:
            STAMP.parent.mkdir(parents=True, exist_ok=True)
            STAMP.write_text(json.dumps(stamp_json()))
        say(f"[{s.name}] {r.status} in {r.seconds:.0f} s {r.note}".rstrip())
    return list(results.values())


# ---------------------------------------------------------------------- the table
def read_cells(path: Path) -> list[dict]:
    """The route cells ``gpu_routes.py`` wrote (a torn last line is left out)."""
    out = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def read_rows(path: Path) -> list[dict]:
    """The suite's results.csv, values as floats (None where empty)."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        try:
            r["value"] = float(r["value"]) if r["value"] not in ("", None) else None
        except ValueError:
            r["value"] = None
    return rows


def _sci(v) -> str:
    return "–" if v is None else f"{v:.1e}"


def route_cell_text(cell: dict | None, missing: str) -> tuple[str, bool]:
    """``(text, ok)`` of one route cell: ``pass 1.2e-16``, ``FAIL 3.0e-04``, ``error``
    (its note in the list below the table) or *missing* for a cell that did not run."""
    if cell is None:
        return missing, False
    worst = cell.get("worst")
    ok = cell.get("status") == "pass" and worst is not None and worst <= cell.get("tol", 0.0)
    if cell.get("status") == "error":
        return "error", False
    return f"{'pass' if ok else 'FAIL'} {_sci(worst)}", ok


def _num(v: float) -> str:
    return f"{v:.3g}"


def suite_cells(rows: list[dict], reference: bool, ran: str | None):
    """One line per (workload, route, batch): ours and the reference's evaluation
    throughput (points/s), the ratio and the agreement, and whether it counts as passed.
    *ran*: why the suite has no rows (None when it ran)."""
    idx = {(r["side"], r["workload"], r["route"], r["batch"], r["metric"]): r for r in rows}
    lines = []
    for w in WORKLOADS:
        for route in SUITE_ROUTES:
            for b in BATCHES:
                mine = idx.get(("ours", w, route, str(b), "eval_points_per_s"))
                theirs = idx.get(("reference", w, route, str(b), "eval_points_per_s"))
                ok = True
                if mine is None:
                    ours_txt, ok = (ran or "missing"), False
                elif mine["status"] != "ok" or mine["value"] is None:
                    ours_txt, ok = mine["status"] or "missing", False
                else:
                    ours_txt = _num(mine["value"])
                if not reference:
                    ref_txt = OFFLINE
                elif theirs is None:
                    ref_txt, ok = (ran or "missing"), False
                elif theirs["status"] != "ok" or theirs["value"] is None:
                    ref_txt, ok = theirs["status"] or "missing", False
                else:
                    ref_txt = _num(theirs["value"])
                agree = [
                    r
                    for k, r in idx.items()
                    if k[:4] == ("ours", w, route, str(b))
                    and k[4].startswith("agreement_max_rel:eval:")
                ]
                agree_txt, agree_ok = agreement_text(agree, route, reference)
                ok = ok and agree_ok
                ratio = "–"
                if (
                    mine is not None
                    and theirs is not None
                    and mine["value"] is not None
                    and theirs["value"]
                    and agree_ok
                ):
                    ratio = f"{mine['value'] / theirs['value']:.2f}x"
                lines.append((w, route, b, ours_txt, ref_txt, ratio, agree_txt, ok))
    return lines


def agreement_text(agree: list[dict], route: str, reference: bool) -> tuple[str, bool]:
    """The ``agree`` cell from the suite's ``agreement_max_rel:eval:*`` rows of one of our
    cells: the worst difference over what it was compared with, ``✗`` when one is over
    the suite's tolerance, NaN or missing. Our py-eager without the reference has
    nothing to be compared with (``–``)."""
    if not agree:
        if route == "py-eager" and not reference:
            return "– (no reference)", True
        return "missing", False
    worst, bad = None, False
    for r in agree:
        v = r["value"]
        if r["status"] != "ok" or v is None or not (v <= AGREE_RTOL):
            bad = True
        if v is not None and (worst is None or v != v or (worst == worst and v > worst)):
            worst = v
    if bad:
        return f"✗ {'missing' if worst is None else _sci(worst)}", False
    others = ", ".join(sorted(r["metric"].split(":", 2)[2] for r in agree))
    return f"{_sci(worst)} (vs {others})", True


def write_table(
    out: Path,
    results: list[StepResult],
    cells: list[dict],
    rows: list[dict],
    probe: dict | None,
    reference: bool,
) -> tuple[str, bool]:
    """``table.md`` in *out* from the steps' results, the route cells and the suite's rows;
    returns its text and whether everything passed."""
    by = {r.name: r for r in results}
    ok = all(r.status == "pass" for r in results)
    p = probe or {}
    gpu = ((p.get("gpu") or {}).get("gpus") or [{}])[0].get("name", "GPU not probed")
    md = [
        "# The first run on a GPU (issue #65)",
        "",
        f"{gpu}; torch {p.get('torch', '?')} (CUDA {p.get('torch_cuda', '?')}), uv.lock pins "
        f"torch {p.get('locked_torch') or locked_torch()}; "
        f"nvcc: {p.get('nvcc_version') or p.get('nvcc') or '?'}",
        *(["", p["torch_note"]] if p.get("torch_note") else []),
        "",
        "## Steps",
        "",
        "| step | status | seconds | budget | note |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        note = r.note.replace("|", "\\|")
        md.append(f"| {r.name} | {r.status} | {r.seconds:.0f} | {r.budget:.0f} | {note} |")

    def missing(step: str) -> str:
        r = by.get(step)
        if r is None:
            return "not run (step not asked)"
        if r.status == "pass":
            return "missing"
        return f"not run ({step} {r.status})"

    # route matrix
    md += [
        "",
        "## Route matrix: each route on the GPU against py-eager on the CPU",
        "",
        "Worst difference relative to each tensor's scale over batches 1, 7, 16 "
        "(tolerance 1e-10, with a nonlinear solve 1e-6; `pass` needs `err <= tol`, "
        "so NaN fails).",
        "",
        "| model | op | " + " | ".join(ROUTES) + " |",
        "|---|---|" + "---|" * len(ROUTES),
    ]
    found = {(c["route"], c["model"], c["op"]): c for c in cells}
    notes = []
    if "routes" in by:
        for m in ROUTE_MODELS:
            for op in OPS:
                texts = []
                for route in ROUTES:
                    c = found.get((route, m, op))
                    text, good = route_cell_text(c, missing("routes"))
                    ok = ok and good
                    texts.append(text)
                    if c is not None and c.get("note") and not good:
                        notes.append(f"- {route} {m} {op}: {c['note']}")
                md.append(f"| {m} | {op} | " + " | ".join(texts) + " |")
    md += notes
    # suite
    md += [
        "",
        "## Benchmark suite on the GPU: evaluation throughput (points/s)",
        "",
        f"`agree`: the worst max relative difference of our cell from what it was compared "
        f"with (our py-eager, the reference's py-eager and same route, where measured); "
        f"`✗` over {AGREE_RTOL:g}, NaN or missing. Ratio: ours / reference.",
        "",
        "| workload | route | points | ours | reference | ratio | agree |",
        "|---|---|---|---|---|---|---|",
    ]
    if "suite" in by:
        ran = None if by["suite"].status == "pass" or rows else missing("suite")
        for w, route, b, o, r, ratio, ag, good in suite_cells(rows, reference, ran):
            ok = ok and good
            md.append(f"| {w} | {route} | {b:.0e} | {o} | {r} | {ratio} | {ag} |")
    if not reference:
        md += [
            "",
            f"Reference (NEML2 3.1.0): {OFFLINE}. It needs torch 2.12.1 (CUDA), gigabytes "
            "that cannot reach a machine without a network; see benchmarks/README.md.",
        ]
    md += ["", f"**{'Everything passed.' if ok else 'Not everything passed.'}**", ""]
    text = "\n".join(md)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(text)
    return text, ok


# ---------------------------------------------------------------------- prepare, bundle
def prepare_commands(uv: str = "uv") -> list[list[str]]:
    """Here: the pure-Python wheels (``uv build``) into build/gpu-carry/wheels."""
    return [
        [uv, "build", "--wheel", "--package", p, "--out-dir", str(WHEELS)] for p in PURE_PACKAGES
    ]


def git_state() -> dict:
    """The commit and the changed paths (read-only git), as run.py records them."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout

    commit = git("rev-parse", "--short", "HEAD").strip()
    dirty = [
        line[3:]
        for line in git("status", "--porcelain", "--untracked-files=all").splitlines()
        if line[3:] and not line[3:].startswith("benchmarks/results/")
    ]
    return {"commit": commit, "dirty": dirty}


DEVICE_COMMAND = 'bash benchmarks/gpu/run.sh --out build/gpu-results --bundle "$OUT"'


def prepare(say=print) -> int:
    if WHEELS.exists():
        shutil.rmtree(WHEELS)
    WHEELS.mkdir(parents=True)
    uv = shutil.which("uv")
    if uv is None:
        say("gpu_run --prepare: uv is not on PATH (it builds the wheels)")
        return 2
    for cmd in prepare_commands(uv):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            say(f"gpu_run --prepare: {shlex.join(cmd)} failed: {r.stderr.strip()[-300:]}")
            return 1
    GIT_STATE.write_text(json.dumps(git_state(), indent=1) + "\n")
    size = sum(p.stat().st_size for p in CARRY.rglob("*") if p.is_file())
    say(f"prepared {CARRY.relative_to(ROOT)} ({size / 2**20:.1f} MiB):")
    for p in sorted(CARRY.rglob("*")):
        if p.is_file():
            say(f"  {p.relative_to(ROOT)}")
    say("device tool: run with")
    say(f"  command: {DEVICE_COMMAND}")
    say(f'  carry: ["{CARRY.relative_to(ROOT)}"], timeout_s: 600')
    return 0


def bundle(out: Path, dest: Path) -> None:
    """table.md, steps.json, gpu_run.log and results.tar.gz (the whole results folder)
    into *dest*: four files, within what the device tool sends back."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("table.md", "steps.json", "gpu_run.log"):
        if (out / name).is_file():
            shutil.copy2(out / name, dest / name)
    with tarfile.open(dest / "results.tar.gz", "w:gz") as tar:
        tar.add(out, arcname=out.name)


# ---------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None, clock=time.monotonic) -> int:
    a = parse_args(argv)
    if a.probe is not None:
        return probe(a.probe)
    if a.prepare:
        return prepare()
    reference = reference_ready()
    steps = plan(a, reference)
    if a.dry_run:
        print(plan_text(a, steps, reference))
        return 0
    start = clock()
    why = refusal(cuda_state(a.python))
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    deadline = start + a.total
    a.out.mkdir(parents=True, exist_ok=True)
    logf = (a.out / "gpu_run.log").open("w")

    def say(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    (a.out / "plan.txt").write_text(plan_text(a, steps, reference) + "\n")
    results = run_steps(a, steps, deadline, clock, say)
    probe_path = a.out / "probe.json"
    probed = json.loads(probe_path.read_text()) if probe_path.is_file() else None
    cells = read_cells(a.out / "routes.jsonl")
    rows = read_rows(a.out / "suite" / "results.csv")
    text, ok = write_table(a.out, results, cells, rows, probed, reference)
    steps_json = {
        "ok": ok,
        "seconds": round(clock() - start, 1),
        "total": a.total,
        "reference": "measured" if reference else OFFLINE,
        "steps": [asdict(r) for r in results],
    }
    (a.out / "steps.json").write_text(json.dumps(steps_json, indent=1) + "\n")
    say(text)
    logf.close()
    if a.bundle is not None:
        bundle(a.out, a.bundle)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
