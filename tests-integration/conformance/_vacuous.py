"""Conformance outputs that their gold cannot check, and the oracles that check them instead.

A check compares an entry with ``|ours - gold| <= atol + rtol * |gold|``. Where a
variable's gold satisfies ``|gold| <= atol + rtol * |gold|`` at every step, a result
of zeros passes: the gold verifies nothing about that variable ("vacuous gold").

* :func:`find_vacuous` lists every such variable of every ``TransientRegression``
  and ``Verification`` check of the suite. It runs the case's own check driver on
  an all-zero result (nothing is simulated) and records, through the drivers' one
  comparison (:func:`neml2.drivers._compare.compare`), which variables pass.
* ``vacuous_gold.toml`` is the committed list (:func:`read_list`); each entry names
  its oracles and the mutations each oracle must catch.
* :data:`ORACLES` are those oracles: functions of a run and a variable returning the
  reasons it fails (empty: passes). ``name@converged`` runs the case with its Newton
  tolerances tightened (:data:`CONVERGED`) first.
* :func:`run` runs a case with its real check (optionally with one output of the top
  model mutated at every step); :func:`recheck` runs the case's check on a given
  result; :func:`mutated` mutates a result.
"""

from __future__ import annotations

import contextlib
import io
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import _fixtures
import torch
from _cases import FOLDER, case_files, case_id

import neml2.drivers.regression as regression
from neml2.drivers._compare import compare
from neml2.models import load_input

LIST = Path(__file__).resolve().parent / "vacuous_gold.toml"
#: the checks that compare a transient run step by step
TRANSIENT_CHECKS = ("TransientRegression", "Verification")
#: overrides that solve the ``newton`` solver's systems to round-off
CONVERGED = ("Solvers/newton/abs_tol=1e-20", "Solvers/newton/rel_tol=1e-12")


# --------------------------------------------------------------------------- the scan


@dataclass(frozen=True)
class Vacuous:
    """One variable of one check that a zero result passes."""

    case: str  #: case id (path under the conformance folder)
    check: str  #: the ``[Drivers]`` block of the check
    variable: str  #: the variable (``output.`` left out; ``input.x`` kept whole)
    max_gold: float  #: the largest ``|gold|`` over every compared entry
    atol: float  #: the check's absolute tolerance
    rtol: float  #: the check's relative tolerance
    compared: int  #: how many step values were compared

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case, self.check, self.variable)


