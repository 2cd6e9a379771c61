"""Slow windows: telling a cell measured while the machine was slow from a slow route.

Both workers time ``_measure.sync_probe_us`` before a batch, right after its timed
evaluations and after its transient run (a row ``sync_probe_us``: value and hi the worst
of the three, lo the best). On this 2-vCPU
machine the probe reads about 6.5 us when the two threads exchange data at their usual
speed and 8.3-8.9 us in a slow window (benchmarks/README.md, *Slow windows*).

- The baseline is the lower quartile of every probe value seen (both ends of every row):
  the machine when it is free, however long its windows.
- A batch is *in a window* when its worse probe is over ``WINDOW_FACTOR`` x the baseline,
  or is not a finite number.
- ``run.py --window-retries N`` measures the batches of a worker that were in a window
  again, up to N times; per batch it keeps the attempt whose worse probe is lowest (the
  machine's state, never the timing, chooses) and writes the others to
  ``window_retries.csv``. The same rule for both sides.
"""

from __future__ import annotations

import math

SYNC = "sync_probe_us"
#: a probe this many times the baseline marks its batch as measured in a slow window
WINDOW_FACTOR = 1.2
#: probe values needed before a baseline is trusted (three batches' before and after)
MIN_VALUES = 6


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def probe_values(rows: list[dict]) -> list[float]:
    """Every finite probe value of *rows* (each row's better and worse end)."""
    out = []
    for r in rows:
        if r["metric"] != SYNC:
            continue
        out += [v for v in {r["lo"], r["hi"], r["value"]} if _finite(v)]
    return out


def baseline(values: list[float], min_values: int = 1) -> float | None:
    """The lower quartile of *values*; None with fewer than *min_values*."""
    if len(values) < max(1, min_values):
        return None
    return sorted(values)[len(values) // 4]


def in_window(probe: dict | None, base: float | None) -> bool:
    """Was the batch of this probe row measured in a slow window? A probe that is not a
    finite number is not evidence of a free machine; no row (one thread, cuda) or no
    baseline: nothing to tell, False."""
    if probe is None or base is None:
        return False
    v = probe["value"]
    return not (_finite(v) and v <= WINDOW_FACTOR * base)


def windowed_batches(rows: list[dict], side, workload, route, base: float | None) -> list:
    """The batches of one worker (*side*, *workload*, *route*) whose probe was in a window."""
    return [
        r["batch"]
        for r in rows
        if r["metric"] == SYNC
        and (r["side"], r["workload"], r["route"]) == (side, workload, route)
        and in_window(r, base)
    ]


def _worse_probe(rows: list[dict]) -> float:
    """The worse probe of one attempt's rows of a batch (inf where it has none)."""
    v = next((r["value"] for r in rows if r["metric"] == SYNC), None)
    return v if _finite(v) else math.inf


def pick_attempts(
    attempts: list[list[dict]], batches: list, labels: tuple[str, ...] | None = None
) -> tuple[list[dict], list[dict]]:
    """Per batch of *batches*, the rows of the attempt whose worse probe is lowest (the
    earlier attempt on a tie or where no attempt has a finite probe); ``(kept, dropped)``.

    *attempts* are rows of one worker: its measurement so far (which may hold other
    batches too, kept as they are), then its retries of *batches*. A dropped row's note
    says which attempt it was (*labels*, default ``attempt i``), its probe and which
    attempt was kept."""
    kept: list[dict] = []
    dropped: list[dict] = []
    first, n = attempts[0], len(attempts)
    labels = labels or tuple(f"attempt {i + 1}" for i in range(n))
    kept += [r for r in first if r["batch"] not in batches]
    for b in batches:
        per = [[r for r in rows if r["batch"] == b] for rows in attempts]
        probes = [_worse_probe(rows) for rows in per]
        best = min(range(n), key=lambda i: (probes[i], i))
        kept += per[best]
        for i, (rows, probe) in enumerate(zip(per, probes, strict=True)):
            if i == best:
                continue
            shown = f"{probe:.2f} us" if math.isfinite(probe) else "none"
            note = f"window retry: {labels[i]} (probe {shown}) replaced by {labels[best]}"
            dropped += [{**r, "note": "; ".join(x for x in (r["note"], note) if x)} for r in rows]
    return kept, dropped
