"""Checks of the benchmark harness itself (not of performance).

uv run --no-sync pytest benchmarks/suite/test_suite.py -q
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _agreement  # noqa: E402
import _cpp_io  # noqa: E402
import _device  # noqa: E402
import _worker_args  # noqa: E402
from _agreement import QUANTITIES  # noqa: E402
from _measure import Stepper, row, split_lag, summary, transient_steps  # noqa: E402
from _workloads import WORKLOADS, history, initial_state  # noqa: E402


class _Counter:
    """A fake route: ``x = x~1 + dt * f`` with ``y~2`` read back; raw tensors."""

    input_names = ("f", "t", "t~1", "x~1", "x~2")
    output_names = ("x",)

    def __init__(self):
        self.seen = []

    def input_base_shape(self, name):
        return ()

    def wrap(self, raw, name, sub):
        return raw

    def call(self, v):
        self.seen.append({k: v[k].clone() for k in ("t", "t~1", "x~1", "x~2")})
        return {"x": v["x~1"] + (v["t"] - v["t~1"]) * v["f"]}


def test_split_lag():
    assert split_lag("stress~1") == ("stress", 1)
    assert split_lag("t~2") == ("t", 2)
    assert split_lag("strain") == ("strain", 0)


def test_stepper_feeds_history_and_state():
    n, b = 4, 3
    t = torch.linspace(0, 1, n + 1, dtype=torch.float64).unsqueeze(-1).expand(n + 1, b)
    f = torch.full((n + 1, b), 2.0, dtype=torch.float64)
    fake = _Counter()
    st = Stepper(fake, {"t": (t, 0), "f": (f, 0)}, {}, {}, b)
    last = st.run()
    torch.testing.assert_close(last["x"], 2.0 * t[-1])
    # step 1 reads step 0 for every lag; step 3 reads x of steps 2 and 1
    assert torch.equal(fake.seen[0]["t~1"], t[0])
    assert torch.equal(fake.seen[0]["x~2"], torch.zeros(b, dtype=torch.float64))
    torch.testing.assert_close(fake.seen[2]["x~1"], 2.0 * t[2])
    torch.testing.assert_close(fake.seen[2]["x~2"], 2.0 * t[1])


def test_stepper_rejects_unknown_input():
    class Bad(_Counter):
        input_names = ("f", "mystery")

    with pytest.raises(KeyError, match="mystery"):
        Stepper(Bad(), {"f": (torch.zeros(2, 1), 0)}, {}, {}, 1)


def test_summary_spread():
    med, lo, hi = summary([1.0, 2.0, 3.0])
    assert (med, lo, hi) == (2.0, 1.0, 3.0)
    med, lo, hi = summary([1.0, 2.0, 3.0, 4.0, 100.0])
    assert med == 3.0 and lo < med < hi < 100.0


def test_transient_steps_shorten_with_the_batch():
    """100 steps up to 1e3 points, 10 at 1e4, 5 at 1e5; never more than --steps, none
    for --steps 0."""
    got = [transient_steps(100, b) for b in (1, 100, 1_000, 10_000, 100_000, 1_000_000)]
    assert got == [100, 100, 100, 10, 5, 5]
    assert transient_steps(3, 10_000) == 3
    assert transient_steps(0, 10) == 0


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_shapes(name):
    w = WORKLOADS[name]
    assert w.path.is_file()
    h = history(w, 5, 100)
    for v, sub in h.values():
        assert v.shape[:2] == (101, 5) and v.dtype == torch.float64 and sub == 0
    for v, _sub in initial_state(w, 5).values():
        assert v.shape[0] == 5


def test_run_writes_tables(tmp_path):
    """A tiny run of our py-eager and py-jit elasticity produces the CSV, the table, the
    plots and the agreement of py-jit with py-eager."""
    out = tmp_path / "res"
    cmd = [sys.executable, str(HERE / "run.py"), "--sides", "ours", "--workloads",
           "elasticity", "--routes", "py-eager", "py-jit", "--batches", "1", "4", "--steps", "3",
           "--repeats", "2", "--min-time", "0", "--no-roofline", "--out-dir", str(out),
           "--allow-dirty"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    rows = list(csv.DictReader((out / "results.csv").open()))
    got = {(r["batch"], r["metric"]): r for r in rows if r["route"] == "py-eager"}
    for b in ("1", "4"):
        assert got[(b, "eval_points_per_s")]["status"] == "ok"
        assert float(got[(b, "eval_points_per_s")]["value"]) > 0
        assert got[(b, "transient_points_per_s")]["status"] == "ok"
    assert got[("1", "latency_us")]["status"] == "ok"
    assert "| elasticity | 4 |" in (out / "side_by_side.md").read_text()
    # our routes checked against our py-eager on the same inputs, per batch and result
    agree = {(r["batch"], r["metric"]): r for r in rows if r["metric"].startswith("agreement")}
    assert set(agree) == {
        (b, f"agreement_max_rel:{q}:ours-py-eager") for b in ("1", "4") for q in QUANTITIES
    }
    for r in agree.values():
        assert r["route"] == "py-jit" and r["status"] == "ok", r
        assert float(r["value"]) <= _agreement.RTOL and "inputs identical" in r["note"]
    assert "## Agreement" in (out / "side_by_side.md").read_text()
    assert not (out / "fingerprints").exists()  # removed once compared
    assert (out / "throughput_eval.png").is_file()
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["device"] == "cpu" and meta["gpu"] is None
    assert meta["git_dirty"] == bool(meta["git_dirty_paths"])
    if meta["git_dirty"]:
        assert "a dirty tree" in (out / "README.md").read_text()
    # --no-roofline: no roofline files, and the README lists none
    assert not (out / "ROOFLINE.md").exists()
    assert "ROOFLINE.md" not in (out / "README.md").read_text()


def test_a_dirty_tree_is_refused_unless_allowed(tmp_path):
    """A table comes from one clean commit: uncommitted changes stop the run before it
    measures anything, naming them; --allow-dirty records them."""
    import run

    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "a"], cwd=repo, check=True)
    assert run.git_state(repo)["dirty"] == []
    (repo / "a.txt").write_text("two\n")
    (repo / "benchmarks" / "results").mkdir(parents=True)
    (repo / "benchmarks" / "results" / "x.csv").write_text("out\n")  # the run's output
    assert run.git_state(repo)["dirty"] == ["a.txt"]

    cmd = [sys.executable, str(HERE / "run.py"), "--sides", "ours", "--workloads",
           "elasticity", "--routes", "py-eager", "--batches", "1", "--no-roofline",
           "--out-dir", str(tmp_path / "res")]  # fmt: skip
    dirty_here = run.git_state()["dirty"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if dirty_here:
        assert r.returncode == 2
        assert "uncommitted changes" in r.stderr and "--allow-dirty" in r.stderr
        assert not (tmp_path / "res" / "results.csv").exists()
    else:  # a clean checkout (CI): the run goes ahead
        assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- agreement


def _t(*v):
    return torch.tensor(v, dtype=torch.float64)


def test_max_rel_same_and_small_differences_agree():
    ref = {"stress": _t(100.0, -50.0, 0.0), "ep": _t(0.0, 0.0, 0.0)}
    ours = {"stress": _t(100.0, -50.0 + 1e-9, 1e-12), "ep": _t(0.0, 1e-12, 0.0)}
    worst, per, problems = _agreement.max_rel(ours, ref)
    assert problems == [] and _agreement.agree(worst)
    assert per["stress"] == pytest.approx(1e-11, rel=1e-3)  # 1e-9 / max|ref| = 100
    assert per["ep"] == pytest.approx(1e-9)  # 1e-12 / the 1e-3 floor (atol 1e-8)
    assert _agreement.max_rel(ref, ref)[0] == 0.0


def test_max_rel_a_real_difference_disagrees():
    ref = {"stress": _t(100.0, -50.0), "ep": _t(1.0, 2.0)}
    ours = {"stress": _t(100.0, -50.0), "ep": _t(1.0, 2.001)}
    worst, per, _ = _agreement.max_rel(ours, ref)
    assert worst == pytest.approx(5e-4) and not _agreement.agree(worst)
    assert per["stress"] == 0.0


@pytest.mark.parametrize(
    "ours, ref, problem",
    [
        ({"s": _t(1.0, float("nan"))}, {"s": _t(1.0, 2.0)}, "NaN/inf"),
        ({"s": _t(1.0, 2.0)}, {"s": _t(1.0, float("nan"))}, "NaN/inf"),
        ({"s": _t(1.0, float("inf"))}, {"s": _t(1.0, float("inf"))}, "NaN/inf"),
        ({"s": _t(1.0, 2.0)}, {"s": _t(1.0, float("-inf"))}, "NaN/inf"),
        ({"s": _t(1.0)}, {"s": _t(1.0), "t": _t(2.0)}, "'t' missing on ours"),
        ({"s": _t(1.0), "t": _t(2.0)}, {"s": _t(1.0)}, "'t' missing on the reference"),
        ({"s": _t(1.0, 2.0)}, {"s": _t(1.0, 2.0, 3.0)}, "shape"),
        ({"s": torch.ones(2, 3, dtype=torch.float64)}, {"s": torch.ones(3, 2)}, "shape"),
        ({"s": _t()}, {"s": _t()}, "empty"),
        ({"s": _t(1.0)}, {}, "no result from the reference (empty)"),
        (None, {"s": _t(1.0)}, "no result"),
    ],
)
def test_max_rel_fails_on_what_cannot_be_compared(ours, ref, problem):
    worst, _, problems = _agreement.max_rel(ours, ref)
    assert not _agreement.agree(worst)  # nan: `not (nan <= tol)`
    assert any(problem in p for p in problems), problems


def _fp(tmp_path, name, eval_out, inputs, *, transient=None, reason="skipped"):
    f = tmp_path / f"{name}.pt"
    _agreement.save(
        f,
        eval_out=eval_out,
        eval_inputs=inputs,
        eval_digest=_agreement.digest({k: [v] for k, v in inputs.items()}),
        transient_out=transient,
        transient_reason="" if transient is not None else reason,
        transient_digest=_agreement.digest({k: [v] for k, v in inputs.items()}),
    )
    return _agreement.load(f)


def test_compare_fingerprints(tmp_path):
    x = {"strain": _t(0.1, -0.05)}
    a = _fp(tmp_path, "a", {"stress": _t(100.0, 2.0)}, x, transient={"stress": _t(1.0)})
    b = _fp(tmp_path, "b", {"stress": _t(100.0, 2.0 + 1e-10)}, x)
    status, value, note = _agreement.compare(a, b, "eval", ("ours", "ref"))
    assert status == "ok" and value == pytest.approx(1e-12) and "inputs identical" in note
    # a side without the quantity: missing (with its reason), never ok
    status, value, note = _agreement.compare(a, b, "transient", ("ours", "ref"))
    assert (status, value) == ("missing", None) and "skipped" in note
    assert _agreement.compare(a, None, "eval")[0] == "missing"
    # the same outputs from different inputs: not an agreement
    c = _fp(tmp_path, "c", {"stress": _t(100.0, 2.0)}, {"strain": _t(0.1, -0.04)})
    status, _, note = _agreement.compare(a, c, "eval")
    assert status == "disagree" and "INPUTS DIFFER" in note
    # a real difference; NaN on one side
    d = _fp(tmp_path, "d", {"stress": _t(100.0, 3.0)}, x)
    assert _agreement.compare(a, d, "eval")[:2] == ("disagree", pytest.approx(1e-2))
    e = _fp(tmp_path, "e", {"stress": _t(100.0, float("nan"))}, x)
    assert _agreement.compare(a, e, "eval")[:2] == ("disagree", None)
    assert _agreement.compare(e, a, "eval")[:2] == ("disagree", None)
    # an empty reference result
    f = _fp(tmp_path, "f", {}, x)
    status, _, note = _agreement.compare(a, f, "eval", ("ours", "ref"))
    assert status == "disagree" and "no result from ref (empty)" in note
    g = _fp(tmp_path, "g", {"stress": _t(100.0, 2.0), "extra": _t(1.0)}, x)
    status, _, note = _agreement.compare(a, g, "eval", ("ours", "ref"))
    assert status == "disagree" and "'extra' missing on ours" in note


def test_fingerprint_of_a_large_batch_is_a_subset():
    big = torch.arange(3_000_000 * 6, dtype=torch.float64).reshape(3_000_000, 6)
    p = _agreement.points(big)
    n = _agreement.SUBSET_POINTS
    assert p.shape == (2 * n, 6)
    assert torch.equal(p[:n], big[:n]) and torch.equal(p[n:], big[-n:])
    small = torch.ones(5000, 6)
    assert torch.equal(_agreement.points(small), small.double())


def test_comparisons_planned():
    import run

    planned = {
        ("ours", "w", "py-eager"): [1, 100, 10**6],
        ("ours", "w", "py-jit"): [1, 100],
        ("ours", "w", "py-aoti"): [1, 100],
        ("reference", "w", "py-eager"): [1, 100, 10**6],
        ("reference", "w", "py-aoti"): [1],
    }
    got = set(run.comparisons(planned))
    assert ("w", "py-eager", 10**6, "reference", "py-eager") in got
    assert ("w", "py-jit", 100, "ours", "py-eager") in got
    assert ("w", "py-jit", 100, "reference", "py-jit") not in got  # no such reference route
    assert ("w", "py-aoti", 1, "reference", "py-aoti") in got
    assert ("w", "py-aoti", 100, "reference", "py-aoti") not in got  # not run at 100
    assert ("w", "py-eager", 1, "ours", "py-eager") not in got
    assert len(got) == 3 + 2 * 2 + 2 * 2 + 1


def test_report_marks_a_disagreement(tmp_path):
    """A cell whose results disagree shows DISAGREE instead of a ratio."""
    import _report
    from _measure import row

    rows = []
    for b, status, value in ((1, "ok", 1e-16), (100, "disagree", 3e-3)):
        for side, v in (("ours", 2.0), ("reference", 1.0)):
            rows.append(row(side, "elasticity", "py-eager", b, "eval_points_per_s", v, n=1))
        rows.append(
            row(
                "ours",
                "elasticity",
                "py-eager",
                b,
                "agreement_max_rel:eval:reference-py-eager",
                value,
                n=1,
                status=status,
                note="x",
            )
        )
    meta = {"started_utc": "now", "cpu": "cpu", "cores": 1, "machine": "m",
            "load_average_start": [0.0]}  # fmt: skip
    _report.side_by_side(rows, meta, tmp_path)
    md = (tmp_path / "side_by_side.md").read_text()
    assert "| elasticity | 1 | 2 | 1 | **2.00** | 1.0e-16 |" in md
    assert "| elasticity | 1e2 | 2 ✗ | 1 | **DISAGREE** | ✗ 3.0e-03 |" in md
    got = {
        (r["batch"], r["route"]): r
        for r in csv.DictReader((tmp_path / "side_by_side.csv").open())
        if r["metric"] == "eval_points_per_s"
    }
    assert got[("100", "py-eager")]["ratio"] == ""
    assert got[("100", "py-eager")]["agreement_status"] == "disagree"
    assert got[("1", "py-eager")]["ratio"] == "2"


def test_sync_probe_times_a_fork_join_and_needs_two_threads():
    """The probe: microseconds per call of a threaded add, finite and positive; None on
    one thread (no fork/join to time)."""
    import _measure

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        us = _measure.sync_probe_us(reps=20)
        assert us is not None and math.isfinite(us) and us > 0
        torch.set_num_threads(1)
        assert _measure.sync_probe_us(reps=20) is None
    finally:
        torch.set_num_threads(threads)


def test_measure_records_the_sync_probe_before_and_after_the_evaluations(monkeypatch):
    """measure_batch records the worst of the probes before the evaluations, right after
    the timed ones (no probe between them) and after the transient run (the best in lo,
    each in the note); a probe that is not a finite number makes the row's value NaN (a
    window, _windows); no row where the probe has nothing to time (one thread)."""
    from types import SimpleNamespace

    import _measure

    monkeypatch.setattr(_measure, "WARMUP_S", 0.0)
    n = 4
    cases = (
        (3, [6.5, 9.1, 8.5], (9.1, 6.5, 9.1)),  # the window while the evaluations ran
        (3, [6.5, math.nan, 7.0], (math.nan, 6.5, math.nan)),
        (1, [6.5, 6.6, 8.5], (8.5, 6.5, 8.5)),  # batch 1: the latency repeats alike
        (3, [None], None),
    )
    for b, probes, want in cases:
        hist, opts = _small_batch(n, b)  # 3 timed evaluations (1 s budget, min 3)
        it, events = iter(probes), []

        def probe(it=it, events=events):
            events.append("P")
            return next(it)

        class Logged(_Counter):
            def call(self, v, events=events):
                events.append("C")
                return super().call(v)

        monkeypatch.setattr(_measure, "sync_probe_us", probe)
        plain = SimpleNamespace(state_sub_batch={})
        rows = _measure.measure_batch("ours", "w", "r", Logged(), plain, b, hist, {}, opts)
        assert next(it, "all used") == "all used"  # three probes, none more
        got = [r for r in rows if r["metric"] == "sync_probe_us"]
        if want is None:
            assert got == [] and events[0] == "P" and "P" not in events[1:]
            continue
        timed = events.index("P", 1) - 2  # (after the probe and the warm-up call)
        assert timed >= 3 and events[: timed + 3] == ["P", "C", *"C" * timed, "P"], events
        assert events[-1] == "P" and events.count("P") == 3
        (r,) = got
        assert r["n"] == 3
        for key, v in zip(("value", "lo", "hi"), want, strict=True):
            assert r[key] == v or (math.isnan(v) and math.isnan(r[key])), (key, r[key], v)
        if probes[1] == 9.1:
            assert r["note"].startswith(
                "before the evaluations 6.50 us, after them 9.10 us, "
                "after the transient run 8.50 us"
            ), r["note"]


def test_report_marks_cells_measured_in_a_slow_window(tmp_path):
    """A ratio whose cell had a sync probe over WINDOW_FACTOR x the run's lower quartile
    on either side gets a dagger, and the csv names the side; a NaN probe is not a free
    machine."""
    import _report
    from _measure import row

    rows = []
    probes = {1: (6.0, 6.2), 10: (6.1, 9.0), 100: (9.5, 9.9), 1000: (6.0, float("nan"))}
    for b, (ours, ref) in probes.items():
        for side, v, p in (("ours", 2.0, ours), ("reference", 1.0, ref)):
            rows.append(row(side, "perzyna", "py-aoti", b, "eval_points_per_s", v, n=1))
            rows.append(row(side, "perzyna", "py-aoti", b, "sync_probe_us", p, p, p, 2))
    rows += [row("ours", "perzyna", "py-aoti", b, "sync_probe_us", 6.0, n=2) for b in (2, 3, 4)]
    meta = {"started_utc": "now", "cpu": "cpu", "cores": 2, "machine": "m",
            "load_average_start": [0.0]}  # fmt: skip
    _report.side_by_side(rows, meta, tmp_path)
    md = (tmp_path / "side_by_side.md").read_text()
    assert "lower quartile of probes (6.00 us)" in md
    assert "| perzyna | 1 | – | – | – | – | 2 | 1 | **2.00** | unchecked |" in md
    assert "| perzyna | 10 | – | – | – | – | 2 | 1 | **2.00** † | unchecked |" in md
    got = {
        r["batch"]: r
        for r in csv.DictReader((tmp_path / "side_by_side.csv").open())
        if r["metric"] == "eval_points_per_s" and r["route"] == "py-aoti"
    }
    assert [got[b]["window"] for b in ("1", "10", "100", "1000")] == [
        "",
        "reference",
        "both",
        "reference",
    ]
    assert got["10"]["ours_sync_us"] == "6.1" and got["10"]["reference_sync_us"] == "9"


def _small_batch(n: int, b: int, **opts):
    """A history of *n* steps for *b* points (inputs ``t`` and ``f``) and measure_batch's
    options for it; *opts* override the defaults (cpu, 1 s of evaluations, one transient)."""
    t = torch.linspace(0, 1, n + 1, dtype=torch.float64).unsqueeze(-1).expand(n + 1, b)
    hist = {"t": (t, 0), "f": (torch.ones(n + 1, b, dtype=torch.float64), 0)}
    base = dict(device="cpu", repeats=3, latency_repeats=3, min_time=0.0, eval_budget=1.0,
                steps=n, transient_budget=60.0, transient_repeats=1, transient_min_time=0.0,
                fingerprint_dir=None)  # fmt: skip
    return hist, SimpleNamespace(**{**base, **opts})


def _probe(side, batch, value, route="py-aoti", workload="perzyna"):
    from _measure import row

    return row(side, workload, route, batch, "sync_probe_us", value, value, value, 2)


def test_windows_baseline_and_which_batches_were_in_one():
    """The baseline is the lower quartile of every probe value (None below the minimum
    count); a batch is in a window over WINDOW_FACTOR x the baseline or on a NaN probe."""
    import _windows

    rows = [_probe("ours", b, v) for b, v in ((1, 6.0), (10, 6.2), (100, 9.0), (1000, math.nan))]
    rows.append(_probe("reference", 10, 9.5))
    values = _windows.probe_values(rows)
    assert sorted(values) == [6.0, 6.2, 9.0, 9.5]
    assert _windows.baseline(values) == 6.2 and _windows.baseline(values, 6) is None
    assert _windows.windowed_batches(rows, "ours", "perzyna", "py-aoti", 6.0) == [100, 1000]
    assert _windows.windowed_batches(rows, "ours", "perzyna", "py-aoti", None) == []
    assert not _windows.in_window(None, 6.0)


def test_windows_pick_the_attempt_with_the_lowest_probe_never_the_fastest():
    """Per batch the attempt whose probe is lowest is kept, whatever its timing; the
    others are dropped with a note; batches not retried stay as they were."""
    import _windows
    from _measure import row

    def attempt(probes: dict, speed: float):
        rows = []
        for b, p in probes.items():
            rows.append(row("ours", "perzyna", "py-aoti", b, "eval_points_per_s", speed, n=3))
            rows.append(_probe("ours", b, p))
        return rows

    first = attempt({1: 6.0, 10: 9.0, 100: 8.8}, speed=1.0)
    retry = attempt({10: 6.1, 100: 9.9}, speed=5.0)  # 100: faster, but a worse probe
    kept, dropped = _windows.pick_attempts([first, retry], [10, 100], ("first", "retry 1"))
    speed = {r["batch"]: r["value"] for r in kept if r["metric"] == "eval_points_per_s"}
    assert speed == {1: 1.0, 10: 5.0, 100: 1.0}
    assert sorted(
        (r["batch"], r["value"]) for r in dropped if r["metric"] == "eval_points_per_s"
    ) == [
        (10, 1.0),
        (100, 5.0),
    ]
    notes = {r["batch"]: r["note"] for r in dropped if r["metric"] == "sync_probe_us"}
    assert notes[10] == "window retry: first (probe 9.00 us) replaced by retry 1"
    assert notes[100] == "window retry: retry 1 (probe 9.90 us) replaced by first"


def test_retry_windows_measures_only_the_windowed_batches_again(tmp_path, monkeypatch):
    """run.retry_windows: the worker's windowed batches are measured again (and no more
    than --window-retries times, each after --window-retry-wait-s), the rows of other
    workers stay, the replaced rows go to window_retries.jsonl; a worker that ran too long
    is not retried."""
    import run
    from _measure import row

    raw = tmp_path / "rows.jsonl"
    base = [_probe("reference", b, 6.0, route="py-eager") for b in (1, 2, 3, 4, 5, 6)]
    mine = [_probe("ours", 10, 6.1), _probe("ours", 100, 9.0)]
    mine += [row("ours", "perzyna", "py-aoti", b, "eval_points_per_s", 1.0, n=3) for b in (10, 100)]
    raw.write_text("".join(json.dumps(r) + "\n" for r in base + mine))
    calls = []

    def measure(todo, dest):  # still in a window at the first retry, free at the second
        calls.append(list(todo))
        p = 9.5 if len(calls) == 1 else 6.3
        rows = [_probe("ours", b, p) for b in todo]
        rows += [row("ours", "perzyna", "py-aoti", b, "eval_points_per_s", 2.0, n=3) for b in todo]
        dest.write_text("".join(json.dumps(r) + "\n" for r in rows))

    a = SimpleNamespace(window_retries=3, window_retry_max_s=600.0, window_retry_wait_s=7.5)
    worker = ("ours", "perzyna", "py-aoti")
    seen = [raw, tmp_path / run.RETRIED]
    slept = []
    monkeypatch.setattr(run.time, "sleep", slept.append)
    said = []
    run.retry_windows(a, worker, measure, raw, seen, tmp_path, 10.0, said.append)
    assert calls == [[100], [100]]  # free after the second retry: no third
    assert slept == [7.5, 7.5] and all("after 7.5 s" in x for x in said)
    rows = run._read_rows(raw)
    assert [r for r in rows if r["side"] == "reference"] == base
    speed = {r["batch"]: r["value"] for r in rows if r["metric"] == "eval_points_per_s"}
    assert speed == {10: 1.0, 100: 2.0}
    dropped = run._read_rows(tmp_path / run.RETRIED)
    assert sorted(r["value"] for r in dropped if r["metric"] == "sync_probe_us") == [9.0, 9.5]
    # too long a measuring run: logged, not retried
    raw.write_text("".join(json.dumps(r) + "\n" for r in base + mine))
    calls.clear()
    said = []
    run.retry_windows(a, worker, measure, raw, seen, tmp_path, 601.0, said.append)
    assert calls == [] and "not retried" in said[0]
    # --max-minutes: a retry whose wait and run (as long as the last) would end past the
    # deadline is not made; one that fits is
    now = run.time.time()
    for left, expected in ((17.0, []), (18.0, [[100]])):
        raw.write_text("".join(json.dumps(r) + "\n" for r in base + mine))
        calls.clear()
        said = []
        a.window_retries = 1
        run.retry_windows(a, worker, measure, raw, seen, tmp_path, 10.0, said.append,
                          deadline=now + left)  # fmt: skip
        assert calls == expected
        assert ("s left before --max-minutes" in said[0]) == (not expected)


def test_results_readme_lists_the_window_retries(tmp_path):
    """The results README names window_retries.csv where a run wrote one, and the option."""
    import _report

    meta = {"started_utc": "now", "machine": "m", "git_commit": "abc", "wall_s": 1,
            "cpu": "cpu", "cores": 2, "load_average_start": [0.0], "load_average_end": [0.0],
            "args": {"rounds": 1, "window_retries": 2, "window_retry_max_s": 300.0,
                     "window_retry_wait_s": 30.0, "window_retries_at_end": 1}}  # fmt: skip
    _report.readme(meta, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "window_retries=2" in text and "window_retries.csv" not in text
    assert "window_retries_at_end=1" in text
    assert "window_retry_max_s=300.0" in text and "window_retry_wait_s=30.0" in text
    (tmp_path / "window_retries.csv").write_text("side\n")
    _report.readme(meta, tmp_path)
    assert (
        "- `window_retries.csv`: measurements made in a slow window"
        in (tmp_path / "README.md").read_text()
    )


# --------------------------------------------------------------------------- --device


def _worker_argv(a, side: str, route: str = "py-aoti"):
    """The arguments run.py gives the *side* worker, as that worker parses them."""
    import run

    script = {"ours": "_ours_worker.py", "reference": "_reference_worker.py"}[side]
    raw = a.out_dir / "rows.jsonl"
    cmd = run.worker_command(
        Path(sys.executable), script, side, "elasticity", route, [1, 100], a, raw
    )
    assert cmd[1] == str(HERE / script)
    w = _worker_args.parser(script).parse_args(cmd[2:])
    assert w.out == raw and w.batches == [1, 100]
    return w


def _run_args(tmp_path, *extra):
    import run

    a = run.parse_args(["--allow-dirty", "--sides", "ours", "reference", "--out-dir",
                        str(tmp_path), *extra])  # fmt: skip
    a.fingerprint_dir, a.cpp_exe = tmp_path / "fingerprints", None  # set by run.main
    return a


def test_device_defaults_to_cpu_in_both_workers(tmp_path):
    import run

    a = _run_args(tmp_path)
    assert a.device == "cpu"
    for side in ("ours", "reference"):
        w = _worker_argv(a, side)
        assert w.device == "cpu"
        assert w.work_dir == run.ROOT / "build" / "bench-suite" / side / "elasticity" / "py-aoti"


def test_device_cuda_reaches_both_workers(tmp_path, monkeypatch):
    """On a machine whose torch sees a GPU (simulated), --device cuda is given to both
    workers, their artifacts go to their own folder and the host roofline is off."""
    import run

    monkeypatch.setattr(_device, "problem", lambda device: None)
    a = _run_args(tmp_path, "--device", "cuda")
    assert a.device == "cuda" and a.no_roofline
    cuda_build = run.ROOT / "build" / "bench-suite" / "cuda"
    for side in ("ours", "reference"):
        for route in ("py-eager", "py-aoti"):
            w = _worker_argv(a, side, route)
            assert w.device == "cuda"
            assert w.work_dir == cuda_build / side / "elasticity" / route
    for route in ("cpp-aoti", "cpp-dispatch"):  # the py-aoti artifact, compiled for cuda
        assert _worker_argv(a, "ours", route).work_dir == cuda_build / "ours/elasticity/py-aoti"
    assert run.machine_label("cuda").endswith("-cuda")


def test_cuda_refusal_names_the_option_and_the_torch(monkeypatch):
    assert _device.problem("cpu") is None
    assert "unknown device" in _device.problem("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    msg = _device.problem("cuda")
    assert msg.startswith("--device cuda:")
    assert f"torch {torch.__version__}" in msg and sys.executable in msg
    assert "sees no CUDA device" in msg and "never falls back to the CPU" in msg


def test_run_refuses_cuda_before_measuring(tmp_path, monkeypatch, capsys):
    """Where torch sees no GPU (simulated), run.py exits at once with the message."""
    import run

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as e:
        run.parse_args(["--device", "cuda", "--allow-dirty", "--out-dir", str(tmp_path / "r")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--device cuda:" in err and "sees no CUDA device" in err
    assert not (tmp_path / "r").exists()


def test_cuda_is_refused_on_this_cpu_only_machine(tmp_path):
    """The real thing, no simulation of torch: run.py and both workers refuse --device
    cuda at once, with the message, and write no row (on a machine with a GPU too, which
    CUDA_VISIBLE_DEVICES hides from them: the test runs everywhere, it never skips)."""
    import _reference_env

    no_gpu = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, str(HERE / "run.py"), "--device", "cuda", "--sides", "ours",
           "reference", "--workloads", "elasticity", "--batches", "1", "--allow-dirty",
           "--out-dir", str(tmp_path / "res")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=no_gpu)
    assert r.returncode == 2 and "--device cuda:" in r.stderr, r.stderr
    assert "sees no CUDA device" in r.stderr and not (tmp_path / "res").exists()
    workers = [(sys.executable, "_ours_worker.py")]
    if _reference_env.ready():
        workers.append((str(_reference_env.python()), "_reference_worker.py"))
    for python, script in workers:
        out = tmp_path / f"{script}.jsonl"
        cmd = [python, str(HERE / script), "--workload", "elasticity", "--route", "py-eager",
               "--batches", "1", "--device", "cuda", "--work-dir", str(tmp_path / "w"),
               "--out", str(out)]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=no_gpu)
        assert r.returncode != 0 and f"{script}: --device cuda:" in r.stderr, r.stderr
        assert "sees no CUDA device" in r.stderr and not out.exists()


def test_measure_on_cuda_synchronizes_and_reads_gpu_memory(monkeypatch):
    """measure_batch's cuda branch, with torch.cuda's calls recorded (no GPU needed): a
    synchronize after every timed call and after the transient run, before the clock
    is read, and the peak from max_memory_allocated above what was allocated before."""
    from types import SimpleNamespace

    import _measure

    events = []
    fake = _Counter()
    counted = fake.call

    def call(v):
        events.append("call")
        return counted(v)

    fake.call = call
    monkeypatch.setattr(_measure, "WARMUP_S", 0.0)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: events.append("sync"))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: events.append("reset"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: 3 * 2**20)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 8 * 2**20)
    n, b = 4, 3
    hist, opts = _small_batch(n, b, device="cuda", eval_budget=5.0)
    rows = _measure.measure_batch("ours", "w", "r", fake, SimpleNamespace(state_sub_batch={}),
                                  b, hist, {}, opts)  # fmt: skip
    assert events[:2] == ["sync", "reset"]  # a new peak, nothing queued before it
    body = events[2:]
    transient = ["call"] * n + ["sync"]  # the steps queue freely, then one wait
    i = next(k for k in range(len(body)) if body[k : k + len(transient)] == transient)
    evals = body[:i]
    assert len(evals) >= 2 * 3 and evals == ["call", "sync"] * (len(evals) // 2)
    assert body[i + len(transient) :] == ["sync"]  # before the peak is read
    got = {r["metric"]: r for r in rows}
    assert got["eval_points_per_s"]["status"] == "ok"
    assert got["transient_points_per_s"]["status"] == "ok"
    assert got["peak_cuda_delta_mb"]["value"] == 5.0
    assert "max_memory_allocated 8 MB" in got["peak_cuda_delta_mb"]["note"]


@pytest.mark.parametrize("min_time", [0.0, 0.2])
def test_cheap_transients_are_repeated_until_the_min_time(monkeypatch, min_time):
    """--transient-repeats runs at least; with --transient-min-time, more until that many
    seconds have passed: a run of microseconds is timed many times and its median
    reported, not one run that a scheduler hiccup can double."""
    from types import SimpleNamespace

    import _measure

    monkeypatch.setattr(_measure, "WARMUP_S", 0.0)
    n, b = 4, 3
    hist, opts = _small_batch(n, b, transient_repeats=2, transient_min_time=min_time)
    start = time.perf_counter()
    rows = _measure.measure_batch("ours", "w", "r", _Counter(), SimpleNamespace(state_sub_batch={}),
                                  b, hist, {}, opts)  # fmt: skip
    assert time.perf_counter() - start < 30
    got = {r["metric"]: r for r in rows}
    runs = got["transient_points_per_s"]["n"]
    assert got["transient_points_per_s"]["status"] == "ok"
    if min_time == 0.0:
        assert runs == 2
    else:  # a 4-step run of a 3-point counter takes well under a millisecond
        assert runs > 10, runs
        assert got["transient_time_s"]["n"] == runs


@pytest.mark.parametrize("long_call", [False, True])
def test_a_long_first_call_is_the_one_timed_call(monkeypatch, long_call):
    """A first call longer than LONG_CALL_S is timed, not repeated as a warm-up (the
    reference's Taylor model at 1e5 points: 15 minutes a call); a short one is a warm-up
    followed by the timed calls."""
    from types import SimpleNamespace

    import _measure

    monkeypatch.setattr(_measure, "WARMUP_S", 0.0)
    monkeypatch.setattr(_measure, "LONG_CALL_S", 0.0 if long_call else 1e9)
    fake = _Counter()
    n, b = 4, 3
    hist, opts = _small_batch(n, b, eval_budget=5.0, steps=0)
    rows = _measure.measure_batch("ours", "w", "r", fake, SimpleNamespace(state_sub_batch={}),
                                  b, hist, {}, opts)  # fmt: skip
    got = {r["metric"]: r for r in rows}
    assert got["eval_points_per_s"]["status"] == "ok"
    if long_call:
        assert len(fake.seen) == 1 and got["eval_time_s"]["n"] == 1
        assert "no warm-up" in got["eval_time_s"]["note"]
    else:
        assert len(fake.seen) == 1 + 3 and got["eval_time_s"]["n"] == 3
        assert "1 warm-up calls" in got["eval_time_s"]["note"]


def test_report_of_a_cuda_run_names_the_gpu_and_its_memory(tmp_path):
    import _report
    from _measure import row

    rows = [row("ours", "elasticity", "py-eager", 10_000, "eval_points_per_s", 2.0, n=1)]
    for metric, v in (("peak_rss_delta_mb", 111.0), ("peak_cuda_delta_mb", 42.0)):
        rows.append(row("ours", "elasticity", "py-eager", 10_000, metric, v, n=1, unit="MB"))
    gpu = {"gpus": [{"name": "NVIDIA H100", "memory_gib": 79.1}]}
    meta = {"started_utc": "now", "cpu": "cpu", "cores": 1, "machine": "m-cuda",
            "load_average_start": [0.0], "device": "cuda", "gpu": gpu}  # fmt: skip
    _report.side_by_side(rows, meta, tmp_path)
    md = (tmp_path / "side_by_side.md").read_text()
    assert "NVIDIA H100 (79.1 GiB), measured on cuda" in md
    assert "## Peak GPU memory" in md and "| elasticity | 1e4 | 42 |" in md
    _report.side_by_side(rows, {**meta, "device": "cpu", "gpu": None}, tmp_path)
    md = (tmp_path / "side_by_side.md").read_text()
    assert "measured on cuda" not in md and "| elasticity | 1e4 | 111 |" in md


# --------------------------------------------------------------------------- cpp-aoti


def test_cpp_tensor_files_round_trip(tmp_path):
    t = {"stress": torch.arange(12.0).reshape(2, 6), "ep": torch.tensor([[0.5], [-1.0]])}
    _cpp_io.save(tmp_path / "o", t, kind="output")
    got = _cpp_io.load(tmp_path / "o")
    assert set(got) == set(t)
    for n in t:
        assert got[n].dtype == torch.float64 and torch.equal(got[n], t[n].double())
    _cpp_io.save(tmp_path / "i", t)  # kind "input": not outputs
    with pytest.raises(ValueError, match="no 'output/' tensors"):
        _cpp_io.load(tmp_path / "i")
    (tmp_path / "o.bin").write_bytes((tmp_path / "o.bin").read_bytes()[:-8])
    with pytest.raises(ValueError, match=r"o\.bin"):
        _cpp_io.load(tmp_path / "o")


def test_cpp_program_writes_the_outputs_of_one_call(tmp_path):
    """bench_cpp --outputs writes what neml2.aoti.Model computes on the same inputs, in
    the format the worker reads back for cpp-aoti's agreement check."""
    import shutil

    import run
    from _ours_worker import cpp_command

    if shutil.which("cmake") is None:
        pytest.skip("no cmake to build the C++ timing program")
    from neml2.aoti import Model
    from neml2.compiler import CompileOptions, compile_file

    exe = run.build_cpp_program(print)
    assert exe is not None, "building benchmarks/aoti/cpp failed (see the output)"
    w = WORKLOADS["elasticity"]
    opts = CompileOptions.from_strings(w.model, [])
    art = compile_file(w.path, opts, tmp_path / "artifact",
                       cache_dir=run.ROOT / "build" / "aoti-cache").artifact_dir  # fmt: skip
    x = {"strain": history(w, 5, 3)["strain"][0][2]}
    _cpp_io.save(tmp_path / "in", x)
    cmd = cpp_command(exe, art, tmp_path / "in", 2, "cpu", tmp_path / "out")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = _cpp_io.load(tmp_path / "out")
    want = Model(art).forward(x)
    assert set(got) == set(want) == {"stress"}
    torch.testing.assert_close(got["stress"], want["stress"], rtol=0, atol=0)
    assert got["stress"].abs().max() > 0


def test_compiled_variants_keep_their_own_records(tmp_path):
    """py-aoti and cpp-dispatch (``forward_into``) artifacts share a work directory:
    each variant is reused only from its own record, never the other's."""
    import types

    import _measure as M

    w = WORKLOADS["elasticity"]
    made = []

    def compile_fn(name):
        def fn(rows):
            d = tmp_path / name
            d.mkdir(exist_ok=True)
            made.append(name)
            rows.append({"note": "", "metric": "compile_cached_s"})
            return d

        return fn

    a = types.SimpleNamespace(work_dir=tmp_path, compile="reuse")
    plain = M.compiled(w, a, [], compile_fn("artifact"), "cached", "lib")
    a.compile = "reuse"
    into = M.compiled(w, a, [], compile_fn("artifact-into"), "cached", "lib", variant="-into")
    assert (plain.name, into.name) == ("artifact", "artifact-into")
    for variant, want in (("", "artifact"), ("-into", "artifact-into")):
        a.compile = "reuse-only"
        assert M.compiled(w, a, [], compile_fn("x"), "cached", "lib", variant=variant).name == want
    assert made == ["artifact", "artifact-into"]  # each compiled once, then reused


# --------------------------------------------------------------------------- rounds


def _r(side, metric, value, status="ok", batch=4, note=""):
    return row(side, "elasticity", "py-eager", batch, metric, value, status=status, note=note)


def test_best_of_rounds_takes_each_measurement_from_its_best_round():
    import run

    r1 = [
        _r("ours", "eval_points_per_s", 100.0),
        _r("ours", "transient_time_s", 2.0),
        _r("ours", "peak_rss_delta_mb", 10.0),
        _r("ours", "transient_points_per_s", None, status="failed", note="ConvergenceError"),
        _r("ours", "available", None, status="not available", batch=""),
    ]
    r2 = [
        _r("ours", "eval_points_per_s", 250.0),
        _r("ours", "transient_time_s", 3.0),
        _r("ours", "peak_rss_delta_mb", 12.0),
        _r("ours", "transient_points_per_s", 40.0),
        _r("ours", "eval_points_per_s", float("nan"), batch=8, status="failed"),
        _r("ours", "latency_us", float("nan"), batch=1),
    ]
    r1.append(_r("ours", "latency_us", 90.0, batch=1))
    got = {(r["batch"], r["metric"]): r for r in run.best_of_rounds([r1, r2])}
    assert got[(4, "eval_points_per_s")]["value"] == 250.0
    assert "round 2 of 2 (best; r1 100, r2 250)" in got[(4, "eval_points_per_s")]["note"]
    assert got[(4, "transient_time_s")]["value"] == 2.0  # a time: the smallest
    assert got[(4, "peak_rss_delta_mb")]["value"] == 12.0  # memory: the largest
    assert "largest" in got[(4, "peak_rss_delta_mb")]["note"]
    # a failed round does not count; it is named in the note
    assert got[(4, "transient_points_per_s")]["value"] == 40.0
    assert "r1 failed" in got[(4, "transient_points_per_s")]["note"]
    # not a measurement, or no round ok: the first round's row as it was
    assert got[("", "available")]["status"] == "not available"
    assert got[(8, "eval_points_per_s")]["status"] == "failed"
    # a NaN is never a round's best, even with status ok
    assert got[(1, "latency_us")]["value"] == 90.0
    assert len(got) == 7


def test_rounds_alternate_the_sides_and_later_rounds_reuse_the_artifact(tmp_path, monkeypatch):
    """--rounds 2: ours, reference, ours, reference per cell; rounds after the first reuse
    the first's compile; the table takes each side's best round; rounds.csv keeps all.
    A py-aoti cell's first round compiles in a worker of its own (no batches), and the
    worker that measures loads that artifact (``reuse``)."""
    import run

    calls = []
    speed = {("ours", 0): 300.0, ("reference", 0): 50.0}
    speed.update({("ours", 1): 200.0, ("reference", 1): 80.0})

    def fake_worker(python, script, side, w, route, batches, a, raw, log, timeout, **kw):
        k = sum(1 for c in calls if c[:3] == (side, w, route) and c[4])
        calls.append((side, w, route, kw.get("compile_mode"), list(batches)))
        with raw.open("a") as f:
            for b in batches:
                r = row(side, w, route, b, "eval_points_per_s", speed[(side, k)], n=3)
                f.write(json.dumps(r) + "\n")

    monkeypatch.setattr(run, "run_worker", fake_worker)
    monkeypatch.setattr(run._reference_env, "ensure", lambda log: Path(sys.executable))
    out = tmp_path / "res"
    run.main(["--reference", "--rounds", "2", "--workloads", "elasticity", "--routes",
              "py-eager", "py-aoti", "--reference-routes", "py-eager", "py-aoti", "--batches", "4",
              "--no-roofline", "--allow-dirty", "--out-dir", str(out)])  # fmt: skip
    eager = [c for c in calls if c[2] == "py-eager"]
    assert [(c[0], c[3], c[4]) for c in eager] == [
        ("ours", None, [4]), ("reference", None, [4]),
        ("ours", "reuse", [4]), ("reference", "reuse", [4]),
    ]  # fmt: skip
    aoti = [c for c in calls if c[2] == "py-aoti"]
    assert [(c[0], c[3], c[4]) for c in aoti] == [
        ("ours", None, []), ("ours", "reuse", [4]),
        ("reference", None, []), ("reference", "reuse", [4]),
        ("ours", "reuse", [4]), ("reference", "reuse", [4]),
    ]  # fmt: skip
    assert calls.index(eager[-1]) < calls.index(aoti[0])  # cell by cell
    rows = list(csv.DictReader((out / "results.csv").open()))
    ev = {(r["side"], r["route"]): r for r in rows if r["metric"] == "eval_points_per_s"}
    assert float(ev[("ours", "py-eager")]["value"]) == 300.0
    assert float(ev[("reference", "py-eager")]["value"]) == 80.0
    rounds = list(csv.DictReader((out / "rounds.csv").open()))
    assert sorted(r["round"] for r in rounds) == ["1"] * 4 + ["2"] * 4
    assert not list(out.glob("rows*.jsonl"))  # removed once the results are written
    assert "Each cell ran in 2 rounds" in (out / "side_by_side.md").read_text()
    readme = (out / "README.md").read_text()
    assert "rounds=2" in readme and "`rounds.csv`" in readme


def test_window_retries_at_the_end_of_the_run(tmp_path, monkeypatch):
    """--window-retries-at-end: a batch still in a window after the retries right after
    its worker is measured again once every worker has run (after the reference's
    worker here), until its probe is free or the retries are spent; the attempt with the
    lowest probe is kept, the replaced ones are in window_retries.csv."""
    import run

    calls = []

    def fake_worker(python, script, side, w, route, batches, a, raw, log, timeout, **kw):
        calls.append((side, list(batches)))
        n = sum(1 for c in calls if c[0] == side)
        with raw.open("a") as f:
            for b in batches:
                # ours at batch 4: in a window in its first run and first retry only
                p = 9.0 if (side, b) == ("ours", 4) and n <= 2 else 6.0
                speed = 100.0 * n if side == "ours" else 50.0
                for r in (
                    row(side, w, route, b, "eval_points_per_s", speed, n=3),
                    _probe(side, b, p, route=route, workload=w),
                ):
                    f.write(json.dumps(r) + "\n")

    monkeypatch.setattr(run, "run_worker", fake_worker)
    monkeypatch.setattr(run._reference_env, "ensure", lambda log: Path(sys.executable))
    out = tmp_path / "res"
    run.main(["--reference", "--workloads", "elasticity", "--routes", "py-eager",
              "--reference-routes", "py-eager", "--batches", *"456789", "--no-roofline",
              "--allow-dirty", "--window-retries", "1", "--window-retries-at-end", "3",
              "--out-dir", str(out)])  # fmt: skip
    assert calls == [
        ("ours", [4, 5, 6, 7, 8, 9]), ("ours", [4]), ("reference", [4, 5, 6, 7, 8, 9]),
        ("ours", [4]),
    ]  # fmt: skip
    rows = list(csv.DictReader((out / "results.csv").open()))
    ev = {(r["side"], r["batch"]): float(r["value"]) for r in rows
          if r["metric"] == "eval_points_per_s"}  # fmt: skip
    assert ev[("ours", "4")] == 300.0 and ev[("ours", "5")] == 100.0
    replaced = list(csv.DictReader((out / "window_retries.csv").open()))
    assert sorted(r["note"].split("window retry: ")[1] for r in replaced
                  if r["metric"] == "sync_probe_us") == [
        "retry 1 (probe 9.00 us) replaced by the measurement before",  # (a tie: the earlier)
        "the measurement before (probe 9.00 us) replaced by retry 2",
    ]  # fmt: skip
    log = (out / "run.log").read_text()
    assert "retry 2 of 4 (at the end of the run)" in log and "retry 3" not in log


def test_max_minutes_keeps_a_reserve_for_each_later_worker(tmp_path, monkeypatch):
    """--max-minutes: a worker may run up to the deadline less --reserve-s for each worker
    after it (at least 30 s, at most --cell-timeout); past the deadline no worker starts and
    its cells are recorded as skipped."""
    import run

    timeouts = []

    def fake_worker(python, script, side, w, route, batches, a, raw, log, timeout, **kw):
        timeouts.append(timeout)
        with raw.open("a") as f:
            for b in batches:
                f.write(json.dumps(row(side, w, route, b, "eval_points_per_s", 5.0, n=3)) + "\n")

    monkeypatch.setattr(run, "run_worker", fake_worker)
    monkeypatch.setattr(run._reference_env, "ensure", lambda log: Path(sys.executable))
    out = tmp_path / "res"
    run.main(["--reference", "--workloads", "elasticity", "j2_radret", "--routes", "py-eager",
              "--reference-routes", "py-eager", "--batches", "4", "--no-roofline",
              "--allow-dirty", "--max-minutes", "100", "--reserve-s", "600",
              "--cell-timeout", "5500", "--out-dir", str(out)])  # fmt: skip
    # 4 workers: 6000 s less 3, 2, 1, 0 reserves of 600 s (the last one capped at 5500 s)
    expected = [4200.0, 4800.0, 5400.0, 5500.0]
    assert len(timeouts) == 4
    for got, want in zip(timeouts, expected, strict=True):
        assert want - 60.0 < got <= want, (timeouts, expected)

    # with rounds, a later round still reuses the first's artifact under a deadline
    modes = []

    def mode_worker(*args, **kw):
        modes.append(kw.get("compile_mode"))

    monkeypatch.setattr(run, "run_worker", mode_worker)
    run.main(["--reference", "--rounds", "2", "--workloads", "elasticity", "--routes",
              "py-eager", "--reference-routes", "py-eager", "--batches", "4", "--no-roofline",
              "--allow-dirty", "--max-minutes", "100",
              "--out-dir", str(tmp_path / "r")])  # fmt: skip
    assert modes == [None, None, "reuse", "reuse"]
    monkeypatch.setattr(run, "run_worker", fake_worker)

    # a deadline already past: no worker starts, every cell is skipped with the reason
    timeouts.clear()
    out2 = tmp_path / "res2"
    run.main(["--reference", "--workloads", "elasticity", "--routes", "py-eager",
              "--reference-routes", "py-eager", "--batches", "4", "--no-roofline",
              "--allow-dirty", "--max-minutes", "1e-9", "--out-dir", str(out2)])  # fmt: skip
    assert timeouts == []
    rows = list(csv.DictReader((out2 / "results.csv").open()))
    ev = [r for r in rows if r["metric"] == "eval_points_per_s"]
    assert len(ev) == 2 and all(r["status"] == "skipped (over budget)" for r in ev)
    assert all("min budget" in r["note"] for r in ev)


def test_rounds_must_be_positive(capsys):
    import run

    with pytest.raises(SystemExit):
        run.parse_args(["--rounds", "0", "--allow-dirty"])
    assert "--rounds must be at least 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, said",
    [
        (["--window-retries", "-1"], "--window-retries must be 0 or more, got -1"),
        (["--window-retry-max-s", "-5"], "--window-retry-max-s must be 0 or more, got -5"),
        (["--window-retry-wait-s", "-1"], "--window-retry-wait-s must be 0 or more, got -1"),
        (["--window-retries-at-end", "-2"], "--window-retries-at-end must be 0 or more, got -2"),
        (["--window-retry-wait-s", "nan"], "--window-retry-wait-s must be 0 or more, got nan"),
        (["--window-retry-max-s", "nan"], "--window-retry-max-s must be 0 or more, got nan"),
        (["--reserve-s", "-1"], "--reserve-s must be 0 or more, got -1"),
        (["--reserve-s", "nan"], "--reserve-s must be 0 or more, got nan"),
    ],
)
def test_window_retry_options_must_not_be_negative(capsys, args, said):
    import run

    with pytest.raises(SystemExit):
        run.parse_args([*args, "--allow-dirty"])
    assert said in capsys.readouterr().err


