"""Session-wide rules of the integration run.

With ``NEML2_FAIL_ON_SKIP=1`` (set by ``nox -s integration``, which CI runs) a skipped
test fails the run: in CI a missing prerequisite is a failure, not a skip that reads as
a pass. Skips for a missing GPU are the one exception (no accelerator is lent to CI).

Tests marked ``slow_compile`` (the cold AOTI compiles of implicit models, minutes
each) are opt-in: without ``NEML2_TEST_AOTI_IMPLICIT=1`` they are deselected (pytest
counts them as deselected, which is what they are), not skipped.

``nox -s integration`` runs on two pytest-xdist workers (``-n 2 --dist loadgroup``). A
test that uses a module- or session-scoped fixture of ours (a compiled artifact, a
loaded model) is kept on one worker with the other tests of its file, so the fixture
is built once; the route matrix groups its cells by model (``routes/test_routes.py``);
every other test goes to whichever worker is free.
"""

from __future__ import annotations

import os

import pytest

#: words in a skip reason that mark a test needing hardware CI does not have
HARDWARE = ("cuda", "gpu")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow_compile: a cold AOTI compile of minutes (NEML2_TEST_AOTI_IMPLICIT=1)"
    )
    config.addinivalue_line(
        "markers", "xdist_group(name): tests pytest-xdist runs on one worker (--dist loadgroup)"
    )


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether *item* uses a module- or session-scoped fixture defined in our tests (not
    one of pytest's own, e.g. ``tmp_path_factory``)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        d.scope in ("module", "package", "session")
        and not getattr(d.func, "__module__", "_pytest").startswith(("_pytest", "xdist"))
        for defs in info.name2fixturedefs.values()
        for d in defs
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.path.name))
    if os.environ.get("NEML2_TEST_AOTI_IMPLICIT") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow_compile")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow_compile")]


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
