"""Session-wide rules of the integration run.

With ``NEML2_FAIL_ON_SKIP=1`` (set by ``nox -s integration``, which CI runs) a skipped
test fails the run: in CI a missing prerequisite is a failure, not a skip that reads as
a pass. Skips for a missing GPU are the one exception (no accelerator is lent to CI).
"""

from __future__ import annotations

import os

import pytest

#: words in a skip reason that mark a test needing hardware CI does not have
HARDWARE = ("cuda", "gpu")


def allowed_skip(reason: str) -> bool:
    """Whether a skip with *reason* may pass in CI (it needs a GPU)."""
    return any(word in reason.lower() for word in HARDWARE)


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("NEML2_FAIL_ON_SKIP") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    bad = [(r.nodeid, _reason(r)) for r in skipped if not allowed_skip(_reason(r))]
    if bad:
        lines = "\n".join(f"  {nodeid}: {reason}" for nodeid, reason in bad)
        print(
            f"\nNEML2_FAIL_ON_SKIP: {len(bad)} test(s) skipped for a missing prerequisite:\n{lines}"
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
