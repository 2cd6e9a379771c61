"""The compiled-route conformance harness (test_conformance_routes.py, opt-in) in default
CI on two small cases: a unit test of an explicit model (values and derivative blocks,
the AOTIModel stub's v= tangents against py-eager's autograd) on py-jit and on py-aoti,
and the same case on py-aoti without its Jacobian compiled, which must fail naming the
block to compile, so the harness cannot rot unnoticed."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cases import FOLDER, load_input, on_route, run_case

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "aoti-cache"
CASE = FOLDER / "models" / "solid_mechanics" / "elasticity" / "LinearIsotropicElasticity.i"

OPEN = {
    "py-jit": {"jit_backend": "eager"},
    "py-aoti": {"pairs": [":"], "cache_dir": CACHE},
}


@pytest.mark.parametrize("route", sorted(OPEN))
def test_a_unit_test_case_passes_on_the_route(route):
    outcome = run_case(CASE, route, **OPEN[route])
    assert outcome.passed, outcome.reason


@pytest.mark.parametrize("route", sorted(OPEN))
def test_the_drivers_get_the_route_s_model(route):
    ctx = load_input(CASE)
    on_route(ctx, route, **OPEN[route])
    model = ctx.top_model("model")
    want = {"py-jit": "CompiledModel", "py-aoti": "AOTIModel"}[route]
    assert type(model).__name__ == want
    assert ctx.top_model("model") is model  # opened once per model
    assert type(model.reference_model).__name__ == "LinearIsotropicElasticity"


def test_a_failing_case_is_reported_with_its_reason():
    outcome = run_case(CASE, "py-aoti", pairs=[], cache_dir=CACHE)
    assert not outcome.passed
    assert "neml2-compile -d" in outcome.reason, outcome.reason


def test_a_route_without_a_typed_model_is_refused():
    with pytest.raises(ValueError, match="cpp-aoti has no typed model"):
        on_route(load_input(CASE), "cpp-aoti")