class _Zeros(dict):
    """A driver result that holds a zero for every key asked for."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> torch.Tensor:
        return torch.zeros((), dtype=torch.float64)


def _quiet_load(path: Path, overrides: tuple[str, ...] = ()):
    with contextlib.redirect_stdout(io.StringIO()):
        return load_input(path, list(overrides))


def check_names(ctx) -> list[str]:
    """The ``[Drivers]`` blocks of *ctx* that check a transient run."""
    drivers = ctx.section("Drivers")
    return [
        b.name
        for b in (drivers.children() if drivers is not None else [])
        if b.param("type") is not None and b.param("type").as_str() in TRANSIENT_CHECKS
    ]


def _variable(what: str) -> str:
    side, _step, var = what.split(".", 2)
    return var if side == "output" else f"{side}.{var}"


def scan_case(path: Path, case: str | None = None) -> list[Vacuous]:
    """The variables of *path*'s transient checks that an all-zero result passes (listed
    under *case*, by default the case id of *path*)."""
    found: list[Vacuous] = []
    ctx = _quiet_load(path)
    for name in check_names(ctx):
        check = ctx.object("Drivers", name)
        driver = ctx.object("Drivers", check.opts["driver"])
        driver.run = lambda: True  # nothing is simulated: the result is all zeros
        driver.result = _Zeros()
        seen: list[tuple[str, bool, float]] = []
        real = regression.compare

        def recording(what, ours, expected, rtol, atol, _real=real, _seen=seen, **kw):
            c = _real(what, ours, expected, rtol, atol, **kw)
            big = expected.detach().abs().max() if expected.numel() else torch.tensor(math.nan)
            _seen.append((what, c.ok, float(big)))
            return c

        with mock.patch.object(regression, "compare", recording):
            with contextlib.redirect_stdout(io.StringIO()):
                check.run()
        by_var: dict[str, list[tuple[bool, float]]] = {}
        for what, ok, big in seen:
            by_var.setdefault(_variable(what), []).append((ok, big))
        for var, rows in sorted(by_var.items()):
            if rows and all(ok for ok, _ in rows):
                found.append(
                    Vacuous(
                        case or case_id(path),
                        name,
                        var,
                        max(big for _, big in rows),
                        float(check.opts["atol"]),
                        float(check.opts["rtol"]),
                        len(rows),
                    )
                )
    return found


def transient_cases() -> list[Path]:
    """Every regression and verification input of the suite."""
    return [p for p in case_files() if case_id(p).split("/", 1)[0] != "models"]


def find_vacuous() -> list[Vacuous]:
    """Every variable of every transient check whose gold a zero result passes."""
    return [v for p in transient_cases() for v in scan_case(p)]


# --------------------------------------------------------------------------- the list


@dataclass(frozen=True)
class Entry:
    """One entry of ``vacuous_gold.toml``."""

    case: str
    check: str
    variable: str
    max_gold: float
    atol: float
    rtol: float
    why: str
    #: oracle name (``name`` or ``name@converged``) -> the mutations it must catch
    oracles: dict[str, list[str]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case, self.check, self.variable)

    @property
    def id(self) -> str:
        return f"{self.case}::{self.variable}"


def read_list(path: Path = LIST) -> list[Entry]:
    """The committed list; a malformed entry is an error, so a typo cannot hide one."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    extra = sorted(set(data) - {"output"})
    if extra:
        raise ValueError(f"{path}: unexpected key(s) {extra}; only [[output]] entries")
    want = {"case", "check", "variable", "max_gold", "atol", "rtol", "why", "oracles"}
    entries = []
    for i, row in enumerate(data.get("output", [])):
        if set(row) != want:
            raise ValueError(f"{path}: entry {i} has keys {sorted(row)}, expected {sorted(want)}")
        if not str(row["why"]).strip():
            raise ValueError(f"{path}: entry {i} needs a reason (why)")
        oracles = row["oracles"]
        if not oracles or not all(
            isinstance(m, list) and m and all(isinstance(s, str) for s in m)
            for m in oracles.values()
        ):
            raise ValueError(f"{path}: entry {i} needs oracles, each with a list of mutations")
        entries.append(
            Entry(
                row["case"],
                row["check"],
                row["variable"],
                float(row["max_gold"]),
                float(row["atol"]),
                float(row["rtol"]),
                row["why"],
                {k: list(v) for k, v in oracles.items()},
            )
        )
    return entries


def list_differences(found: list[Vacuous], entries: list[Entry]) -> list[str]:
    """Why the committed *entries* are not the computed *found* list (empty: they are):
    an entry missing, stale or listed twice, or its tolerances or magnitude wrong."""
    computed = {v.key: v for v in found}
    committed = {e.key: e for e in entries}
    lines = []
    if len(committed) != len(entries):
        lines.append("an output is listed twice")
    for key in sorted(set(computed) - set(committed)):
        lines.append(f"missing: {key} (max |gold| {computed[key].max_gold:.4g})")
    for key in sorted(set(committed) - set(computed)):
        lines.append(f"stale (its gold is not vacuous, or the case is gone): {key}")
    for key in sorted(set(committed) & set(computed)):
        e, v = committed[key], computed[key]
        if (e.atol, e.rtol) != (v.atol, v.rtol):
            lines.append(f"{key}: tolerances are atol {v.atol:g}, rtol {v.rtol:g}")
        if not math.isclose(e.max_gold, v.max_gold, rel_tol=1e-3):
            lines.append(f"{key}: max |gold| is {v.max_gold:.4g}, listed {e.max_gold:.4g}")
    return lines


