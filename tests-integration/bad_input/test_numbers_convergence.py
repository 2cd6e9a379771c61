"""Bad input, items 7, 8 and 9: numbers checked at load, failed points named, cache verified.

* Item 7: constant elastic coefficients outside their physical range, any NaN or
  infinite literal parameter, a token that looks like a number but is none, a time
  history that does not increase, and a parameter name that silently became an input
  variable are errors (or, for a near miss of a defined name, a warning) that name the
  option's file:line.
* Item 8: a failed Newton solve names the failed points (flat batch indices), the
  iterations and the worst residual (``nan`` when a point is NaN); a NaN point fails
  alone and does not hold the other points' loop to ``max_its``.
* Item 9: a damaged compile-cache entry (truncated, altered, no manifest) is recompiled
  with a warning that names the entry and its file (AOT Inductor replaced by a fake
  here; the export is real).

Rows that pass on purpose (exit 0) show the harness can tell.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import pytest
from _table import HELLO, Api, Cli, check_row, ids

from neml2.drivers._cli import run_main
from neml2.models import load_input, load_model
from neml2.tensors import ConvergenceError, FatalError

# ---------------------------------------------------------------- item 7: elastic constants


def _coef(values: str, types: str = "YOUNGS_MODULUS POISSONS_RATIO") -> tuple[str, ...]:
    return (
        "{hello}/unit.i",
        "unit",
        f"Models/elasticity/coefficients='{values}'",
        f"Models/elasticity/coefficient_types='{types}'",
    )


def _elastic(rid: str, values: str, fragment: str, types: str = "YOUNGS_MODULUS POISSONS_RATIO"):
    return Cli(rid, run_main, _coef(values, types), 1, fragment)


#: a derivative-only unit test of the hello model (any physical constants pass it)
DERIVATIVES_ONLY = f"""
!include {HELLO}/input.i
[Tensors]
  [strain]
    type = Python
    expr = 'SR2.fill(1e-3, -3e-4, -3e-4, 1e-4, 0, 0)'
  []
[]
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strain'
    check_values = false
  []
[]
"""

TRANSIENT = f"""
!include {HELLO}/input.i
[Tensors]
  [times]
    type = Python
    expr = '{{times}}'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
[]
"""
#: the line of ``prescribed_time`` in TRANSIENT
TIME_LINE = 1 + TRANSIENT.splitlines().index("    prescribed_time = 'times'")
INCREASING = "Scalar(torch.linspace(0, 1, 4).reshape(4, 1).expand(4, 2).clone())"


def _times(rid: str, times: str, exit_code: int, fragment: str, extra: tuple[str, ...] = ()):
    files = {"t.i": TRANSIENT.replace("{times}", times)}
    return Cli(
        rid, run_main, ("t.i", "driver", *extra, "--quiet"), exit_code, fragment, files=files
    )


def _hardening(token: str) -> dict[str, str]:
    text = "[Models]\n  [h]\n    type = LinearIsotropicHardening\n"
    return {"h.i": text + f"    hardening_modulus = {token}\n  []\n[]\n"}


def _solver_option(token: str) -> dict[str, str]:
    return {"s.i": f"[Solvers]\n  [newton]\n    type = Newton\n    abs_tol = {token}\n  []\n[]\n"}


def _near_miss(tmp: Path):
    """Load the hello model with ``coefficients = 'stres 0.3'`` (one letter from the
    [Tensors] name 'stress'), warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ctx = load_input(HELLO / "unit.i", ["Models/elasticity/coefficients='stres 0.3'"])
        return ctx.top_model("elasticity")


# ---------------------------------------------------------------- item 8: J2 radial return

J2 = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4).reshape(4, 1).expand(4, 3).clone())'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1, 1) * torch.tensor([
              [1e-2, -5e-3, -5e-3, 0, 0, 0],
              [{bad}, 0, 0, 0, 0, 0],
              [2e-2, -1e-2, -1e-2, 0, 0, 0]]))'
  []
[]
[Models]
  [elastic_strain]
    type = SR2LinearCombination
    from = 'E plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 100
  []
  [flow]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress'
    to = 'flow_direction'
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [integrate_Ep]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [surface]
    type = ComposedModel
    models = 'elastic_strain elasticity mandel_stress vonmises yield_surface normality Eprate
              consistency integrate_Ep'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'flow_rate'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'surface'
    unknowns = 'plastic_strain flow_rate'
    residuals = 'plastic_strain_residual complementarity'
  []
[]
[Solvers]
  [newton]
    type = {solver}
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'E'
    prescribed_SR2_values = 'strains'
  []
