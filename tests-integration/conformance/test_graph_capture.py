"""The graphs the compiled routes run, captured for every conformance case and run against py-eager.

For each case, each model its ``[Drivers]`` name (``model = NAME``) is captured as the
compiled routes capture it, without their code generation:

* ``export``: ``neml2.compiler.export_file``, the stage of ``neml2-compile`` before AOT
  Inductor (the example inputs the file's drivers give, ``torch.export`` of the forward
  graph, the passes), then the exported program run eagerly (``ep.module()``);
* ``dynamo``: py-jit's capture, ``neml2.compile`` with Dynamo's ``eager`` backend (the
  FX graph Inductor would get, run as it is), on the same inputs.

Both are compared with py-eager's forward at the export's example inputs, to 1e-10 of
each output's largest entry (NaN or inf on either side fails). This finds the tracing
failures (data-dependent control flow, fake-tensor errors, sub-batch shapes, names) in
seconds to minutes per case, where the AOTI compile takes minutes. Per capture a ledger,
``ledgers/capture-<what>.toml``, with the rules of the others.

Opt-in while a crystal model's export takes 20-200 s on 2 cores (``uv run nox -s
conformance_capture``; ``NEML2_CONFORMANCE_CAPTURE=export,dynamo`` selects,
``NEML2_CONFORMANCE_SHARD=K/N`` shards as in test_conformance_routes.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import _fixtures  # noqa: F401  (the test-only models some regression inputs name)
import pytest
import torch
from _cases import LEDGERS, case_files, case_id, read_ledger
from test_conformance_routes import shard

import neml2
import neml2.routes
from neml2.models import load_input

# the models a case's drivers name: the one reading of them, shared with tools/export_check.py
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from export_check import driven_models

CAPTURES = ("export", "dynamo")


def selected() -> list[str]:
    text = os.environ.get("NEML2_CONFORMANCE_CAPTURE", "").strip()
    chosen = list(CAPTURES) if text in ("", "1", "all") else [t.strip() for t in text.split(",")]
    bad = [c for c in chosen if c not in CAPTURES]
    if bad:
        raise pytest.UsageError(f"NEML2_CONFORMANCE_CAPTURE: unknown {bad}; choose {CAPTURES}")
    return chosen


WHAT = selected()
FILES = shard(case_files())
LEDGER_ENTRIES = {w: read_ledger(LEDGERS / f"capture-{w}.toml") for w in WHAT}


def _compare(name: str, got: dict, want: dict) -> list[str]:
    """One line per output that differs (or is missing, or not finite)."""
    if not want:
        return [f"{name}: py-eager gave no outputs to compare with"]
    problems = []
    for k, w in want.items():
        g = got.get(k)
        if g is None:
            problems.append(f"{name}: output '{k}' missing")
            continue
        if g.shape != w.shape:
            problems.append(f"{name}: '{k}' shape {tuple(g.shape)} != {tuple(w.shape)}")
            continue
        if not w.numel():
            problems.append(f"{name}: py-eager's '{k}' is empty: nothing verified")
            continue
        scale = float(w.abs().max())
        err = (g.double() - w.double()).abs().max()
        if not bool(err <= 1e-10 * scale + 1e-12) or not bool(torch.isfinite(w).all()):
            problems.append(f"{name}: '{k}' differs by {float(err):.3e} (scale {scale:.3e})")
    return problems


def capture(what: str, path: Path, name: str) -> list[str]:
    """Capture model *name* of *path* as *what* says, run it and compare with py-eager;
    the differences, one line each (empty: it matches)."""
    from neml2.compiler import CompileOptions, export_file

    exported = export_file(path, CompileOptions.from_strings(name, []))
    ep = exported.programs["forward"]
    args, _ = ep.example_inputs
    eager = neml2.load_model(path, name)
    names = list(eager.input_spec)
    xs = {n: a for n, a in zip(names, args[: len(names)], strict=True)}
    sub = exported.input_sub_batch
    with torch.no_grad():
        want = neml2.routes.open_model("py-eager", eager, sub_batch=sub).forward(xs)
        if what == "export":
            res = ep.module()(*args)
            got = dict(zip(eager.output_spec, res, strict=False))
        else:
            jit = neml2.routes.open_model("py-jit", eager, sub_batch=sub, jit_backend="eager")
            got = jit.forward(xs)
    return _compare(name, got, want)


@pytest.mark.parametrize(
    ("what", "path"),
    [(w, p) for w in WHAT for p in FILES],
    ids=[f"{w}:{case_id(p)}" for w in WHAT for p in FILES],
)
def test_capture_matches_py_eager(what, path):
    key = case_id(path)
    try:
        names = driven_models(load_input(path))
        problems = [line for n in names for line in capture(what, path, n)]
        if not names:
            problems = ["no driver names a model"]
    except Exception as e:  # every failure mode is a ledger reason, not a crash
        problems = [
            f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
        ]
    listed = LEDGER_ENTRIES[what].get(key)
    if listed is None:
        assert not problems, f"{key}: {what} capture fails, not in capture-{what}.toml: {problems}"
    else:
        assert problems, f"{key} passes the {what} capture now: remove it from capture-{what}.toml"