# --------------------------------------------------------------------------- runs


@dataclass
class Run:
    """A case run (or re-checked) with its real check."""

    case: str
    converged: bool
    ctx: Any
    result: dict[str, torch.Tensor]
    gold: dict[str, Any]
    rtol: float  #: the check's tolerances
    atol: float
    passed: bool  #: the check's verdict on this result
    failures: list[str]
    error: str = ""  #: why the run raised ("" if it did not)


def _gold(ctx, check) -> dict[str, Any]:
    path = Path(check.opts["reference"])
    if not path.is_absolute():
        path = Path(ctx.path).resolve().parent / path
    gold = torch.load(path, map_location="cpu", weights_only=True)
    return {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in gold.items()}


def _only_check(ctx, case: str, check_name: str):
    if check_name not in check_names(ctx):
        raise ValueError(f"{case}: no transient check named '{check_name}'")
    return ctx.object("Drivers", check_name)


def mutation(spec: str) -> Callable[[Any], Any]:
    """``x<f>`` scales a value (tensor or typed tensor) by ``f``, ``+<c>`` adds ``c``;
    ``nan`` and ``inf`` fill a tensor with that value."""
    if spec.startswith("x"):
        factor = float(spec[1:])
        return lambda d: d * factor
    if spec.startswith("+"):
        offset = float(spec[1:])
        return lambda d: d + offset
    if spec in ("nan", "inf"):
        return lambda d: torch.full_like(d, float(spec))
    raise ValueError(f"unknown mutation '{spec}' (x<factor>, +<offset>, nan, inf)")


def _hook_output(ctx, variable: str, fn: Callable[[Any], Any]) -> None:
    """Make the top model built from *ctx* return *variable* through *fn* at every call
    (the driver records that value and feeds it to later steps as history)."""
    build = ctx.top_model

    def top_model(name, where=None):
        model = build(name, where)
        names = list(model.output_spec)
        if variable not in names:
            raise ValueError(f"'{variable}' is not an output of model '{name}': {names}")
        i = names.index(variable)

        def hook(_module, _args, out):
            outs = list(out) if isinstance(out, tuple) else [out]
            outs[i] = fn(outs[i])  # wrapper arithmetic: value and tangents alike
            return tuple(outs) if isinstance(out, tuple) else outs[0]

        model.register_forward_hook(hook)
        return model

    ctx.top_model = top_model


#: the test-only stand-in models (_fixtures.py) whose rates a stand-in mutation scales
STAND_INS = (_fixtures.SurrogateFlowRate, _fixtures.TabulatedPolynomialModel)


def _hook_stand_ins(ctx, fn: Callable[[Any], Any], calls: list[int]) -> None:
    """Make every stand-in model inside the top model return its rates through *fn*."""
    build = ctx.top_model

    def top_model(name, where=None):
        model = build(name, where)

        def hook(_module, _args, out):
            calls.append(1)
            return tuple(fn(o) for o in out) if isinstance(out, tuple) else fn(out)

        found = [m for m in model.modules() if isinstance(m, STAND_INS)]
        if not found:
            raise ValueError(f"model '{name}' holds no stand-in model")
        for m in found:
            m.register_forward_hook(hook)
        return model

    ctx.top_model = top_model


def run(
    entry: Entry,
    *,
    converged: bool = False,
    mutate: str | None = None,
    stand_in: str | None = None,
) -> Run:
    """Run *entry*'s case with its check: its solver tightened if *converged*; *entry*'s
    variable mutated by *mutate* at the top model's output (feeding later steps); the
    stand-in models' rates mutated by *stand_in*. A run that raises has an empty result,
    ``passed`` False and the exception in ``error``."""
    variable = entry.variable if mutate is not None else ""
    return _run(entry.case, entry.check, variable, converged, mutate, stand_in)