[]
"""


def _j2(bad: str = "0", solver: str = "Newton") -> dict[str, str]:
    return {"j2.i": J2.replace("{bad}", bad).replace("{solver}", solver)}


def _j2_row(rid, files, exit_code, fragment, *overrides, regex=False):
    return Cli(
        rid,
        run_main,
        ("j2.i", "driver", *overrides, "--quiet"),
        exit_code,
        fragment,
        files=files,
        regex=regex,
    )


UNREACHABLE = (
    "Solvers/newton/max_its=2",
    "Solvers/newton/abs_tol=1e-300",
    "Solvers/newton/rel_tol=1e-300",
)


def _j2_forward_nan(tmp: Path):
    """The J2 model on four points, NaN strain at point 2 (one step, py-eager)."""
    import torch

    model = load_model(tmp / "j2.i", "model")
    x = {n: torch.zeros(4, *t.BASE_SHAPE, dtype=torch.float64) for n, t in model.input_spec.items()}
    x["t"] += 1.0
    x["E"][:, 0] = torch.tensor([1e-2, 2e-3, float("nan"), 5e-3], dtype=torch.float64)
    with torch.no_grad():
        return model.forward(x)


# ---------------------------------------------------------------- item 9: compile cache

ELASTICITY = f"!include {HELLO}/input.i\n"


@contextlib.contextmanager
def _fake_aoti():
    """AOT Inductor replaced by a fake that writes a small package (the export is real)."""
    import neml2.compiler._compile as compile_module

    def fake(ep, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"fake package " + b"x" * 4000)

    real = compile_module._aoti
    compile_module._aoti = fake
    try:
        yield
    finally:
        compile_module._aoti = real


def _compile(tmp: Path, out: str):
    from neml2.compiler import CompileOptions, compile_file

    return compile_file(
        tmp / "e.i", CompileOptions.from_strings("elasticity"), tmp / out, cache_dir=tmp / "cache"
    )


def _cached(damage):
    """prepare: compile once into tmp/cache, then *damage(pt2, manifest)* its entry."""

    def prepare(tmp: Path) -> None:
        with _fake_aoti():
            res = _compile(tmp, "first")
        key = res.graphs[0].key
        damage(tmp / "cache" / f"{key}.pt2", tmp / "cache" / f"{key}.json")

    return prepare


def _recompile_strict(tmp: Path):
    """Compile again with the cache's warnings as errors."""
    with _fake_aoti(), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return _compile(tmp, "second")


def _truncate(pt2: Path, manifest: Path) -> None:
    pt2.write_bytes(pt2.read_bytes()[:100])


def _alter(pt2: Path, manifest: Path) -> None:
    data = bytearray(pt2.read_bytes())
    data[50] ^= 0x01
    pt2.write_bytes(bytes(data))


def _drop_manifest(pt2: Path, manifest: Path) -> None:
    manifest.unlink()


def _cache_row(rid: str, damage, fragment: str, regex: bool = False) -> Api:
    return Api(
        rid,
        _recompile_strict,
        RuntimeWarning,
        fragment,
        files={"e.i": ELASTICITY},
        prepare=_cached(damage),
        regex=regex,
    )


