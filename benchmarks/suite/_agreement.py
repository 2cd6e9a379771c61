"""Did both sides compute the same thing? Result fingerprints and their comparison.

Imports only torch and the standard library: both workers (ours, and the reference's in
its own virtual environment) write fingerprints with it, and ``run.py`` compares them.

A worker writes, per (workload, route, batch), one ``<side>__<workload>__<route>__<batch>.pt``
(``torch.save`` of a dict; see :func:`save`) holding, per quantity,

* ``eval``: the outputs of one model evaluation on the first step's inputs (the call
  the evaluation throughput times), and
* ``transient``: the state after the transient run (the outputs of its last step),

as float64 CPU tensors, with the SHA-256 of every input the quantity was computed from
(the prescribed history up to its last step, the initial state, the zero histories) and
the first step's inputs themselves; a quantity that was not computed has a reason
instead. A variable is saved whole unless it holds more than ``FULL_BYTES``; then only
its first and last ``SUBSET_POINTS`` material points (the same rule on both sides).

Two results agree when, for every output variable, ``max|a - b| <= RTOL * max(max|b|,
FLOOR)`` (b: the reference result), i.e. the max relative difference
``max|a - b| / max(max|b|, FLOOR)`` is at most ``RTOL``. ``RTOL``/``ATOL`` are the
conformance checks' defaults (``TransientRegression``: rtol 1e-5, atol 1e-8); the
absolute part is scaled into the relative one (``FLOOR = ATOL / RTOL``), and the
relative part is taken on the variable's largest magnitude rather than entry by entry,
so that components that are zero up to round-off do not fail. NaN or infinity on either
side, an empty result, a missing variable, a shape mismatch or different inputs fail.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import torch

RTOL = 1e-5
ATOL = 1e-8
#: below this magnitude the difference is measured against ATOL (= RTOL * FLOOR)
FLOOR = ATOL / RTOL
#: a variable larger than this (bytes) is saved as its first and last SUBSET_POINTS points
FULL_BYTES = 16 * 1024**2
SUBSET_POINTS = 1000
QUANTITIES = ("eval", "transient")


def raw(v) -> torch.Tensor:
    """The tensor behind a value: a raw tensor (AOTI routes) or a typed wrapper's
    ``.data`` (both libraries' typed tensors hold the full ``(*B, *sub, *base)`` data)."""
    return v if isinstance(v, torch.Tensor) else v.data


def points(t: torch.Tensor) -> torch.Tensor:
    """*t* (material points first) as float64 on the CPU, or its first and last
    ``SUBSET_POINTS`` points when it holds more than ``FULL_BYTES``."""
    t = t.detach()
    if t.ndim and t.shape[0] > 2 * SUBSET_POINTS and t.numel() * 8 > FULL_BYTES:
        t = torch.cat([t[:SUBSET_POINTS], t[-SUBSET_POINTS:]])
    return t.to(device="cpu", dtype=torch.float64).contiguous().clone()


def digest(named: dict) -> str:
    """SHA-256 over ``name -> list of tensors`` (names sorted; each tensor's shape,
    dtype and bytes)."""
    h = hashlib.sha256()
    for name in sorted(named):
        h.update(name.encode())
        for v in named[name]:
            t = raw(v).detach().to("cpu").contiguous()
            h.update(f"{tuple(t.shape)}{t.dtype}".encode())
            h.update(t.numpy().tobytes())
    return h.hexdigest()


def path(directory: Path, side: str, workload: str, route: str, batch: int) -> Path:
    return Path(directory) / f"{side}__{workload}__{route}__{batch}.pt"


def save(
    file: Path,
    *,
    eval_out: dict | None,
    eval_inputs: dict,
    eval_digest: str,
    transient_out: dict | None,
    transient_digest: str,
    transient_reason: str = "",
    eval_reason: str = "",
) -> None:
    """Write one fingerprint (see the module docstring)."""
    d = {
        "eval": None if eval_out is None else {n: points(raw(v)) for n, v in eval_out.items()},
        "eval_reason": eval_reason,
        "eval_inputs": {n: points(raw(v)) for n, v in eval_inputs.items()},
        "eval_digest": eval_digest,
        "transient": None
        if transient_out is None
        else {n: points(raw(v)) for n, v in transient_out.items()},
        "transient_reason": transient_reason,
        "transient_digest": transient_digest,
    }
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(".part")
    torch.save(d, tmp)
    tmp.replace(file)


def save_missing(file: Path, reason: str) -> None:
    """A fingerprint with no results: *reason* for both quantities."""
    file.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "eval": None,
            "eval_reason": reason,
            "eval_inputs": {},
            "eval_digest": "",
            "transient": None,
            "transient_reason": reason,
            "transient_digest": "",
        },
        file,
    )