@cache
def _run(
    case: str,
    check_name: str,
    variable: str,
    converged: bool,
    mutate: str | None,
    stand_in: str | None,
) -> Run:
    path = FOLDER / case
    ctx = _quiet_load(path, CONVERGED if converged else ())
    if converged and not ctx.has_block("Solvers", "newton"):
        raise ValueError(f"{case}: no [Solvers/newton] to tighten")
    check = _only_check(ctx, case, check_name)
    if mutate is not None:
        _hook_output(ctx, variable, mutation(mutate))
    calls: list[int] = []
    if stand_in is not None:
        _hook_stand_ins(ctx, mutation(stand_in), calls)
    driver = ctx.object("Drivers", check.opts["driver"])
    error = ""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            passed = check.run() is True
        failures, result = list(check.failures), dict(driver.result)
    except Exception as e:  # a mutated model may break the solve
        error = f"{type(e).__name__}: {e}"
        passed, failures, result = False, [error], {}
    if stand_in is not None and not calls:
        raise RuntimeError(f"{case}: the stand-in hook never ran")
    return Run(
        case,
        converged,
        ctx,
        result,
        _gold(ctx, check),
        float(check.opts["rtol"]),
        float(check.opts["atol"]),
        passed,
        failures,
        error,
    )


def recheck(entry: Entry, result: dict[str, torch.Tensor]) -> tuple[bool, list[str]]:
    """The verdict of *entry*'s own check on *result* (nothing is simulated)."""
    ctx = _quiet_load(FOLDER / entry.case)
    check = _only_check(ctx, entry.case, entry.check)
    driver = ctx.object("Drivers", check.opts["driver"])
    driver.run = lambda: True
    driver.result = result
    with contextlib.redirect_stdout(io.StringIO()):
        passed = check.run() is True
    return passed, list(check.failures)


def keys_of(result: dict[str, Any], variable: str) -> list[str]:
    """The ``output.<step>.<variable>`` keys of *result*."""
    return [k for k in result if k.startswith("output.") and k.split(".", 2)[2] == variable]


def mutated(result: dict[str, torch.Tensor], variable: str, spec: str) -> dict[str, torch.Tensor]:
    """A copy of *result* with every step's *variable* mutated: a :func:`mutation`, or
    ``missing`` (the keys dropped) or ``empty`` (each value an empty tensor)."""
    out = dict(result)
    keys = keys_of(result, variable)
    if not keys:
        raise ValueError(f"no output.<step>.{variable} in the result to mutate")
    for k in keys:
        if spec == "missing":
            del out[k]
        elif spec == "empty":
            out[k] = result[k].new_empty((0,))
        else:
            out[k] = mutation(spec)(result[k])
    return out


# --------------------------------------------------------------------------- oracles


class OracleError(Exception):
    """An oracle cannot evaluate (a missing or empty value): it fails."""


def _get(result: dict[str, torch.Tensor], key: str) -> torch.Tensor:
    if key not in result:
        raise OracleError(f"{key}: missing from the result")
    value = result[key]
    if not isinstance(value, torch.Tensor) or value.numel() == 0:
        raise OracleError(f"{key}: empty or not a tensor")
    return value.detach().to(torch.float64)


def _steps(r: Run, variable: str) -> list[int]:
    """The steps the gold holds *variable* at (those a run must produce), ascending."""
    steps = sorted(int(k.split(".")[1]) for k in keys_of(r.gold, variable))
    if not steps:
        raise OracleError(f"the gold holds no output.<step>.{variable}")
    return steps


def _before(r: Run, variable: str, k: int, like: torch.Tensor) -> torch.Tensor:
    """*variable* at step ``k - 1``: zero-filled at step 0 when the gold has none there."""
    key = f"output.{k - 1}.{variable}"
    if k - 1 == 0 and key not in r.gold:
        return torch.zeros_like(like)
    return _get(r.result, key)


