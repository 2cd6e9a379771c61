"""Checks of the benchmark harness itself (not of performance).

uv run --no-sync pytest benchmarks/suite/test_suite.py -q
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _agreement  # noqa: E402
from _agreement import QUANTITIES  # noqa: E402
from _measure import Stepper, split_lag, summary  # noqa: E402
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
    import json

    meta = json.loads((out / "metadata.json").read_text())
    assert meta["git_dirty"] == bool(meta["git_dirty_paths"])
    if meta["git_dirty"]:
        assert "a dirty tree" in (out / "README.md").read_text()


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
