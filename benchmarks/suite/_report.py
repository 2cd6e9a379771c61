"""Tables, plots and the roofline note from the rows of a run (see ``run.py``)."""

from __future__ import annotations

import csv
from pathlib import Path

from _agreement import FLOOR, RTOL
from _windows import SYNC, WINDOW_FACTOR, baseline, in_window, probe_values
from _workloads import WORKLOADS, points_label

import neml2.routes

#: bytes one elasticity update must move: read strain + write stress, 6 float64 each
ELASTICITY_BYTES = 96
#: the routes the suite times: every route but cpp-eager (the C++ host of py-eager's
#: Python models; nothing of its own to time)
ROUTES = [n for n in neml2.routes.NAMES if n != "cpp-eager"]
#: the routes the reference library has (py-eager, and py-aoti through its own compiler)
REFERENCE_ROUTES = ["py-eager", "py-aoti"]
#: routes of ours only
OURS_ONLY = [r for r in ROUTES if r not in REFERENCE_ROUTES]


def _index(rows: list[dict]) -> dict:
    return {(r["side"], r["workload"], r["route"], r["batch"], r["metric"]): r for r in rows}


def _fmt(r: dict | None, digits: int = 3) -> str:
    if r is None:
        return "–"
    if r["status"] != "ok" or r["value"] is None:
        return r["status"]
    v = r["value"]
    return f"{v:.{digits}g}"


def _spread(r: dict | None) -> str:
    if r is None or r["status"] != "ok" or r["value"] is None or r["lo"] is None:
        return ""
    v, lo, hi = r["value"], r["lo"], r["hi"]
    if not v or r["n"] < 2:
        return ""
    return f" ±{100 * (hi - lo) / 2 / v:.0f}%"


def _ratio(a: dict | None, b: dict | None) -> float | None:
    if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
        return None
    if not a["value"] or not b["value"]:
        return None
    return a["value"] / b["value"]


def _window(idx: dict, w, route, b, base: float | None) -> str:
    """``ours`` / ``reference`` / ``both``: whose probe of this cell was in a slow window
    (``_windows.in_window``); else ``""``."""
    slow = [s for s in ("ours", "reference") if in_window(idx.get((s, w, route, b, SYNC)), base)]
    return "both" if len(slow) == 2 else slow[0] if slow else ""


AGREE = "agreement_max_rel"


def _agreement(idx: dict, w, route, b, quantity: str, other: str) -> dict | None:
    """The agreement row of our *route* against *other* (``reference-py-eager``, ...)."""
    return idx.get(("ours", w, route, b, f"{AGREE}:{quantity}:{other}"))


def _agree_cell(r: dict | None, timed: bool) -> str:
    """``3.1e-16``; ``✗ 2.0e-03`` / ``✗ nan`` when it disagrees; ``missing`` without a
    result to compare; ``unchecked`` when both timings exist but nothing was compared."""
    if r is None:
        return "unchecked" if timed else "–"
    if r["status"] == "missing":
        return "missing"
    v = "nan" if r["value"] is None else f"{r['value']:.1e}"
    return v if r["status"] == "ok" else f"✗ {v}"


def _disagrees(idx: dict, w, route, b, quantity: str) -> bool:
    """Does our *route* disagree with anything it was compared with?"""
    prefix = f"{AGREE}:{quantity}:"
    return any(
        k[0] == "ours" and k[1:4] == (w, route, b) and k[4].startswith(prefix)
        and r["status"] == "disagree"
        for k, r in idx.items()
    )  # fmt: skip


def _gpu(meta: dict) -> str:
    """`` and <GPU name> (<n> GiB), measured on cuda`` for a ``--device cuda`` run (the
    first GPU of ``meta["gpu"]``; how many more), else ``""``."""
    gpus = (meta.get("gpu") or {}).get("gpus") or []
    if meta.get("device", "cpu") == "cpu" or not gpus:
        return ""
    g = gpus[0]
    more = f" (and {len(gpus) - 1} more)" if len(gpus) > 1 else ""
    return f" and {g['name']} ({g['memory_gib']} GiB){more}, measured on cuda"


