"""Session fixtures of the route matrix: one AOTI artifact per zoo model, one model per
(route, model) opened through ``neml2.routes``, built on first use and shared by every
test of the session.

AOTI graphs come from the content-hashed cache in build/aoti-cache when an earlier
session built them (a cold compile of an implicit model takes minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _zoo import CASES

import neml2.routes

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "aoti-cache"


def compile_artifact(case, outdir: Path):
    """``neml2-compile`` of *case* with its Jacobian pairs and sub-batch shapes (CPU,
    float64; the Taylor input declares no [Settings]/example_batch_shape of its own)."""
    return neml2.routes.build_artifact(
        case.file,
        case.model,
        pairs=case.pairs,
        sub_batch=case.sub_batch,
        output_dir=outdir / case.name,
        cache_dir=CACHE,
    )


def open_case(route: str, case, artifact=None) -> neml2.routes.RouteModel:
    """*case* on *route* (``neml2.routes.open_model``); ``NEML2_ROUTES_JIT_BACKEND=eager``
    swaps Dynamo's eager backend in for py-jit's Inductor (tracing checked, minutes of
    Inductor codegen per implicit graph saved)."""
    import os

    backend = os.environ.get("NEML2_ROUTES_JIT_BACKEND", "inductor")
    return neml2.routes.open_model(
        route,
        case.file,
        case.model,
        sub_batch=case.sub_batch,
        artifact=artifact,
        jit_backend=backend,
        no_grad=True,  # the matrix compares values
    )


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    """``artifacts(model_name) -> CompileResult``, compiled once per session."""
    root = tmp_path_factory.mktemp("routes-artifacts")
    done: dict = {}

    def get(name: str):
        if name not in done:
            try:
                done[name] = compile_artifact(CASES[name], root)
            except Exception as e:  # remembered: every route of this model fails the same way
                done[name] = e
        if isinstance(done[name], Exception):
            raise done[name]
        return done[name]

    return get


@pytest.fixture(scope="session")
def route_models(artifacts):
    """``route_models(route, model) -> RouteModel``, one per pair and session."""
    made: dict = {}

    def get(route: str, name: str):
        key = (route, name)
        if key not in made:
            case = CASES[name]
            try:
                art = artifacts(name) if neml2.routes.route(route).artifact else None
                made[key] = open_case(route, case, art)
            except Exception as e:
                made[key] = e
        if isinstance(made[key], Exception):
            raise made[key]
        return made[key]

    return get


@pytest.fixture(scope="session")
def reference(route_models):
    """py-eager results, memoized per (model, op, batch)."""
    memo: dict = {}

    def get(model: str, op: str, n: int):
        key = (model, op, n)
        if key not in memo:
            case = CASES[model]
            ref = route_models("py-eager", model)
            x = case.inputs(n)
            if op == "forward":
                memo[key] = ref.forward(x)
            elif op == "jvp":
                memo[key] = ref.jvp(x, case.tangents(n))
            else:
                memo[key] = ref.jacobian(x)
        return memo[key]

    return get


# ---------------------------------------------------------------------- one check per cell
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect a matrix cell (test_routes.py) that another collected test checks the
    same way: test_jit_one_process.py's tests are the py-jit cells of their models."""

    def cell(item, name: str):
        return _cell_key(item) if getattr(item, "originalname", None) == name else None

    elsewhere = {cell(i, "test_py_jit_in_sequence") for i in items} - {None}
    twice = [i for i in items if cell(i, "test_route_matches_py_eager") in elsewhere]
    if twice:
        config.hook.pytest_deselected(items=twice)
        gone = set(map(id, twice))
        items[:] = [i for i in items if id(i) not in gone]


# ---------------------------------------------------------------------- the table
class Cell:
    """What one (route, model, op) test saw: its largest difference from py-eager
    relative to the compared tensor's scale (NaN once any side was not finite)."""

    def __init__(self):
        self.worst: float | None = None

    def see(self, diff: float) -> None:
        if self.worst is None or diff != diff or (self.worst == self.worst and diff > self.worst):
            self.worst = diff


#: (route, model, op) -> Cell, filled by the tests of this process
_SEEN: dict[tuple[str, str, str], Cell] = {}


def _cell_key(item):
    params = getattr(getattr(item, "callspec", None), "params", {})
    if {"route", "model", "op"} <= params.keys():
        return params["route"], params["model"], params["op"]
    return None


@pytest.fixture
def route_cell(request) -> Cell:
    """This test's cell of the table."""
    return _SEEN.setdefault(_cell_key(request.node), Cell())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    key = _cell_key(item)
    if key is None or (report.when != "call" and report.passed):
        return
    if hasattr(report, "wasxfail"):
        outcome = "gap (xfail)" if report.skipped else "FIXED? (xpass)"
    else:
        outcome = {"passed": "pass", "failed": "FAIL", "skipped": "skip"}[report.outcome]
    worst = _SEEN[key].worst if key in _SEEN else None
    # read by tests-integration/conftest.py, which prints the table (in pytest-xdist's
    # controlling process too: the property travels with the report)
    report.user_properties.append(
        ("route_cell", [*key, outcome, worst, neml2.routes.NAMES.index(key[0])])
    )