def _within(what: str, ours, expected, rtol: float, scale: float, rel: float) -> list[str]:
    """``compare`` with ``atol = rel * scale``: a tolerance at the variable's own scale."""
    if not (scale > 0 and math.isfinite(scale)):
        return [f"{what}: no usable scale ({scale}) for a relative tolerance"]
    c = compare(what, ours, expected, rtol, rel * scale, expected_may_be_nonfinite=False)
    return [] if c.ok else [c.line()]


def scaled_gold(r: Run, variable: str) -> list[str]:
    """Ours against the gold with ``atol = rtol * max|gold|`` of this variable (the
    file's rtol at the variable's own scale; the file's atol swamps it)."""
    keys = sorted(keys_of(r.gold, variable), key=lambda k: int(k.split(".")[1]))
    if not keys:
        return [f"the gold holds no output.<step>.{variable}"]
    sizes = [float(r.gold[k].abs().max()) if r.gold[k].numel() else math.nan for k in keys]
    scale = math.nan if any(math.isnan(x) for x in sizes) else max(sizes)
    if not (scale > 0 and math.isfinite(scale)):
        return [f"max |gold| of {variable} is {scale}: no scale to compare at"]
    bad = []
    for k in keys:
        c = compare(k, _get(r.result, k), r.gold[k], r.rtol, r.rtol * scale)
        if not c.ok:
            bad.append(c.line())
    return bad


def exact_zero(r: Run, variable: str) -> list[str]:
    """The gold is exactly zero at every step, and so is ours (``atol = rtol = 0``)."""
    bad = []
    for k in _steps(r, variable):
        key = f"output.{k}.{variable}"
        want = r.gold[key]
        if want.numel() == 0 or bool((want != 0).any()):
            bad.append(f"{key}: the gold is not exactly zero, exact_zero does not apply")
            continue
        c = compare(key, _get(r.result, key), want, 0.0, 0.0)
        if not c.ok:
            bad.append(c.line())
    return bad


def _data(ctx, name: str) -> torch.Tensor:
    value = ctx.tensor(name)
    return getattr(value, "data", value).detach().to(torch.float64)


def unscaled_density(r: Run, variable: str) -> list[str]:
    """KWN: ``true_number_density = number_density (1 - c)² / scale_factor`` per cell,
    ``c`` the cell centres on [0, 1] (the inverse of the file's coordinate stretch)."""
    c = _data(r.ctx, "centers")
    inverse_jacobian = (1.0 - c) ** 2 / _data(r.ctx, "scale_factor")
    pairs = []
    for k in _steps(r, variable):
        ours = _get(r.result, f"output.{k}.{variable}")
        pairs.append((k, ours, _get(r.result, f"output.{k}.number_density") * inverse_jacobian))
    scale = max(float(e.abs().max()) for _, _, e in pairs)
    return [m for k, o, e in pairs for m in _within(f"step {k}", o, e, 1e-10, scale, 1e-10)]


def _vonmises(s: torch.Tensor) -> torch.Tensor:
    """von Mises stress of Mandel vectors ``(..., 6)``."""
    dev = s.clone()
    dev[..., :3] -= s[..., :3].mean(-1, keepdim=True)
    return torch.sqrt(1.5 * (dev * dev).sum(-1))


def _elasticity(ctx) -> Callable[[torch.Tensor], torch.Tensor]:
    """``ε ↦ λ tr(ε) I + 2 μ ε`` (Mandel) with the file's ``trial_cauchy_stress`` constants."""
    block = ctx.block("Models", "trial_cauchy_stress")
    kinds = block.param("coefficient_types").as_list()
    if kinds != ["YOUNGS_MODULUS", "POISSONS_RATIO"]:
        raise OracleError(f"trial_cauchy_stress: unexpected coefficient types {kinds}")
    E, nu = block.param("coefficients").as_list(float)
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))

    def stress(e: torch.Tensor) -> torch.Tensor:
        s = 2 * mu * e
        s[..., :3] += lam * e[..., :3].sum(-1, keepdim=True)
        return s

    return stress


