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
    """A tiny run of our py-eager elasticity produces the CSV, the table and the plots."""
    out = tmp_path / "res"
    cmd = [sys.executable, str(HERE / "run.py"), "--sides", "ours", "--workloads",
           "elasticity", "--routes", "py-eager", "--batches", "1", "4", "--steps", "3",
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