def test_a_cold_compile_starts_from_an_empty_inductor_cache(tmp_path, monkeypatch):
    """The worker's Inductor cache outlives a run: a cold compile empties it, a reuse keeps
    it, a cached compile leaves Inductor's own default alone."""
    from types import SimpleNamespace

    from _worker_args import private_inductor_cache

    cache = tmp_path / "inductor-cache"
    # recorded as it was (unset, typically), so the variable set below does not outlive the test
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")
    for mode, kept in (("reuse", True), ("cold", False), ("cold-once", False)):
        cache.mkdir(exist_ok=True)
        (cache / "graph").write_text("from an earlier run")
        monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
        private_inductor_cache(SimpleNamespace(compile=mode, work_dir=tmp_path))
        assert (cache / "graph").exists() == kept, mode
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(cache)
    cache.mkdir()
    (cache / "graph").write_text("from an earlier run")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    private_inductor_cache(SimpleNamespace(compile="cached", work_dir=tmp_path))
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ and (cache / "graph").exists()


def test_only_a_first_round_py_aoti_compile_gets_a_worker_of_its_own():
    import run

    assert run.compiles_in_worker("py-aoti", "cold", 0)
    assert run.compiles_in_worker("py-aoti", "cold-once", 0)
    assert run.compiles_in_worker("py-aoti", "cached", 0)
    assert not run.compiles_in_worker("py-aoti", "reuse-only", 0)  # nothing compiles
    assert not run.compiles_in_worker("py-aoti", "cold", 1)  # a later round reuses
    assert not run.compiles_in_worker("py-eager", "cold", 0)
    assert run.compiles_in_worker("cpp-dispatch", "cold", 0)  # its own variant, in-process
    assert not run.compiles_in_worker("cpp-dispatch", "reuse-only", 0)
    assert not run.compiles_in_worker("cpp-aoti", "cold", 0)  # a separate C++ program times it
