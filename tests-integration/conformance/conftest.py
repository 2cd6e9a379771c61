"""Conformance run: makes ``_cases`` importable (the pass count per folder is printed by
../conftest.py, which pytest-xdist's controlling process loads too)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
