"""The CI rule of every pytest run: a test that neither passes nor fails fails the run.

With ``NEML2_FAIL_ON_SKIP=1`` (every nox session that runs pytest sets it) these
outcomes fail the run, each listed at the end of the output:

* a skip (``pytest.skip``, ``skipif``, ``importorskip``, in a test, a fixture or at
  module level): in CI a missing prerequisite is a failure, not a skip that reads as a
  pass;
* an xfail, strict or not, and an xpass: an expected failure is a known gap the run
  would otherwise report as green (a strict xfail that passes already fails the run).

The one exemption is hardware CI does not have: a test marked ``needs_gpu`` may skip
or xfail on a machine whose torch sees no CUDA device (``torch.cuda.is_available()``
is False, or torch is not installed). The words of a skip's reason exempt nothing.

A test that needs a workspace package its own package does not depend on is marked
``needs_sibling``: the package's isolated ``tests`` session deselects it
(``-m "not needs_sibling"``; pytest counts it as deselected) and the ``integration``
session, where every package is installed, runs it.

Not part of any wheel: nox puts this folder on PYTHONPATH and loads the module with
``-p neml2_fail_on_skip``; tests-integration/conftest.py loads it for runs by hand.
Without the variable it only registers the two markers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

ENV = "NEML2_FAIL_ON_SKIP"
GPU = "needs_gpu"
SIBLING = "needs_sibling"

MARKERS = (
    f"{GPU}: needs a CUDA device; under {ENV}=1 its skip or xfail passes only where torch "
    "sees no CUDA device (tools/pytest-plugins/neml2_fail_on_skip.py)",
    f"{SIBLING}: needs a workspace package its own package does not depend on; deselected "
    "in the package's isolated nox session, run by the integration session",
)

#: the attribute a test report carries when its test is marked needs_gpu (it travels
#: with the report from a pytest-xdist worker)
_GPU_ATTR = "neml2_needs_gpu"


@dataclass(frozen=True)
class Outcome:
    """A test (or a collected module) that neither passed nor failed."""

    nodeid: str
    kind: str  # "skipped", "xfailed" or "xpassed"
    reason: str
    needs_gpu: bool


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def cuda_available() -> bool:
    """Whether this machine has a CUDA device torch can use (False without torch)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def classify(report) -> Outcome | None:
    """The outcome the rule counts of a test or collect *report*, or None (a pass or a
    failure: pytest judges those itself)."""
    if hasattr(report, "wasxfail"):
        if report.skipped:
            kind = "xfailed"
        elif report.passed:
            kind = "xpassed"
        else:
            return None
        reason = str(report.wasxfail)
    elif report.skipped:
        kind, reason = "skipped", _skip_reason(report)
    else:
        return None
    return Outcome(report.nodeid, kind, reason, bool(getattr(report, _GPU_ATTR, False)))


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def violations(outcomes: list[Outcome], has_cuda) -> list[Outcome]:
    """The *outcomes* that fail the run: all but those of ``needs_gpu`` tests on a
    machine without CUDA (*has_cuda*, called only when such an outcome is there)."""
    bad = [o for o in outcomes if not o.needs_gpu]
    gpu = [o for o in outcomes if o.needs_gpu]
    if gpu and has_cuda():
        bad += gpu
    return sorted(bad, key=lambda o: o.nodeid)


# ---------------------------------------------------------------------- hooks
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(Rule(config), "neml2-fail-on-skip-rule")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    if item.get_closest_marker(GPU) is not None:
        setattr(report, _GPU_ATTR, True)
    return report


class Rule:
    """Records the outcomes of one run (on a pytest-xdist controller: its workers'
    reports) and judges them at its end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.outcomes: list[Outcome] = []
        self.bad: list[Outcome] = []

    def _record(self, report) -> None:
        outcome = classify(report)
        if outcome is not None:
            self.outcomes.append(outcome)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._record(report)  # a module skipped as a whole

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not enabled() or hasattr(self.config, "workerinput"):  # a worker: the controller judges
            return
        self.bad = violations(self.outcomes, cuda_available)
        if self.bad and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.bad:
            return
        tr = terminalreporter
        tr.section(f"{ENV}: {len(self.bad)} outcome(s) fail the run", red=True)
        for o in self.bad:
            tr.write_line(f"{o.kind.upper()} {o.nodeid}: {o.reason}")
        tr.write_line(
            f"(a skip, xfail or xpass fails the run under {ENV}=1, except that of a test "
            f"marked {GPU} on a machine without CUDA; a test needing a sibling package is "
            f"marked {SIBLING}: docs/development.md)"
        )
