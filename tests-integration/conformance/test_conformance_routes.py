"""The reference suite on the compiled routes: every case, its models on py-jit or py-aoti.

Each case runs its own ``[Drivers]`` checks, as on py-eager (test_conformance.py), with
the models its drivers ask for opened on the route by ``neml2.routes.open_model``
(_cases.on_route): py-jit is ``neml2.compile`` of the py-eager model (Inductor; Dynamo's
eager backend with ``NEML2_ROUTES_JIT_BACKEND=eager``), py-aoti the ``AOTIModel`` of the
artifact ``neml2-compile`` makes of the case's file as shipped, with every Jacobian block
(``-d :``). The same gold, the same tolerances. One ledger per route,
``ledgers/<route>.toml``, with the rules of py-eager's: a listed case that passes fails
the run, every entry has its reason.

Opt-in (``uv run nox -s conformance_routes``): ``NEML2_CONFORMANCE_ROUTES=py-jit,py-aoti``
selects the routes (this module is not collected without it, see conftest.py) and
``NEML2_CONFORMANCE_SHARD=K/N`` runs the K-th of N shards (cases in folder order, every
N-th from the K-th, K from 1); AOTI graphs come from the content-hashed cache in
build/aoti-cache and Inductor's from build/inductor-cache, so a shard run again, or
after another, resumes where the compiles stopped. The session prints per route:
passed / ledgered / failed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cases import FOLDER, LEDGERS, case_files, case_id, read_ledger, run_case

import neml2.routes

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "aoti-cache"


def selected_routes() -> list[str]:
    """``NEML2_CONFORMANCE_ROUTES``: typed routes other than py-eager (it has its own test)."""
    text = os.environ.get("NEML2_CONFORMANCE_ROUTES", "")
    chosen = [r.name for r in neml2.routes.parse(text, what="NEML2_CONFORMANCE_ROUTES")]
    if not text.strip() or text.strip() == "all":
        chosen = [r.name for r in neml2.routes.ROUTES if r.typed and r.name != "py-eager"]
    bad = [r for r in chosen if r == "py-eager" or not neml2.routes.route(r).typed]
    if bad:
        raise pytest.UsageError(
            f"NEML2_CONFORMANCE_ROUTES: {bad} cannot run the suite's drivers here (py-eager "
            "is test_conformance.py; the C++ routes have no typed model)"
        )
    return chosen


def shard(files: list[Path]) -> list[Path]:
    """The cases of ``NEML2_CONFORMANCE_SHARD=K/N`` (all without it)."""
    text = os.environ.get("NEML2_CONFORMANCE_SHARD", "").strip()
    if not text:
        return files
    try:
        k, n = (int(v) for v in text.split("/"))
        if not 1 <= k <= n:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(
            f"NEML2_CONFORMANCE_SHARD={text!r}: expected K/N with 1 <= K <= N"
        ) from None
    return files[k - 1 :: n]


def ledger_path(route: str) -> Path:
    return LEDGERS / f"{route}.toml"


ROUTES = selected_routes()
FILES = shard(case_files())
LEDGER_ENTRIES = {r: read_ledger(ledger_path(r)) for r in ROUTES}


def _open_kw(route: str) -> dict:
    if route == "py-jit":
        return {"jit_backend": os.environ.get("NEML2_ROUTES_JIT_BACKEND", "inductor")}
    return {"pairs": [":"], "cache_dir": CACHE}


@pytest.mark.parametrize(
    ("route", "path"),
    [(r, p) for r in ROUTES for p in FILES],
    ids=[f"{r}:{case_id(p)}" for r in ROUTES for p in FILES],
)
def test_case_on_route(record_property, route, path):
    assert FOLDER.is_dir()
    key = case_id(path)
    outcome = run_case(path, route, **_open_kw(route))
    listed = LEDGER_ENTRIES[route].get(key)
    # ../conftest.py's summary: passed / ledgered / failed per route
    record_property("conformance_route_case", [route, key, outcome.passed, listed is not None])
    if listed is None:
        assert outcome.passed, (
            f"{key} fails on {route} and is not in ledgers/{route}.toml: {outcome.reason}\n"
            f"{outcome.output[-4000:]}"
        )
    else:
        assert not outcome.passed, (
            f"{key} passes on {route} now: remove it from ledgers/{route}.toml (it was "
            f"listed as: {listed})"
        )