def j2_flow(r: Run, variable: str) -> list[str]:
    """Forward-Euler associative J2 flow: ``Δεp = Δεp_eq N``, ``N = 3/2 dev(S)/vm(S)`` of
    the trial stress ``S = C : (E - εp~1)``; ``Δεp_eq`` from the run (its own oracle)."""
    stress = _elasticity(r.ctx)
    ep = "equivalent_plastic_strain"
    pairs = []
    for k in _steps(r, variable):
        ours = _get(r.result, f"output.{k}.{variable}")
        before = _before(r, variable, k, ours)
        now = _get(r.result, f"output.{k}.{ep}")
        trial = stress(_get(r.result, f"input.{k}.E") - before)
        dev = trial.clone()
        dev[..., :3] -= trial[..., :3].mean(-1, keepdim=True)
        flow = 1.5 * dev / _vonmises(trial).unsqueeze(-1)
        pairs.append((k, ours - before, (now - _before(r, ep, k, now)).unsqueeze(-1) * flow))
    scale = max(float(e.abs().max()) for _, _, e in pairs)
    return [m for k, o, e in pairs for m in _within(f"Δ at step {k}", o, e, 1e-8, scale, 1e-8)]


#: SurrogateFlowRate's constants (the reference's stand-in flow-rate law)
_SY, _ETA, _N, _G0, _C0, _Q, _R, _G, _C = 1000.0, 10.0, 3.0, 0.003, 0.004, 5e4, 8.3145, 0.1, 0.2


