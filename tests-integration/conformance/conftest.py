"""Conformance run: makes ``_cases`` importable (the pass count per folder is printed by
../conftest.py, which pytest-xdist's controlling process loads too). The compiled-route
run (test_conformance_routes.py) is collected only when NEML2_CONFORMANCE_ROUTES names
its routes (``uv run nox -s conformance_routes``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

collect_ignore = (
    [] if os.environ.get("NEML2_CONFORMANCE_ROUTES") else ["test_conformance_routes.py"]
)
