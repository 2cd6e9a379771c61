"""Conformance run: makes ``_cases`` importable and prints the pass count per folder."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def _folder(case: str) -> str:
    """``models/common/x.i`` -> ``models/common``; two levels name a physics domain."""
    return "/".join(case.split("/")[:2])


#: case -> whether it passed, from the reports (in pytest-xdist's controlling process
#: too: test_case records it as a user property, which travels with the report)
RESULTS: dict[str, bool] = {}


def pytest_runtest_logreport(report) -> None:
    for name, value in report.user_properties:
        if name == "conformance_case":
            case, passed = value
            RESULTS[case] = passed


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not RESULTS:
        return
    passed, total = Counter(), Counter()
    for case, ok in RESULTS.items():
        total[_folder(case)] += 1
        passed[_folder(case)] += ok
    tr = terminalreporter
    tr.section("conformance: cases passing on py-eager")
    for folder in sorted(total):
        tr.write_line(f"{folder:40s} {passed[folder]:4d} / {total[folder]:4d}")
    tr.write_line(f"{'all':40s} {sum(passed.values()):4d} / {sum(total.values()):4d}")