def _batches(rows) -> list[int]:
    return sorted({r["batch"] for r in rows if isinstance(r["batch"], int)})


def _workloads(rows) -> list[str]:
    seen = {r["workload"] for r in rows}
    return [w for w in WORKLOADS if w in seen]


def side_by_side(rows: list[dict], meta: dict, out: Path) -> None:
    idx = _index(rows)
    base = baseline(probe_values(rows))
    csv_rows = []
    md = [
        "# Side by side: ours vs the reference library (NEML2 3.1.0)",
        "",
        f"Run {meta['started_utc']} – {meta.get('finished_utc', '?')} on {meta['cpu']}, "
        f"{meta['cores']} cores{_gpu(meta)} (`{meta['machine']}`); versions "
        f"{meta.get('versions')}. "
        f"Load average at start {meta['load_average_start'][0]:.1f}, at end "
        f"{meta.get('load_average_end', [float('nan')])[0]:.1f}.",
        "",
        "Cells: median of n repeats ± half the interquartile range (from 4 repeats on; "
        "below that half the range between fastest and slowest). "
        + _rounds_sentence(meta)
        + "Ratio = ours / reference for the same route: for throughput > 1 means ours is "
        "faster; for latency, memory and compile time < 1 means ours is better. "
        "`skipped (over budget)`: estimated over the per-cell time budget; `failed`: see "
        "results.csv for the error.",
        "",
        "Agreement (`agree`): before a ratio is shown, the two sides' results on the same "
        "inputs are compared: the max relative difference `max|ours - ref| / "
        f"max(max|ref|, {FLOOR:g})` over the output variables of one evaluation "
        "(evaluation rows) or of the state after the transient run (transient rows), "
        f"worst over variables. Above {RTOL:g} (the conformance checks' rtol; their atol "
        f"1e-8 is the {FLOOR:g} floor), or NaN/inf, a missing variable or different "
        "inputs, the cell is marked `✗` and its ratio is replaced by **DISAGREE**: it is "
        "not a speed-up. `missing`: a side has no result to compare (see results.csv); "
        "`unchecked`: both were timed but no results were saved. A cell of ours marked "
        "`✗` disagrees with the reference's py-eager or our own py-eager (section "
        "*Agreement* lists every comparison).",
        "",
        "Slow windows (`†`): this 2-vCPU machine has windows, seconds to minutes long, in "
        "which two threads pass data to each other at up to half their usual speed; graphs "
        "with many small parallel loops then run up to 2x slower. Each side's worker times a "
        "tiny two-thread add before a batch, right after its timed evaluations and after "
        "its transient run (`sync_probe_us` in results.csv); "
        f"a ratio marked `†` had a probe over {WINDOW_FACTOR:g} x the run's lower quartile "
        f"of probes ({'–' if base is None else f'{base:.2f} us'}) on one side or both (the "
        "`window` column of side_by_side.csv names which): it is a measurement of the "
        "machine's state as much as of the route. With `--window-retries` a batch in a "
        "window was measured again and the attempt with the lowest probe kept "
        "(window_retries.csv: the others).",
        "",
    ]
    sections = [
        ("eval_points_per_s", "Model evaluation throughput (material points / s)", True),
        ("transient_points_per_s", "Transient run throughput (point-steps / s)", True),
    ]
    batches = _batches(rows)
    for metric, title, _per_batch in sections:
        md += [f"## {title}", ""]
        if metric.startswith("transient"):
            md += [
                "A transient run takes the first steps of the 100-step history, the same on "
                "both sides: 100 up to batch 1e3, 10 at 1e4, 5 at 1e5 "
                "(`suite/_measure.py`, `transient_steps`; the `note` column of "
                "`results.csv` names each run's steps).",
                "",
            ]
        head = "| workload | batch |"
        sep = "|---|---:|"
        quantity = "eval" if metric.startswith("eval") else "transient"
        for route in ("py-eager", "py-aoti"):
            head += f" ours {route} | reference {route} | ratio | agree |"
            sep += "---:|---:|---:|---:|"
        head += "".join(f" ours {r} |" for r in OURS_ONLY)
        sep += "---:|" * len(OURS_ONLY)
        md += [head, sep]
        for w in _workloads(rows):
            for b in batches:
                cells = []
                have = False
                for route in ("py-eager", "py-aoti"):
                    o = idx.get(("ours", w, route, b, metric))
                    r = idx.get(("reference", w, route, b, metric))
                    have |= o is not None or r is not None
                    q = _ratio(o, r)
                    ag = _agreement(idx, w, route, b, quantity, f"reference-{route}")
                    bad = ag is not None and ag["status"] == "disagree"
                    mark = " ✗" if _disagrees(idx, w, route, b, quantity) else ""
                    window = _window(idx, w, route, b, base)
                    dagger = " †" if window and q is not None and not bad else ""
                    cells += [
                        _fmt(o) + _spread(o) + mark,
                        _fmt(r) + _spread(r),
                        "**DISAGREE**" if bad else "–" if q is None else f"**{q:.2f}**{dagger}",
                        _agree_cell(ag, q is not None),
                    ]
                    csv_rows.append(
                        {
                            "workload": w,
                            "metric": metric,
                            "batch": b,
                            "route": route,
                            "ours": _val(o),
                            "reference": _val(r),
                            "ratio": "" if q is None or bad else f"{q:.4g}",
                            "ours_status": _st(o),
                            "reference_status": _st(r),
                            "agreement_max_rel": _val(ag),
                            "agreement_status": _st(ag),
                            "ours_sync_us": _val(idx.get(("ours", w, route, b, SYNC))),
                            "reference_sync_us": _val(idx.get(("reference", w, route, b, SYNC))),
                            "window": window,
                        }
                    )
                for extra in OURS_ONLY:
                    j = idx.get(("ours", w, extra, b, metric))
                    have |= j is not None
                    mark = " ✗" if _disagrees(idx, w, extra, b, quantity) else ""
                    cells.append(_fmt(j) + _spread(j) + mark)
                if have:
                    md.append(f"| {w} | {points_label(b)} | " + " | ".join(cells) + " |")
        md.append("")
    # latency, memory, compile
    md += [
        "## Latency at batch 1 (µs per call)",
        "",
        "| workload | ours py-eager | reference py-eager | ratio | ours py-aoti | "
        "reference py-aoti | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for w in _workloads(rows):
        cells = []
        for route in ("py-eager", "py-aoti"):
            o = idx.get(("ours", w, route, 1, "latency_us"))
            r = idx.get(("reference", w, route, 1, "latency_us"))
            q = _ratio(o, r)
            cells += [_fmt(o), _fmt(r), "–" if q is None else f"**{q:.2f}**"]
            csv_rows.append(
                {
                    "workload": w,
                    "metric": "latency_us",
                    "batch": 1,
                    "route": route,
                    "ours": _val(o),
                    "reference": _val(r),
                    "ratio": "" if q is None else f"{q:.4g}",
                    "ours_status": _st(o),
                    "reference_status": _st(r),
                }
            )
        md.append(f"| {w} | " + " | ".join(cells) + " |")
    cuda = meta.get("device", "cpu") == "cuda"
    peak_metric = "peak_cuda_delta_mb" if cuda else "peak_rss_delta_mb"
    md += [
        "",
        "## Peak GPU memory (MB above what torch held on the GPU before the batch)"
        if cuda
        else "## Peak memory (MB above the process's resident size before the batch)",
        "",
        "torch.cuda.max_memory_allocated, reset before each batch (evaluations + transient "
        "run); the host's VmHWM is in results.csv (peak_rss_delta_mb)."
        if cuda
        else "VmHWM of the worker process, reset before each batch (evaluations + transient run).",
        "",
        "| workload | batch | ours py-eager | reference py-eager | ours py-aoti | "
        "reference py-aoti |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for w in _workloads(rows):
        for b in batches:
            if b < 10_000:
                continue
            cells = [
                _fmt(idx.get((s, w, route, b, peak_metric)))
                for route in ("py-eager", "py-aoti")
                for s in ("ours", "reference")
            ]
            if any(c != "–" for c in cells):
                md.append(f"| {w} | {points_label(b)} | " + " | ".join(cells) + " |")
    md += [
        "",
        "## AOTI compile time (s)",
        "",
        "Ours: `neml2.compiler.compile_file`; cold = no compile cache and an empty "
        "Inductor cache, cached = from `build/aoti-cache`. Reference: "
        "`compile_and_emit_stub`; cold = empty Inductor cache, cached = a second compile "
        "in the same process (it has no compile cache of its own).",
        "",
        "| workload | ours cold | reference cold | ratio | ours cached | reference cached "
        "| ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for w in _workloads(rows):
        cells = []
        for metric in ("compile_cold_s", "compile_cached_s"):
            o = idx.get(("ours", w, "py-aoti", "", metric))
            r = idx.get(("reference", w, "py-aoti", "", metric))
            q = _ratio(o, r)
            cells += [_fmt(o), _fmt(r), "–" if q is None else f"**{q:.2f}**"]
            csv_rows.append(
                {
                    "workload": w,
                    "metric": metric,
                    "batch": "",
                    "route": "py-aoti",
                    "ours": _val(o),
                    "reference": _val(r),
                    "ratio": "" if q is None else f"{q:.4g}",
                    "ours_status": _st(o),
                    "reference_status": _st(r),
                }
            )
        md.append(f"| {w} | " + " | ".join(cells) + " |")
    md += _agreement_section(rows)
    notes = [r for r in rows if r["metric"] == "available" and r["status"] != "ok"]
    if notes:
        md += ["", "## Routes not measured", ""]
        for r in notes:
            md.append(f"- {r['side']} {r['route']} / {r['workload']}: {r['status']} — {r['note']}")
    failed = [r for r in rows if r["status"] == "failed" and r["metric"] != "available"]
    if failed:
        md += ["", "## Failures", ""]
        for r in failed:
            md.append(
                f"- {r['side']} {r['route']} / {r['workload']} / batch {r['batch']} "
                f"({r['metric']}): {r['note']}"
            )
    (out / "side_by_side.md").write_text("\n".join(md) + "\n")
    with (out / "side_by_side.csv").open("w", newline="") as f:
        fields = [
            "workload",
            "metric",
            "batch",
            "route",
            "ours",
            "reference",
            "ratio",
            "ours_status",
            "reference_status",
            "agreement_max_rel",
            "agreement_status",
            "ours_sync_us",
            "reference_sync_us",
            "window",
        ]
        wr = csv.DictWriter(f, fieldnames=fields, restval="")
        wr.writeheader()
        wr.writerows(csv_rows)


def _agreement_section(rows: list[dict]) -> list[str]:
    """Every agreement check: one row per (workload, batch, quantity), one column per
    (our route, compared with); the notes of the ones that are not ok below it."""
    agree = [r for r in rows if r["metric"].startswith(AGREE + ":")]
    if not agree:
        return []
    idx = _index(agree)
    pairs = []
    for route in ROUTES:
        for other in ("reference-py-eager", f"reference-{route}", "ours-py-eager"):
            if (route, other) in pairs or other == f"ours-{route}":
                continue
            if any(r["route"] == route and r["metric"].endswith(":" + other) for r in agree):
                pairs.append((route, other))
    md = [
        "",
        "## Agreement (max relative difference on the same inputs)",
        "",
        f"Tolerance {RTOL:g} (see the top of this page); `✗`: disagree.",
        "",
        "| workload | batch | result | "
        + " | ".join(f"ours {r} vs {o.replace('-', ' ', 1)}" for r, o in pairs)
        + " |",
        "|---|---:|---|" + "---:|" * len(pairs),
    ]
    for w in _workloads(agree):
        for b in _batches(agree):
            for q in ("eval", "transient"):
                cells = [_agreement(idx, w, r, b, q, o) for r, o in pairs]
                if all(c is None for c in cells):
                    continue
                shown = ["–" if c is None else _agree_cell(c, False) for c in cells]
                md.append(f"| {w} | {points_label(b)} | {q} | " + " | ".join(shown) + " |")
    bad = [r for r in agree if r["status"] != "ok"]
    if bad:
        md += ["", "Not ok:", ""]
        md += [f"- {r['workload']} / {r['route']} / batch {r['batch']}: {r['status']} — "
               f"{r['note']}" for r in bad]  # fmt: skip
    return md


def _val(r):
    return "" if r is None or r["value"] is None else f"{r['value']:.6g}"


def _st(r):
    return "" if r is None else r["status"]


def plots(rows: list[dict], out: Path, log=print) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plots")
        return
    workloads = _workloads(rows)
    styles = {"ours": "-", "reference": "--"}
    colors = {
        "py-eager": "C0",
        "py-jit": "C2",
        "py-aoti": "C1",
        "cpp-aoti": "C3",
        "cpp-dispatch": "C4",
    }
    for metric, label in (
        ("eval_points_per_s", "material points / s (one evaluation)"),
        ("transient_points_per_s", "point-steps / s (transient run)"),
    ):
        ncol = min(4, len(workloads))
        nrow = (len(workloads) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 3.4 * nrow), squeeze=False)
        for ax, w in zip(axes.flat, workloads, strict=False):
            for side in ("ours", "reference"):
                for route in ROUTES:
                    pts = sorted(
                        (r["batch"], r["value"], r["lo"], r["hi"])
                        for r in rows
                        if (r["side"], r["workload"], r["route"], r["metric"])
                        == (side, w, route, metric)
                        and r["status"] == "ok"
                        and r["value"]
                        and isinstance(r["batch"], int)
                    )
                    if not pts:
                        continue
                    x = [p[0] for p in pts]
                    y = [p[1] for p in pts]
                    err = [
                        [p[1] - (p[2] or p[1]) for p in pts],
                        [(p[3] or p[1]) - p[1] for p in pts],
                    ]
                    ax.errorbar(
                        x,
                        y,
                        yerr=err,
                        ls=styles[side],
                        color=colors[route],
                        marker="o",
                        ms=3,
                        capsize=2,
                        label=f"{side} {route}",
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(w)
            ax.set_xlabel("batch (material points)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(workloads) :]:
            ax.axis("off")
        axes[0][0].set_ylabel(label)
        fig.tight_layout()
        name = "throughput_eval.png" if metric.startswith("eval") else "throughput_transient.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)


def roofline(rows: list[dict], meta: dict, probe: dict | None, out: Path, suite_copy: Path):
    if probe is None:
        return
    idx = _index(rows)
    bw = probe["triad_gb_s_best"] * 1e9
    bound = bw / ELASTICITY_BYTES
    lines = [
        "# Roofline note (generated by `benchmarks/suite/run.py`)",
        "",
        f"Run {meta['started_utc']} on {meta['cpu']}, {meta['cores']} cores "
        f"(`{meta['machine']}`), torch threads {probe['threads']}. The machine was shared: "
        "the best repeat of each probe is taken as the machine's capability, the median is "
        "what the run got.",
        "",
        "| probe | best | median |",
        "|---|---:|---:|",
        f"| copy bandwidth, float64, {probe['array_mb']} MB arrays (GB/s) | "
        f"{probe['copy_gb_s_best']:.2f} | {probe['copy_gb_s_median']:.2f} |",
        f"| triad bandwidth a = b + s·c (GB/s) | {probe['triad_gb_s_best']:.2f} | "
        f"{probe['triad_gb_s_median']:.2f} |",
        f"| float64 matmul {probe['matmul_n']}² (GFLOP/s) | {probe['matmul_gflop_s_best']:.2f} "
        f"| {probe['matmul_gflop_s_median']:.2f} |",
        "",
        "Linear elasticity moves at least 96 B per material point (read the strain, 6 "
        "float64; write the stress, 6 float64) and does 36 multiply-adds, so it is "
        "bandwidth bound: with the triad bandwidth the bound is "
        f"**{bound:.3g} points/s** ({probe['triad_gb_s_best']:.2f} GB/s / 96 B).",
        "",
        "| side | route | batch | points/s (median) | fraction of the bound |",
        "|---|---|---:|---:|---:|",
    ]
    for side in ("ours", "reference"):
        for route in ROUTES:
            for b in (100_000, 1_000_000):
                r = idx.get((side, "elasticity", route, b, "eval_points_per_s"))
                if r is None:
                    continue
                frac = "–" if r["status"] != "ok" else f"{r['value'] / bound:.2f}"
                lines.append(f"| {side} | {route} | {points_label(b)} | {_fmt(r)} | {frac} |")
    lines += [
        "",
        "A fraction near 1 means the route streams strain in and stress out at memory speed; "
        "well below it, per-call overhead or extra passes over memory (temporaries written "
        "and read back) dominate.",
        "Repeated calls at 1e5 points touch 9.6 MB, which can stay in the last-level cache "
        "between calls, so a fraction above 1 there is a cache effect, not a broken bound; "
        "1e6 points (96 MB) is the memory-bound case the criterion refers to.",
    ]
    text = "\n".join(lines) + "\n"
    (out / "ROOFLINE.md").write_text(text)
    suite_copy.write_text(text)


def readme(meta: dict, out: Path, probe: dict | None = None) -> None:
    lines = [
        f"# Benchmark results {meta['started_utc']} ({meta['machine']})",
        "",
        f"Produced by `benchmarks/suite/run.py` ({' '.join(_args(meta))}) at commit "
        f"`{meta['git_commit']}`{_dirty(meta)}, {meta['wall_s']} s of wall time.",
        "",
        f"Machine: {meta['cpu']}, {meta['cores']} cores{_gpu(meta)}. Load average "
        f"{meta['load_average_start'][0]:.1f} at the start and "
        f"{meta['load_average_end'][0]:.1f} at the end of the run.",
        "",
        "- `side_by_side.md` / `.csv`: ours vs reference per cell, ratio ours/reference, "
        "and the max relative difference of the results on the same inputs (`agree`)",
        "- `results.csv`: every measured row (median, fastest/slowest repeat, repeats, status)",
        "- `throughput_eval.png`, `throughput_transient.png`: throughput vs batch, log-log",
    ]
    if probe is not None:  # --no-roofline writes neither
        lines.append(
            "- `ROOFLINE.md`, `roofline.json`: bandwidth / FLOP probe and the elasticity bound"
        )
    if (meta.get("args", {}).get("rounds", 1) or 1) > 1:
        lines.append("- `rounds.csv`: every row of every round (`results.csv` takes the best)")
    if (out / "window_retries.csv").is_file():
        lines.append(
            "- `window_retries.csv`: measurements made in a slow window and replaced by a "
            "retry with a lower sync probe (or the retry that was not kept)"
        )
    lines.append("- `metadata.json`, `run.log`: versions, options, the run's log")
    if meta.get("note"):
        lines += ["", meta["note"]]
    (out / "README.md").write_text("\n".join(lines) + "\n")


def _dirty(meta) -> str:
    """`` (a dirty tree: N changed paths)`` for a run measured with --allow-dirty."""
    paths = meta.get("git_dirty_paths") or []
    return f" (a dirty tree: {len(paths)} changed paths, in metadata.json)" if paths else ""


def _rounds_sentence(meta) -> str:
    """What a cell is when the run had several rounds (``run.py --rounds``); else ``""``."""
    n = meta.get("args", {}).get("rounds", 1) or 1
    if n <= 1:
        return ""
    return (
        f"Each cell ran in {n} rounds, the two sides alternating; a timing is its side's "
        "best round (the highest throughput, the shortest time; peak memory the largest), "
        "and its row in results.csv names the round and lists every round's value "
        "(rounds.csv: all rows of every round). "
    )


def _args(meta):
    a = meta["args"]
    keys = ("quick", "sides", "device", "batches", "steps", "rounds", "window_retries")
    # only where retries were on
    retry = ("window_retries_at_end", "window_retry_max_s", "window_retry_wait_s")
    on = a.get("window_retries") or a.get("window_retries_at_end")
    return [f"{k}={v}" for k, v in a.items() if k in keys or (k in retry and on)]


def write_all(rows, meta, probe, out: Path, suite_roofline: Path, log=print) -> None:
    side_by_side(rows, meta, out)
    plots(rows, out, log)
    roofline(rows, meta, probe, out, suite_roofline)
    readme(meta, out, probe)
