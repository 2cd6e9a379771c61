"""Session-wide rules of the integration run.

The CI rule (``NEML2_FAIL_ON_SKIP=1``: a skip, xfail or xpass fails the run, except
that of a test marked ``needs_gpu`` on a machine without CUDA) and the markers
``needs_gpu`` and ``needs_sibling`` are the pytest plugin
``tools/pytest-plugins/neml2_fail_on_skip.py``, which every nox session running pytest
loads with ``-p``; this conftest loads it too, so a run by hand follows the same rule.

Tests marked ``slow_compile`` (the cold AOTI compiles of implicit models, minutes
each) are opt-in: without ``NEML2_TEST_AOTI_IMPLICIT=1`` they are deselected (pytest
counts them as deselected, which is what they are), not skipped.

``nox -s integration`` runs on two pytest-xdist workers (``-n 2``). The tests of one file
run on one worker, so a module- or session-scoped fixture (a compiled artifact, a loaded
model) is built once; the route matrix's cells go by model instead
(:func:`pytest_xdist_make_scheduler`), so its six models' compiles share the two workers.
The matrix's table (outcome and largest difference per cell) is printed at the end of the
run from the reports, which carry it from the workers (``routes/conftest.py``).
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

#: tools/pytest-plugins: the CI rule, in no wheel (nox passes ``-p neml2_fail_on_skip``
#: with this folder on PYTHONPATH; a plugin already loaded is not loaded twice)
PLUGINS = Path(__file__).resolve().parents[1] / "tools" / "pytest-plugins"
if str(PLUGINS) not in sys.path:
    sys.path.insert(0, str(PLUGINS))
pytest_plugins = ["neml2_fail_on_skip"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow_compile: a cold AOTI compile of minutes (NEML2_TEST_AOTI_IMPLICIT=1)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("NEML2_TEST_AOTI_IMPLICIT") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow_compile")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow_compile")]


# ---------------------------------------------------------------------- pytest-xdist
#: a cell of the route matrix: ...::test_route_matches_py_eager[<route>-<model>-<op>],
#: every route named ``xx-yyyy``, models without hyphens
_ROUTE_CELL = re.compile(r"::test_route_matches_py_eager\[[a-z]+-[a-z]+-(?P<model>[^\]-]+)-\w+\]$")


#: a conformance case: ...conformance/test_conformance.py::test_case[<case>]
_CONFORMANCE_CASE = re.compile(r"conformance/test_conformance\.py::test_case\[")


def route_matrix_scope(nodeid: str) -> str | None:
    """The work unit of a route-matrix cell: its model (one compile per model and worker);
    of a conformance case: the case (the cases share nothing, and a few crystal cases
    take minutes: one worker holding them all ran alone at the end); None for any other
    test."""
    m = _ROUTE_CELL.search(nodeid)
    if m:
        return f"route matrix: {m['model']}"
    return nodeid if _CONFORMANCE_CASE.search(nodeid) else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scope scheduling (a file's tests on one worker) with the route
    matrix split by model. (``--dist loadgroup`` would do it with ``xdist_group`` marks,
    but pytest-xdist 3.8 cannot rename the tests of pytest 9, so its groups are lost.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByFileAndModel(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return route_matrix_scope(nodeid) or super()._split_scope(nodeid)

    return ByFileAndModel(config, log)


# ---------------------------------------------------------------------- the route table
#: (route, model, op) -> (outcome, largest difference, route order), from the reports
ROUTE_TABLE: dict[tuple[str, str, str], tuple[str, float | None, int]] = {}


#: conformance case -> whether it passed (conformance/test_conformance.py records it)
CONFORMANCE: dict[str, bool] = {}
#: (route, case) -> (passed, listed in the route's ledger) (test_conformance_routes.py)
CONFORMANCE_ROUTES: dict[tuple[str, str], tuple[bool, bool]] = {}


def pytest_runtest_logreport(report) -> None:
    for name, value in report.user_properties:
        if name == "route_cell":
            route, model, op, outcome, worst, order = value
            ROUTE_TABLE[(route, model, op)] = (outcome, worst, order)
        elif name == "conformance_case":
            case, passed = value
            CONFORMANCE[case] = passed
        elif name == "conformance_route_case":
            route, case, passed, listed = value
            CONFORMANCE_ROUTES[(route, case)] = (passed, listed)


def pytest_terminal_summary(terminalreporter) -> None:
    _conformance_summary(terminalreporter)
    _conformance_routes_summary(terminalreporter)
    _route_table(terminalreporter)


def _conformance_summary(tr) -> None:
    """The conformance cases passing on py-eager, per folder (two levels name a physics
    domain: ``models/common/x.i`` counts under ``models/common``)."""
    if not CONFORMANCE:
        return
    passed, total = Counter(), Counter()
    for case, ok in CONFORMANCE.items():
        folder = "/".join(case.split("/")[:2])
        total[folder] += 1
        passed[folder] += ok
    tr.section("conformance: cases passing on py-eager")
    for folder in sorted(total):
        tr.write_line(f"{folder:40s} {passed[folder]:4d} / {total[folder]:4d}")
    tr.write_line(f"{'all':40s} {sum(passed.values()):4d} / {sum(total.values()):4d}")


def _conformance_routes_summary(tr) -> None:
    """Per route of test_conformance_routes.py: cases passed, ledgered (listed and still
    failing) and failed (unlisted and failing, or listed and passing)."""
    if not CONFORMANCE_ROUTES:
        return
    counts: dict[str, Counter] = {}
    for (route, _), (passed, listed) in CONFORMANCE_ROUTES.items():
        c = counts.setdefault(route, Counter())
        c["cases"] += 1
        c["passed"] += passed
        c["ledgered"] += listed and not passed
        c["failed"] += passed == listed  # unlisted failing, or listed passing
    tr.section("conformance on the compiled routes: passed / ledgered / failed")
    for route, c in counts.items():
        tr.write_line(
            f"{route:10s} {c['passed']:4d} passed  {c['ledgered']:4d} ledgered  "
            f"{c['failed']:4d} failed  of {c['cases']:4d} cases"
        )


def _route_table(terminalreporter) -> None:
    """The route matrix as a table in the log: route x model, per operation the outcome
    and the largest difference from py-eager relative to each tensor's scale."""
    if not ROUTE_TABLE:
        return
    ops = ("forward", "jvp", "jacobian")
    order = {r: o for (r, _, _), (_, _, o) in ROUTE_TABLE.items()}
    rows = sorted({(r, m) for r, m, _ in ROUTE_TABLE}, key=lambda rm: (rm[1], order[rm[0]]))

    def text(key) -> str:
        if key not in ROUTE_TABLE:
            return "-"
        outcome, worst, _ = ROUTE_TABLE[key]
        return outcome if worst is None else f"{outcome} {worst:.1e}"

    head = ("route", "model", *ops)
    table = [head] + [(r, m, *(text((r, m, o)) for o in ops)) for r, m in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    terminalreporter.section("route matrix: outcome, max |route - py-eager| / scale")
    for row in table:
        terminalreporter.write_line("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
