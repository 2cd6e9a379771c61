"""Conformance run: makes ``_cases`` importable (the pass count per folder is printed by
../conftest.py, which pytest-xdist's controlling process loads too). The compiled-route
run (test_conformance_routes.py) is collected only when NEML2_CONFORMANCE_ROUTES names
its routes (``uv run nox -s conformance_routes``), the graph-capture check
(test_graph_capture.py) only when NEML2_CONFORMANCE_CAPTURE is set (``uv run nox -s
conformance_capture``): each runs hours over the whole suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _opt_in import OPT_IN  # noqa: E402 (after the path insert)

collect_ignore = [f for f, var in OPT_IN.items() if not os.environ.get(var)]