def _surrogate(s: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """``exp(-Q/(R T)) (exp(-G/G₀) + exp(-C/C₀)) ⟨(s - s_y)/η⟩ⁿ``."""
    over = torch.clamp((s - _SY) / _ETA, min=0.0)
    scale = math.exp(-_G / _G0) + math.exp(-_C / _C0)
    return torch.exp(-_Q / (_R * T)) * scale * over**_N


def _time_steps(r: Run, k: int) -> torch.Tensor:
    return _get(r.result, f"input.{k}.t") - _get(r.result, f"input.{k - 1}.t")


def surrogate_rate(r: Run, variable: str) -> list[str]:
    """Backward Euler on SurrogateFlowRate: ``Δεp_eq = Δt rate(vm(σ), T)`` at the
    step's end (σ is the stress output, checked by the gold)."""
    pairs = []
    for k in _steps(r, variable):
        ours = _get(r.result, f"output.{k}.{variable}")
        s = _vonmises(_get(r.result, f"output.{k}.stress"))
        rate = _surrogate(s, _get(r.result, f"input.{k}.temperature"))
        pairs.append((k, ours - _before(r, variable, k, ours), _time_steps(r, k) * rate))
    scale = max(float(e.abs().max()) for _, _, e in pairs)
    return [m for k, o, e in pairs for m in _within(f"Δ at step {k}", o, e, 1e-8, scale, 1e-8)]


def _polynomial(ctx, s, T, s1, s2) -> torch.Tensor:
    """TabulatedPolynomialModel's three rates ``(..., 3)`` from the file's [Tensors]."""
    block = ctx.block("Models", "rom")

    def named(option: str) -> torch.Tensor:
        return _data(ctx, block.param(option).as_str())

    a = block.param("index_sharpness").as_float() if block.param("index_sharpness") else 1.0
    A0, A1, A2 = named("A0"), named("A1"), named("A2")

    def weights(x, lower, upper):
        x = x.unsqueeze(-1)
        return 0.5 * (torch.sigmoid(a * (x - named(lower))) - torch.sigmoid(a * (x - named(upper))))

    ws = weights(s, "stress_tile_lower_bounds", "stress_tile_upper_bounds")  # (..., ns)
    wt = weights(T, "temperature_tile_lower_bounds", "temperature_tile_upper_bounds")  # (..., nT)
    x = torch.stack(torch.broadcast_tensors(s, T, s1, s2), -1)[..., None, None, None, :]
    cell = A0 + (A1 * x).sum(-1) + (A2 * x * x).sum(-1)  # (..., ns, nT, 3)
    return (ws[..., :, None, None] * wt[..., None, :, None] * cell).sum((-3, -2))


_POLYNOMIAL_RATES = {"equivalent_plastic_strain": 0, "s1": 1, "s2": 2}


def polynomial_rate(r: Run, variable: str) -> list[str]:
    """Backward Euler on TabulatedPolynomialModel: ``Δx = Δt y_x(vm(σ), T, s₁, s₂)`` at the
    step's end. Tolerance 1e-6 of the scale: the tile weights are a difference of two
    logistic values near 1 (round-off about 1e-9 relative)."""
    j = _POLYNOMIAL_RATES[variable]
    pairs = []
    for k in _steps(r, variable):
        if k == 0:
            continue  # the initial condition
        ours = _get(r.result, f"output.{k}.{variable}")
        y = _polynomial(
            r.ctx,
            _vonmises(_get(r.result, f"output.{k}.stress")),
            _get(r.result, f"input.{k}.temperature"),
            _get(r.result, f"output.{k}.s1"),
            _get(r.result, f"output.{k}.s2"),
        )[..., j]
        pairs.append((k, ours - _before(r, variable, k, ours), _time_steps(r, k) * y))
    if not pairs:
        return ["no step after the initial condition"]
    scale = max(float(e.abs().max()) for _, _, e in pairs)
    return [m for k, o, e in pairs for m in _within(f"Δ at step {k}", o, e, 1e-6, scale, 1e-6)]


def predictor_accepted(r: Run, variable: str) -> list[str]:
    """ml_surrogate/model_scalar.i as written: the Newton residual of the scalar update
    ``εp_eq - εp_eq~1 - Δt rate(s_trial - 3 G Δεp_eq, T)`` at the linear-extrapolation
    predictor is, with every earlier step zero, ``-Δt rate(vm(C : E), T)``. Where its
    size is below ``abs_tol`` at every step, Newton accepts the predictor each time,
    so ``εp_eq`` and ``εp`` are exactly 0 at every step (by induction from the zero
    history). The premise is computed from the prescribed E, T and t only."""
    abs_tol = r.ctx.block("Solvers", "newton").param("abs_tol").as_float()
    stress = _elasticity(r.ctx)
    bad = []
    for k in _steps(r, variable):
        E = _get(r.result, f"input.{k}.E")
        r0 = _time_steps(r, k) * _surrogate(
            _vonmises(stress(E)), _get(r.result, f"input.{k}.temperature")
        )
        if bool((~(r0.abs() < abs_tol)).any()):
            bad.append(f"step {k}: the predictor's residual reaches {float(r0.abs().max()):.3e}")
            continue
        ours = _get(r.result, f"output.{k}.{variable}")
        c = compare(f"output.{k}.{variable}", ours, torch.zeros_like(ours), 0.0, 0.0)
        if not c.ok:
            bad.append(c.line())
    return bad


ORACLES: dict[str, Callable[[Run, str], list[str]]] = {
    "scaled_gold": scaled_gold,
    "exact_zero": exact_zero,
    "unscaled_density": unscaled_density,
    "j2_flow": j2_flow,
    "surrogate_rate": surrogate_rate,
    "polynomial_rate": polynomial_rate,
    "predictor_accepted": predictor_accepted,
}


def split_oracle(spec: str) -> tuple[str, bool]:
    """``name`` or ``name@converged`` -> (name, converged)."""
    name, _, where = spec.partition("@")
    if name not in ORACLES or where not in ("", "converged"):
        raise ValueError(f"unknown oracle '{spec}' (known: {sorted(ORACLES)}, @converged)")
    return name, where == "converged"


def judge(spec: str, r: Run, variable: str) -> list[str]:
    """Why oracle *spec* fails *variable* of run *r* (empty: it passes)."""
    name, _ = split_oracle(spec)
    try:
        return ORACLES[name](r, variable)
    except OracleError as e:
        return [str(e)]
