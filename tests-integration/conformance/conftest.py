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


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    module = sys.modules.get("test_conformance")
    results = getattr(module, "RESULTS", None)
    if not results:
        return
    passed, total = Counter(), Counter()
    for case, ok in results.items():
        total[_folder(case)] += 1
        passed[_folder(case)] += ok
    tr = terminalreporter
    tr.section("conformance: cases passing on py-eager")
    for folder in sorted(total):
        tr.write_line(f"{folder:40s} {passed[folder]:4d} / {total[folder]:4d}")
    tr.write_line(f"{'all':40s} {sum(passed.values()):4d} / {sum(total.values()):4d}")