ROWS = [
    # ------------------------------------------------------------ 7: elastic constants
    _elastic("elastic-poisson-half", "200e3 0.5", "POISSONS_RATIO = 0.5 must lie in (-1, 0.5)"),
    _elastic("elastic-poisson-minus-one", "200e3 -1", "POISSONS_RATIO = -1 must lie in"),
    _elastic("elastic-poisson-above-half", "200e3 0.7", "POISSONS_RATIO = 0.7 must lie in"),
    _elastic("elastic-youngs-zero", "0 0.3", "YOUNGS_MODULUS = 0 must be positive"),
    _elastic("elastic-youngs-negative", "-200e3 0.3", "YOUNGS_MODULUS = -200000 must be"),
    _elastic(
        "elastic-bulk-negative",
        "-1 5",
        "BULK_MODULUS = -1 must be positive",
        "BULK_MODULUS SHEAR_MODULUS",
    ),
    _elastic(
        "elastic-shear-zero",
        "100 0",
        "SHEAR_MODULUS = 0 must be positive",
        "BULK_MODULUS SHEAR_MODULUS",
    ),
    _elastic(
        "elastic-youngs-shear-give-negative-bulk",
        "300 50",
        "YOUNGS_MODULUS and SHEAR_MODULUS give a bulk modulus K of -33.3333",
        "YOUNGS_MODULUS SHEAR_MODULUS",
    ),
    _elastic(
        "elastic-lambda-below-minus-two-thirds-mu",
        "-30 30",
        "LAME_LAMBDA and SHEAR_MODULUS give a bulk modulus K of -10",
        "LAME_LAMBDA SHEAR_MODULUS",
    ),
    Cli(
        "elastic-negative-lambda-is-physical",
        run_main,
        (
            "u.i",
            "unit",
            "Models/elasticity/coefficients='-10 30'",
            "Models/elasticity/coefficient_types='LAME_LAMBDA SHEAR_MODULUS'",
        ),
        0,
        "passed",
        files={"u.i": DERIVATIVES_ONLY},
    ),
    # ------------------------------------------------------------ 7: literals
    _elastic(
        "literal-nan-coefficient",
        "200e3 nan",
        "<command line>:1:1: option 'coefficients' = '200e3 nan': 'nan' is not a finite number",
    ),
    _elastic("literal-inf-coefficient", "inf 0.3", "'inf' is not a finite number"),
    Api(
        "literal-minus-inf-any-model",
        lambda tmp: load_model(tmp / "h.i", "h"),
        FatalError,
        "h.i:4:5: option 'hardening_modulus' = '-inf': '-inf' is not a finite number",
        files=_hardening("-inf"),
    ),
    Api(
        "float-option-nan",
        lambda tmp: load_input(tmp / "s.i").object("Solvers", "newton"),
        FatalError,
        "s.i:4:5: option 'abs_tol' = 'nan' is NaN",
        files=_solver_option("nan"),
    ),
    _elastic(
        "number-like-token",
        "2OO 0.3",
        "option 'coefficients' = '2OO' is not a number",
    ),
    # ------------------------------------------------------------ 7: names that became inputs
    Cli(
        "bare-name-the-unit-test-lacks",
        run_main,
        ("{hello}/unit.i", "unit", "Models/elasticity/coefficients='abc 0.3'"),
        1,
        "('abc' is an input variable because <command line>:1:1: option 'coefficients' = "
        "'abc' is not a number, a [Tensors] name or a model output)",
    ),
    _times(
        "bare-name-the-transient-driver-lacks",
        INCREASING,
        1,
        "input(s) abc are neither prescribed (prescribed_<Type>_names), the time 't', nor "
        "history (name~1) ('abc' is an input variable because",
        ("Models/elasticity/coefficients='abc 0.3'",),
    ),
    Api(
        "bare-name-one-letter-from-a-tensor-warns",
        _near_miss,
        UserWarning,
        "option 'coefficients' = 'stres' is not a number, a [Tensors] name or a model output; "
        "it becomes the input variable 'stres' (did you mean 'stress'?)",
    ),
    # ------------------------------------------------------------ 7: time history
    _times(
        "time-decreasing",
        "Scalar(torch.tensor([0.0, 1.0, 0.5, 2.0]))",
        1,
        f"t.i:{TIME_LINE}:5: prescribed_time 'times' must increase at every step: at step 2, "
        "t[2] = 0.5 does not exceed t[1] = 1",
    ),
    _times(
        "time-repeated",
        "Scalar(torch.tensor([0.0, 1.0, 1.0, 2.0]))",
        1,
        "at step 2, t[2] = 1 does not exceed t[1] = 1",
    ),
    _times(
        "time-nan",
        "Scalar(torch.tensor([0.0, math.nan, 1.0, 2.0]))",
        1,
        "at step 1, t[1] = nan does not exceed t[0] = 0",
    ),
    _times(
        "time-one-batch-point-goes-back",
        "Scalar(torch.tensor([[0.0, 0.0], [1, 1], [2, 0.5], [3, 3]]))",
        1,
        "at step 2 at batch index 1, t[2] = 0.5 does not exceed t[1] = 1",
    ),
    _times("time-increasing-passes", INCREASING, 0, ""),
    # ------------------------------------------------------------ 8: failed points named
    _j2_row(
        "newton-nan-point-fails-alone",
        _j2("math.nan"),
        3,
        r"step 1 of 3 \(t = 0\.333333\): ImplicitUpdate 'return_map': Newton did not converge "
        r"at 1 of 3 points after [1-5] iterations; worst residual norm nan "
        r"\(failed points 1; abs_tol",
        regex=True,
    ),
    _j2_row(
        "line-search-nan-point-fails-alone",
        _j2("math.nan", "NewtonWithLineSearch"),
        3,
        r"Newton did not converge at 1 of 3 points after [1-5] iterations; worst residual "
        r"norm nan \(failed points 1; abs_tol",
        regex=True,
    ),
    _j2_row(
        "newton-unreachable-tolerance-names-points",
        _j2(),
        3,
        r"did not converge at 2 of 3 points after 2 iterations; worst residual norm "
        r"\d\.\d{3}e[-+]\d+ \(failed points 0, 2; abs_tol 1e-300, rel_tol 1e-300, max_its 2\)",
        *UNREACHABLE,
        regex=True,
    ),
    _j2_row("j2-passes-when-finite", _j2(), 0, ""),
    Api(
        "forward-nan-point-names-it",
        _j2_forward_nan,
        ConvergenceError,
        "did not converge at 1 of 4 points after 1 iterations; worst residual norm nan "
        "(failed points 2; abs_tol",
        files=_j2(),
    ),
    # ------------------------------------------------------------ 9: compile cache
    _cache_row(
        "cache-truncated-entry",
        _truncate,
        r"entry [0-9a-f]{32} \(\[elasticity\] cpu/float64/forward\) is damaged: "
        r".*/cache/[0-9a-f]{32}\.pt2 has 100 bytes, its manifest says \d+",
        regex=True,
    ),
    _cache_row("cache-altered-entry", _alter, "does not match the sha256 in its manifest"),
    _cache_row("cache-entry-without-manifest", _drop_manifest, ".json is missing"),
]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)