def load(file: Path) -> dict | None:
    if not Path(file).is_file():
        return None
    return torch.load(file, map_location="cpu", weights_only=True)


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else "inf" if math.isinf(x) else f"{x:.2e}"


def max_rel(
    ours: dict | None, ref: dict | None, labels=("ours", "the reference")
) -> tuple[float, dict, list[str]]:
    """Max relative difference of *ours* against *ref* (name -> tensor), worst over
    the variables of either.

    Returns ``(worst, per_variable, problems)``: per variable
    ``max|a - b| / max(max|b|, FLOOR)``; ``nan`` for a variable that cannot be compared
    (missing on one side, empty, shapes differ, NaN or infinity on either side), each
    with a line in *problems* (naming the sides by *labels*). ``worst`` is ``nan`` when
    any variable is ``nan`` or when there is nothing to compare (no or empty *ref*).
    """
    problems: list[str] = []
    per: dict[str, float] = {}
    if not ref:
        return math.nan, per, [f"no result from {labels[1]} (empty)"]
    if ours is None:
        return math.nan, per, [f"no result from {labels[0]}"]
    for name in sorted(set(ours) | set(ref)):
        if name not in ours or name not in ref:
            where = labels[0] if name not in ours else labels[1]
            problems.append(f"'{name}' missing on {where}")
            per[name] = math.nan
            continue
        a = ours[name].to(torch.float64)
        b = ref[name].to(torch.float64)
        if a.shape != b.shape:
            problems.append(f"'{name}' shape {tuple(a.shape)} vs {tuple(b.shape)}")
            per[name] = math.nan
            continue
        if b.numel() == 0:
            problems.append(f"'{name}' is empty")
            per[name] = math.nan
            continue
        bad = (~torch.isfinite(a)).sum().item() + (~torch.isfinite(b)).sum().item()
        if bad:
            problems.append(f"'{name}' has {bad} NaN/inf entries")
            per[name] = math.nan
            continue
        scale = max(b.abs().max().item(), FLOOR)
        per[name] = (a - b).abs().max().item() / scale
    worst = max(per.values(), default=math.nan)
    if any(math.isnan(v) for v in per.values()):
        worst = math.nan
    return worst, per, problems


def agree(worst: float) -> bool:
    """Within tolerance; false for NaN (``not (x <= tol)``, never ``x > tol``)."""
    return worst <= RTOL


def compare(ours_fp: dict | None, ref_fp: dict | None, quantity: str, labels=("a", "b")):
    """``(status, value, note)`` for *quantity* of two fingerprints (``load``'s dicts):
    status ``ok`` / ``disagree`` / ``missing`` (a side has no result for it)."""
    la, lb = labels
    for fp, label in ((ours_fp, la), (ref_fp, lb)):
        if fp is None:
            return "missing", None, f"no result from {label}"
        if fp.get(quantity) is None:
            why = fp.get(f"{quantity}_reason") or "not computed"
            return "missing", None, f"no {quantity} result from {label} ({why})"
    notes = []
    inputs_ok = bool(ours_fp[f"{quantity}_digest"]) and (
        ours_fp[f"{quantity}_digest"] == ref_fp[f"{quantity}_digest"]
    )
    if inputs_ok:
        notes.append("inputs identical")
    else:
        w_in, _, _ = max_rel(ours_fp["eval_inputs"], ref_fp["eval_inputs"])
        notes.append(f"INPUTS DIFFER (first step's inputs: max rel {_fmt(w_in)})")
    worst, per, problems = max_rel(ours_fp[quantity], ref_fp[quantity], labels)
    notes += problems
    if per:
        name = max(per, key=lambda n: math.inf if math.isnan(per[n]) else per[n])
        notes.append(f"worst '{name}' {_fmt(per[name])} over {len(per)} variables")
    ok = inputs_ok and agree(worst)
    value = None if math.isnan(worst) else worst
    note = f"{quantity}: {la} vs {lb}; " + "; ".join(notes)
    return ("ok" if ok else "disagree"), value, note
