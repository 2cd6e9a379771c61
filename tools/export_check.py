"""Export every model the conformance inputs drive, as ``neml2-compile`` would, without AOTI.

For each ``.i`` under ``tests-integration/conformance/data`` (or the folders/files
given), every ``[Models]`` block a ``[Drivers]`` block names (``model = NAME``) goes
through :func:`neml2.compiler.export_file`: the example inputs the file gives (the
drivers' values, ``[Settings]`` shapes), the probe call, ``torch.export`` of the forward
graph and the passes before AOT Inductor, in seconds per model (a crystal-plasticity
model with a Newton solve takes one to two minutes on a loaded 2-core machine).

One line per model::

    OK   models/common/ScalarLinearInterpolation.i [E] 0.3s  examples: [Drivers/unit] ...
    FAIL models/kwn/ProjectedDiffusivitySum.i [model] 0.1s  FatalError: torch.export ...

then a count. ``--timeout S`` gives up on a model after S seconds (reported as FAIL
``timeout``), ``-k TEXT`` keeps the files whose path contains TEXT (repeatable), ``-d
OUT:IN`` exports the Jacobian graph too. The exit status is 1 when a model fails.

    .venv/bin/python tools/export_check.py --timeout 300 -k finite_volume -k kwn
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests-integration" / "conformance" / "data"


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout


def driven_models(ctx) -> list[str]:
    """The ``[Models]`` blocks the ``[Drivers]`` blocks of *ctx* name, in file order."""
    sec = ctx.section("Drivers")
    out: list[str] = []
    for block in sec.children() if sec is not None else []:
        p = block.param("model")
        if p is not None and p.as_str().strip() not in out:
            out.append(p.as_str().strip())
    return out


def _first(e: BaseException) -> str:
    text = str(e).strip()
    line = text.splitlines()[0] if text else repr(e)
    return f"{type(e).__name__}: {line[:400]}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path, help=f"files or folders (default {DATA})")
    p.add_argument("-k", dest="keep", action="append", default=[], help="path substring")
    p.add_argument("-d", dest="derivatives", action="append", default=[], metavar="OUT:IN")
    p.add_argument("--timeout", type=float, default=0, help="seconds per model (0: none)")
    a = p.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests-integration" / "conformance"))
    import _fixtures  # noqa: F401  (the test-only models some regression inputs name)

    from neml2.compiler import CompileOptions, export_file
    from neml2.models import load_input

    files: list[Path] = []
    for path in a.paths or [DATA]:
        files += sorted(path.rglob("*.i")) if path.is_dir() else [path]
    files = [f for f in files if not a.keep or any(k in str(f) for k in a.keep)]
    signal.signal(signal.SIGALRM, _alarm)
    counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
    for f in files:
        rel = f.resolve().relative_to(DATA) if f.resolve().is_relative_to(DATA) else f
        try:
            names = driven_models(load_input(f))
        except Exception as e:  # an input that does not load: not an export failure
            print(f"SKIP {rel}: does not load: {_first(e)}", flush=True)
            counts["SKIP"] += 1
            continue
        if not names:
            print(f"SKIP {rel}: no driver names a model", flush=True)
            counts["SKIP"] += 1
        for name in names:
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, a.timeout)
            try:
                res = export_file(f, CompileOptions.from_strings(name, a.derivatives))
                status = "OK"
                detail = f"examples: {res.example_source or 'made up'}"
                detail += "".join(f"; {n}" for n in res.notes)
            except _Timeout:
                status, detail = "FAIL", f"timeout after {a.timeout:g} s"
            except Exception as e:
                cause = e.__cause__ if isinstance(e.__cause__, _Timeout) else None
                status = "FAIL"
                detail = f"timeout after {a.timeout:g} s" if cause else _first(e)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            counts[status] += 1
            dt = time.perf_counter() - t0
            print(f"{status:<4} {rel} [{name}] {dt:.1f}s  {detail}", flush=True)
    print(f"{counts['OK']} exported, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
