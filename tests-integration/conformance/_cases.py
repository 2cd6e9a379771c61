"""Run one conformance input (a reference-library test file) and report its outcome.

A case is one ``.i`` file under the conformance folder. Its checks are the
``[Drivers]`` blocks of a checking type (``ModelUnitTest``,
``TransientRegression``, ``Verification``); the case passes when every one of
them runs and passes. Anything else (an error while loading or running, a
failed comparison, a file with no check at all) is a failure with a one-line
reason, which is what the ledger records.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import _fixtures  # noqa: F401  (registers the test-only models the reference inputs name)

import neml2.drivers  # noqa: F401  (registers the drivers)
from neml2.models import load_input

REPO = Path(__file__).resolve().parents[2]
#: The conformance data: the repository's copy (data/PROVENANCE.md); NEML2_CONFORMANCE_DIR
#: points elsewhere.
FOLDER = Path(os.environ.get("NEML2_CONFORMANCE_DIR", Path(__file__).resolve().parent / "data"))
LEDGER = Path(__file__).resolve().parent / "ledger.toml"
CHECKS = ("ModelUnitTest", "TransientRegression", "Verification")


def case_files() -> list[Path]:
    """Every ``.i`` file of the conformance folder (empty if the folder is absent)."""
    return sorted(FOLDER.rglob("*.i")) if FOLDER.is_dir() else []


def case_id(path: Path) -> str:
    """The case's name: its path relative to the conformance folder, with ``/``."""
    return path.relative_to(FOLDER).as_posix()


def read_ledger(path: Path = LEDGER) -> dict[str, str]:
    """The ledger: ``{case id: reason it does not pass yet}``.

    The file is TOML with one table, ``[failing]``, mapping each case id to a
    non-empty reason. Anything else in it is an error, so a typo cannot hide a case.
    """
    with path.open("rb") as f:
        data = tomllib.load(f)
    extra = sorted(set(data) - {"failing"})
    if extra:
        raise ValueError(f"{path}: unexpected table(s) {extra}; only [failing] is allowed")
    failing = data.get("failing", {})
    for key, reason in failing.items():
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{path}: entry '{key}' needs a non-empty reason string")
    return dict(failing)


#: the compiled-route and graph-capture ledgers (``ledgers/<route>.toml``,
#: ``ledgers/capture-<what>.toml``); py-eager's is :data:`LEDGER`
LEDGERS = Path(__file__).resolve().parent / "ledgers"


def every_ledger() -> list[Path]:
    """py-eager's ledger and every ledger in :data:`LEDGERS`."""
    return [LEDGER, *sorted(LEDGERS.glob("*.toml"))]


def stale_entries(path: Path) -> list[str]:
    """The cases the ledger at *path* lists that are not in the conformance folder (a
    renamed or removed case must leave its ledgers too)."""
    known = {case_id(p) for p in case_files()}
    return sorted(k for k in read_ledger(path) if k not in known)


@dataclass
class Outcome:
    """What running one case gave: passed or not, why not, how long, what it printed."""

    passed: bool
    reason: str
    seconds: float
    output: str


def _first_line(text: str, limit: int = 300) -> str:
    """The first non-blank line of *text*, paths shown relative to the conformance folder."""
    text = text.replace(f"{FOLDER.resolve()}/", "").replace(f"{FOLDER}/", "")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def on_route(ctx, route: str, **open_kw) -> None:
    """Make the drivers of *ctx* run their models on *route*: each model a driver asks
    for (``ctx.top_model``) is opened with ``neml2.routes.open_model`` (py-jit:
    ``neml2.compile`` of it; py-aoti: the AOTIModel of its ``neml2-compile`` artifact,
    compiled from the case's file as shipped). The route must give a typed model."""
    import neml2.routes

    r = neml2.routes.route(route)
    if not r.typed:
        raise ValueError(f"route {route} has no typed model for the drivers to run")
    if r.name == "py-eager":
        return
    build = ctx.top_model
    opened: dict[str, object] = {}

    def top_model(name, where=None):
        if name not in opened:
            eager = build(name, where)
            source = (ctx.path, name) if r.artifact else (eager, None)
            m = neml2.routes.open_model(r, *source, **open_kw).impl
            m.reference_model = eager  # the oracle of ModelUnitTest's derivative checks
            opened[name] = m
        return opened[name]

    ctx.top_model = top_model


def run_case(path: Path, route: str = "py-eager", **open_kw) -> Outcome:
    """Load *path* and run every checking driver in it, their models on *route*
    (``open_kw``: the arguments of ``neml2.routes.open_model``)."""
    start = time.perf_counter()
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ctx = load_input(path)
            on_route(ctx, route, **open_kw)
            drivers = ctx.section("Drivers")
            names = [
                b.name
                for b in (drivers.children() if drivers is not None else [])
                if b.param("type") is not None and b.param("type").as_str() in CHECKS
            ]
            if not names:
                reason = f"no {' / '.join(CHECKS)} block in [Drivers]"
                return Outcome(False, reason, time.perf_counter() - start, buf.getvalue())
            for name in names:
                check = ctx.object("Drivers", name)
                if check.run() is not True:
                    first = check.failures[0] if check.failures else "no failure recorded"
                    reason = f"[Drivers/{name}] failed: {_first_line(first)}"
                    return Outcome(False, reason, time.perf_counter() - start, buf.getvalue())
    except Exception as e:  # every failure mode is a ledger reason, not a crash
        reason = f"{type(e).__name__}: {_first_line(str(e)) or repr(e)}"
        return Outcome(False, reason, time.perf_counter() - start, buf.getvalue())
    return Outcome(True, "", time.perf_counter() - start, buf.getvalue())
