"""Checks of the GPU run's CPU-side parts (benchmarks/gpu): options, the refusal without a
GPU, the time budgets, the step runner, the table and the plan. No compile, no GPU.

uv run --no-sync pytest benchmarks/gpu -q -p no:xdist
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gpu_routes  # noqa: E402
import gpu_run as G  # noqa: E402


# ---------------------------------------------------------------------- options
def test_defaults_cover_the_issue():
    a = G.parse_args([])
    assert a.steps == list(G.STEPS) and a.total == G.TOTAL_S
    assert sum(a.budgets.values()) + G.RESERVE_S <= a.total <= 600
    assert set(G.ROUTE_MODELS) == {"elasticity", "j2_isoharden", "chaboche"}
    assert G.ROUTES == ("py-eager", "py-jit", "py-aoti", "cpp-aoti", "cpp-dispatch")
    assert G.WORKLOADS == ("elasticity", "j2_radret", "perzyna", "chaboche2")
    assert G.BATCHES == (10_000, 100_000, 1_000_000)


def test_budget_option():
    a = G.parse_args(["--budget", "routes=60", "--budget", "suite=90.5"])
    assert a.budgets["routes"] == 60 and a.budgets["suite"] == 90.5
    assert a.budgets["env"] == G.BUDGETS["env"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--budget", "nope=3"],
        ["--budget", "routes=-1"],
        ["--budget", "routes=nan"],
        ["--budget", "routes=inf"],
        ["--budget", "routes"],
        ["--total", "0"],
        ["--total", "nan"],
        ["--steps", "bogus"],
        ["--prepare", "--dry-run"],
    ],
)
def test_bad_options_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        G.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


# ---------------------------------------------------------------------- refusal
def test_refusal_messages_are_one_line():
    no_gpu = {"python": "/x/python", "torch": "2.13.0", "cuda_build": "13.0", "available": False}
    msg = G.refusal(no_gpu)
    assert msg is not None and "\n" not in msg
    assert "torch.cuda.is_available() is False" in msg and "2.13.0" in msg and "/x/python" in msg
    cpu_only = {**no_gpu, "cuda_build": None}
    assert "CPU-only build" in G.refusal(cpu_only)
    broken = {"python": "/x/python", "error": "ModuleNotFoundError: No module named 'torch'"}
    assert "no usable torch" in G.refusal(broken) and "\n" not in G.refusal(broken)
    assert G.refusal({**no_gpu, "available": True}) is None


def test_cuda_state_of_a_python_without_torch(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 3\n")
    fake.chmod(0o755)
    state = G.cuda_state(str(fake))
    assert "exit 3" in state["error"] and "no torch here" in state["error"]
    assert G.refusal(state) is not None


def test_refused_without_a_gpu_nothing_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        G,
        "cuda_state",
        lambda py: {"python": py, "torch": "2.13.0", "cuda_build": "13.0", "available": False},
    )
    ran = []
    monkeypatch.setattr(G, "run_steps", lambda *a, **k: ran.append(1))
    rc = G.main(["--out", str(tmp_path / "res")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and not ran and not (tmp_path / "res").exists()
    assert len(err.splitlines()) == 1 and err.startswith("gpu_run: no CUDA device")


def test_the_script_refuses_without_a_gpu(tmp_path):
    """The real thing, through run.sh, with torch shown no GPU (CUDA_VISIBLE_DEVICES
    empty: the same on a machine that has one)."""
    r = subprocess.run(
        ["bash", str(HERE / "run.sh"), "--out", str(tmp_path / "res")],
        capture_output=True,
        text=True,
        env={
            "NEML2_GPU_PYTHON": sys.executable,
            "PATH": "/usr/bin:/bin",
            "CUDA_VISIBLE_DEVICES": "",
        },
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "torch.cuda.is_available() is False" in lines[0]
    assert not (tmp_path / "res").exists()


# ---------------------------------------------------------------------- time budgets
def test_step_timeout():
    # plenty of time: the step's own budget
    assert G.step_timeout(100, now=0, deadline=570, reserve=15) == 100
    # cut to what is left before the deadline, less the reserve
    assert G.step_timeout(100, now=500, deadline=570, reserve=15) == 55
    # under MIN_STEP_S left: not started
    assert G.step_timeout(100, now=550, deadline=570, reserve=15) is None
    assert G.step_timeout(100, now=600, deadline=570, reserve=15) is None


def test_steps_share_the_total(tmp_path):
    """A fake clock: each step takes its whole budget; the last ones are cut, then
    not run, and nothing runs past the total less the reserve."""
    now = [0.0]
    seen = []

    def fake_run(name, cmds, timeout, log, env=None, clock=None):
        seen.append((name, timeout))
        now[0] += timeout
        return G.StepResult(name, "pass", timeout, timeout)

    a = G.parse_args(["--out", str(tmp_path), "--total", "300", "--skip-env"])
    steps = G.plan(a, reference=False)
    orig = G.run_commands
    G.run_commands = fake_run
    try:
        results = G.run_steps(a, steps, 300.0, clock=lambda: now[0], say=lambda m: None)
    finally:
        G.run_commands = orig
    got = {r.name: r for r in results}
    assert got["env"].status == "pass" and "--skip-env" in got["env"].note
    assert seen[0] == ("probe", 30.0) and seen[1] == ("routes", 165.0)
    assert seen[2] == ("suite", 300 - G.RESERVE_S - 195.0)
    assert now[0] <= 300 - G.RESERVE_S
    # the same with less time: the suite is not started at all
    now[0], seen[:] = 0.0, []
    a = G.parse_args(["--out", str(tmp_path), "--total", "215", "--skip-env"])
    G.run_commands = fake_run
    try:
        results = G.run_steps(a, G.plan(a, False), 215.0, clock=lambda: now[0], say=lambda m: None)
    finally:
        G.run_commands = orig
    suite = next(r for r in results if r.name == "suite")
    assert suite.status == "not run" and "out of time" in suite.note


def test_a_failed_step_stops_what_needs_it(tmp_path, monkeypatch):
    def fake_run(name, cmds, timeout, log, env=None, clock=None):
        return G.StepResult(name, "fail" if name == "env" else "pass", 1.0, timeout, "boom")

    monkeypatch.setattr(G, "run_commands", fake_run)
    monkeypatch.setattr(G, "STAMP", tmp_path / "stamp.json")
    a = G.parse_args(["--out", str(tmp_path)])
    results = G.run_steps(a, G.plan(a, False), 1e9, say=lambda m: None)
    assert [r.status for r in results] == ["fail", "not run", "not run", "not run"]
    assert results[2].note == "env did not pass"


# ---------------------------------------------------------------------- the step runner
def test_run_commands_pass_fail_timeout(tmp_path):
    py = sys.executable
    ok = G.run_commands("s", [[py, "-c", "print('hi')"]], 30, tmp_path / "a.log")
    assert ok.status == "pass" and "hi" in (tmp_path / "a.log").read_text()
    bad = G.run_commands(
        "s",
        [[py, "-c", "print('last words'); raise SystemExit(3)"], [py, "-c", "print('never')"]],
        30,
        tmp_path / "b.log",
    )
    assert bad.status == "fail" and "exit 3" in bad.note and "last words" in bad.note
    assert "never" not in (tmp_path / "b.log").read_text()
    # a child of the command is killed with it (its process group)
    marker = tmp_path / "child-alive"
    child = f"import time; time.sleep(3); open({str(marker)!r}, 'w').write('x')"
    parent = (
        f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); "
        "time.sleep(60)"
    )
    t0 = time.monotonic()
    slow = G.run_commands("s", [[py, "-c", parent]], 0.5, tmp_path / "c.log")
    assert slow.status == "timeout" and time.monotonic() - t0 < 10
    time.sleep(3.5)
    assert not marker.exists()
    missing = G.run_commands("s", [["/nonexistent/program"]], 5, tmp_path / "d.log")
    assert missing.status == "fail"


# ---------------------------------------------------------------------- the table
def _row(side, w, route, b, metric, value, status="ok"):
    return {
        "side": side,
        "workload": w,
        "route": route,
        "batch": str(b),
        "metric": metric,
        "value": value,
        "status": status,
        "note": "",
    }


def _suite_rows(reference: bool) -> list[dict]:
    rows = []
    for w in G.WORKLOADS:
        for route in G.SUITE_ROUTES:
            for b in G.BATCHES:
                rows.append(_row("ours", w, route, b, "eval_points_per_s", 2e7))
                if reference:
                    rows.append(_row("reference", w, route, b, "eval_points_per_s", 1e7))
                    rows.append(
                        _row(
                            "ours", w, route, b, "agreement_max_rel:eval:reference-py-eager", 1e-15
                        )
                    )
                if route != "py-eager":
                    rows.append(
                        _row("ours", w, route, b, "agreement_max_rel:eval:ours-py-eager", 2e-16)
                    )
    return rows


def _cells(status="pass", worst=1e-16):
    return [
        {
            "route": r,
            "model": m,
            "op": op,
            "status": status,
            "worst": worst,
            "tol": 1e-10,
            "note": "" if status == "pass" else "n=1 out/stress: 1 > 1e-10",
        }
        for m in G.ROUTE_MODELS
        for r in G.ROUTES
        for op in G.OPS
    ]


def _passed(names=G.STEPS):
    return [G.StepResult(n, "pass", 1.0, 10.0) for n in names]


PROBE = {
    "torch": "2.11.0+cu130",
    "torch_cuda": "13.0",
    "locked_torch": "2.13.0",
    "gpu": {"gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
    "nvcc_version": "V13.0",
    "torch_note": "torch 2.11.0+cu130 is not the lock's 2.13.0",
}


def test_table_all_pass_offline(tmp_path):
    text, ok = G.write_table(tmp_path, _passed(), _cells(), _suite_rows(False), PROBE, False)
    assert ok, text
    assert (tmp_path / "table.md").read_text() == text
    assert "NVIDIA H100" in text and "2.11.0+cu130" in text and "not the lock's" in text
    assert text.count(G.OFFLINE) >= len(G.WORKLOADS) * len(G.SUITE_ROUTES) * len(G.BATCHES)
    assert "– (no reference)" in text  # our py-eager has nothing to be compared with
    assert "2.0e-16 (vs ours-py-eager)" in text
    assert "pass 1.0e-16" in text and "Everything passed." in text


def test_table_with_reference_has_ratios(tmp_path):
    text, ok = G.write_table(tmp_path, _passed(), _cells(), _suite_rows(True), PROBE, True)
    assert ok and "2.00x" in text and G.OFFLINE not in text


@pytest.mark.parametrize("bad", [math.nan, math.inf, 2e-5])
def test_table_agreement_fails_on_nan_inf_and_large(tmp_path, bad):
    rows = _suite_rows(True)
    target = next(r for r in rows if r["metric"] == "agreement_max_rel:eval:ours-py-eager")
    target["value"] = bad
    text, ok = G.write_table(tmp_path, _passed(), _cells(), rows, PROBE, True)
    assert not ok and "✗" in text and "Not everything passed." in text


@pytest.mark.parametrize("worst", [math.nan, math.inf, 1e-3])
def test_table_route_cells_fail_on_nan_inf_and_large(tmp_path, worst):
    cells = _cells()
    cells[0] = {**cells[0], "worst": worst}
    text, ok = G.write_table(tmp_path, _passed(), cells, _suite_rows(False), PROBE, False)
    assert not ok and "FAIL" in text


def test_table_failed_and_not_run_cells(tmp_path):
    steps = [
        G.StepResult("env", "pass", 1, 10),
        G.StepResult("probe", "pass", 1, 10),
        G.StepResult("routes", "timeout", 165, 165, "killed after 165 s"),
        G.StepResult("suite", "not run", 0, 180, "out of time"),
    ]
    cells = _cells()[:5]  # the routes step ended early
    cells[1] = {**cells[1], "status": "error", "worst": None, "note": "RuntimeError: boom"}
    text, ok = G.write_table(tmp_path, steps, cells, [], None, False)
    assert not ok
    assert "not run (routes timeout)" in text and "not run (suite not run)" in text
    assert "error" in text and "RuntimeError: boom" in text
    assert "GPU not probed" in text and "| routes | timeout |" in text


def test_suite_cell_statuses():
    rows = _suite_rows(False)
    failed = next(r for r in rows if r["route"] == "py-aoti" and r["metric"] == "eval_points_per_s")
    failed.update(status="failed", value=None)
    rows = [r for r in rows if not (r["workload"] == "perzyna" and r["route"] == "py-aoti")]
    lines = G.suite_cells(rows, reference=False, ran=None)
    by = {(w, r, b): (o, ag, ok) for w, r, b, o, _ref, _ra, ag, ok in lines}
    assert by[(failed["workload"], "py-aoti", int(failed["batch"]))][0] == "failed"
    assert by[("perzyna", "py-aoti", 10_000)] == ("missing", "missing", False)
    assert by[("elasticity", "py-eager", 10_000)][2]


def test_read_cells_and_rows(tmp_path):
    p = tmp_path / "routes.jsonl"
    p.write_text(json.dumps({"route": "py-eager"}) + "\n" + '{"torn')
    assert G.read_cells(p) == [{"route": "py-eager"}]
    assert G.read_cells(tmp_path / "none.jsonl") == []
    csv_path = tmp_path / "results.csv"
    csv_path.write_text(
        "side,workload,route,batch,metric,value,status,note\nours,e,r,1,m,,failed,\n"
    )
    assert G.read_rows(csv_path)[0]["value"] is None


# ---------------------------------------------------------------------- the plan
def test_dry_run_prints_the_plan(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(G, "cuda_state", lambda py: pytest.fail("a dry run asks no GPU"))
    assert G.main(["--dry-run", "--out", str(tmp_path / "res")]) == 0
    text = capsys.readouterr().out
    assert not (tmp_path / "res").exists()
    for want in (
        "[env] budget 180 s",
        "--no-deps --no-index",
        "cmake.define.NEML2_BUILD_EAGER=OFF",
        "[probe] budget 30 s",
        "gpu_routes.py --device cuda --models elasticity j2_isoharden chaboche",
        "--routes py-eager py-jit py-aoti cpp-aoti cpp-dispatch",
        "run.py --device cuda",
        "--workloads elasticity j2_radret perzyna chaboche2 --routes py-eager py-aoti",
        "--batches 10000 100000 1000000",
        "--max-minutes 2.50",
        f"torch pinned by uv.lock: {G.locked_torch()}",
    ):
        assert want in text, want


def test_dry_run_through_the_script():
    r = subprocess.run(
        ["bash", str(HERE / "run.sh"), "--dry-run", "--steps", "routes"],
        capture_output=True,
        text=True,
        env={"NEML2_GPU_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "[routes]" in r.stdout and "[suite]" not in r.stdout


def test_suite_command_is_paced_and_reference_only_when_ready(tmp_path):
    a = G.parse_args(["--out", str(tmp_path)])
    cmd = G.suite_command(a, 120.0, reference=False)
    assert cmd[cmd.index("--max-minutes") + 1] == "1.50"
    assert cmd[cmd.index("--sides") + 1 : cmd.index("--workloads")] == ["ours"]
    assert "--reference" not in cmd  # run.py would try to create the environment
    both = G.suite_command(a, 120.0, reference=True)
    assert both[both.index("--sides") + 1 : both.index("--workloads")] == ["ours", "reference"]


def test_locked_torch(tmp_path):
    lock = tmp_path / "uv.lock"
    lock.write_text('[[package]]\nname = "torch"\nversion = "2.13.0"\nsource = {}\n')
    assert G.locked_torch(lock) == "2.13.0"
    assert G.locked_torch(tmp_path / "missing.lock") is None


def test_env_step_skips_an_install_already_done(tmp_path, monkeypatch):
    monkeypatch.setattr(G, "STAMP", tmp_path / "stamp.json")
    a = G.parse_args(["--out", str(tmp_path)])
    assert G.env_step(a).done == ""
    (tmp_path / "stamp.json").write_text(json.dumps(G.stamp_json()))
    assert "earlier run" in G.env_step(a).done


def test_bundle_is_few_files(tmp_path):
    out = tmp_path / "res"
    (out / "suite").mkdir(parents=True)
    for name in ("table.md", "steps.json", "gpu_run.log", "suite/results.csv"):
        (out / name).write_text("x")
    G.bundle(out, tmp_path / "OUT")
    names = sorted(p.name for p in (tmp_path / "OUT").iterdir())
    assert names == ["gpu_run.log", "results.tar.gz", "steps.json", "table.md"]


# ---------------------------------------------------------------------- gpu_routes
def test_routes_judge_batch():
    f64 = torch.float64
    want = {"out/y": torch.tensor([1.0, 2.0], dtype=f64), "J/y/x": torch.ones(2, dtype=f64)}
    scales = {"out/y": 2.0, "J/y/x": 1.0}
    st, worst, note = gpu_routes.judge_batch(1, dict(want), want, scales, 1e-10, 0.0)
    assert st == "pass" and worst == 0.0
    got = {"out/y": torch.tensor([1.0, 2.0 + 1e-6], dtype=f64)}
    st, worst, _ = gpu_routes.judge_batch(1, got, want, scales, 1e-10, 0.0)
    assert st == "FAIL" and worst == pytest.approx(5e-7)
    for bad in (math.nan, math.inf):
        st, worst, _ = gpu_routes.judge_batch(
            1, {"out/y": torch.tensor([1.0, bad], dtype=f64)}, want, scales, 1e-10, 1.0
        )
        assert st == "FAIL" and math.isnan(worst)
    st, _, note = gpu_routes.judge_batch(1, {"out/z": want["out/y"]}, want, scales, 1, 1)
    assert st == "FAIL" and "missing ['out/y']" in note
    # a NaN seen in an earlier batch stays the worst
    assert math.isnan(gpu_routes.worse(math.nan, 1.0))
    assert gpu_routes.worse(1e-3, 1e-9) == 1e-3


def test_routes_order_and_tolerance():
    order = gpu_routes.cell_order(["a", "b"], gpu_routes.ROUTES)
    assert order[:2] == [("py-eager", "a"), ("py-eager", "b")]
    assert order[2:5] == [("py-aoti", "a"), ("cpp-aoti", "a"), ("cpp-dispatch", "a")]
    assert order[-2:] == [("py-jit", "a"), ("py-jit", "b")]
    assert gpu_routes.tolerance("py-jit", False) == (1e-10, 1e-12)
    assert gpu_routes.tolerance("py-aoti", True) == (1e-6, 0.0)


def test_routes_driver_on_the_cpu(tmp_path, monkeypatch):
    """The driver end to end on py-eager of elasticity with --device cpu (no compile),
    with another module named as one of the matrix's (``_zoo``) left as it was."""
    import types

    other = types.ModuleType("_zoo")
    monkeypatch.setitem(sys.modules, "_zoo", other)
    out = tmp_path / "cells.jsonl"
    rc = gpu_routes.main(
        ["--device", "cpu", "--models", "elasticity", "--routes", "py-eager", "--out", str(out)]
    )
    cells = G.read_cells(out)
    assert rc == 0, cells
    assert [c["op"] for c in cells] == ["forward", "jvp", "jacobian"]
    assert all(c["status"] == "pass" and c["worst"] <= 1e-15 for c in cells)
    assert sys.modules["_zoo"] is other and "_gaps" not in sys.modules


# ---------------------------------------------------------------------- run.py's git state
def test_run_py_takes_a_carried_git_state(tmp_path, monkeypatch):
    sys.path.insert(0, str(G.SUITE))
    import run

    state = tmp_path / "git-state.json"
    state.write_text(json.dumps({"commit": "abc1234", "dirty": ["x.py"]}))
    monkeypatch.setenv("NEML2_BENCH_GIT_STATE", str(state))
    assert run.git_state(tmp_path) == {"commit": "abc1234", "dirty": ["x.py"]}
    state.write_text("{}")
    with pytest.raises(SystemExit, match="NEML2_BENCH_GIT_STATE"):
        run.git_state(tmp_path)
