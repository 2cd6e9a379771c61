"""Worker for the reference library (NEML2 3.1.0): one workload on one route, rows to --out.

Run by ``run.py`` with the Python of the reference's own virtual environment (outside
the uv workspace; see ``_reference_env.py``); it imports only the reference library,
torch and the package-free helpers next to it. Routes: py-eager (``neml2.load_model``)
and py-aoti (``neml2.cli.aoti_compile.compile_and_emit_stub`` -> ``neml2.aoti.Model``).
``--device cuda`` follows the reference's own documentation: the loaded model is moved
with ``model.to(device=...)``, the exporter is given ``device="cuda"`` (a ``cuda/``
target), and ``neml2.aoti.Model(path, device="cuda")`` loads that target.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _device
import _measure as M
from _adapters import RawAdapter, TypedAdapter
from _worker_args import parser, private_inductor_cache
from _workloads import WORKLOADS, history, initial_state, to_device

SIDE = "reference"


def _compile(w, a, rows):
    """Compile with the reference's exporter; cold (empty Inductor cache) and cached times.

    The reference has no compile cache of its own: "cached" is a second compile in the
    same process, with Inductor's caches warm.
    """
    from neml2.cli.aoti_compile import compile_and_emit_stub

    def once(out: Path) -> Path:
        compile_and_emit_stub(w.path, out, model=w.model, device=a.device, emit_stub=False)
        return out / w.model

    if a.compile in ("cold", "cold-once"):
        t0 = time.perf_counter()
        artifact = once(Path(tempfile.mkdtemp(prefix="cold-", dir=a.work_dir)))
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
        if a.compile == "cold-once":
            return artifact
    else:
        once(Path(tempfile.mkdtemp(prefix="warm-", dir=a.work_dir)))
    t0 = time.perf_counter()
    artifact = once(Path(tempfile.mkdtemp(prefix="cached-", dir=a.work_dir)))
    rows.append(
        M.row(
            SIDE,
            w.name,
            "py-aoti",
            "",
            "compile_cached_s",
            time.perf_counter() - t0,
            n=1,
            unit="s",
            note="second compile in the process (Inductor caches warm)",
        )
    )
    return artifact


def main() -> int:
    a = parser(__doc__.splitlines()[0]).parse_args()
    a.work_dir.mkdir(parents=True, exist_ok=True)
    private_inductor_cache(a)  # (emptied for a cold compile)
    import torch

    refused = _device.problem(a.device)
    if refused is not None:  # before anything is loaded, compiled or measured
        raise SystemExit(f"_reference_worker.py: {refused}")

    import neml2

    torch.set_grad_enabled(False)
    w = WORKLOADS[a.workload]
    rows: list[dict] = []
    try:
        if a.route == "py-eager":
            model = neml2.load_model(w.path, w.model).to(device=a.device)
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
            model = neml2.load_model(w.path, w.model).to(device=a.device)
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

            artifact = M.compiled(w, a, rows, lambda r: _compile(w, a, r), "cold-once")
            adapter = RawAdapter(AOTIModel(str(artifact), device=a.device))
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
            hist = to_device(history(w, b, max(a.steps, 100)), a.device)
            ics = to_device(initial_state(w, b), a.device)
            rows = M.measure_batch(SIDE, w.name, a.route, adapter, w, b, hist, ics, a)
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
