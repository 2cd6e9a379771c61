"""Outputs whose gold cannot fail them (vacuous_gold.toml), and their own oracles.

* the committed list equals the computed one: every variable of every regression and
  verification check that an all-zero result passes, no more, no less;
* every listed oracle passes the unmutated output;
* every listed mutation of the output (scaled, zeroed, offset) fails the oracle, both
  applied to the result and applied to the top model's output during the run, while
  the case's own gold comparison passes it where the vacuity says it must;
* an oracle fails a NaN, an infinity, a missing key and an empty value, in our result
  and, for the oracles that read it, in the gold;
* zeroing the stand-in models' rates (_fixtures.py) passes each such case's own check
  but fails an oracle of every listed output of the case.
"""

from __future__ import annotations

import dataclasses

import _vacuous as V
import pytest
import torch

ENTRIES = V.read_list()
PAIRS = [(e, spec) for e in ENTRIES for spec in e.oracles]
TRIPLES = [(e, spec, m) for e, spec in PAIRS for m in e.oracles[spec]]
BROKEN = ("nan", "inf", "missing", "empty")
#: the listed cases whose input names a stand-in model of _fixtures.py
STAND_IN_CASES = sorted(
    {
        e.case
        for e in ENTRIES
        if any(t.__name__ in (V.FOLDER / e.case).read_text() for t in V.STAND_INS)
    }
)


def _pair_id(pair) -> str:
    e, spec = pair
    return f"{e.id}::{spec}"


def _triple_id(triple) -> str:
    e, spec, m = triple
    return f"{e.id}::{spec}::{m}"


def _gold_must_pass(entry: V.Entry, spec: str) -> bool:
    """Whether the case's gold comparison passes this mutation by construction: a scale
    ``f`` in ``[0, 2]`` moves each entry by at most ``|gold| <= atol + rtol |gold|``, an
    offset ``c`` by ``|c|``."""
    if spec.startswith("x"):
        return 0.0 <= float(spec[1:]) <= 2.0
    if spec.startswith("+"):
        return abs(float(spec[1:])) <= entry.atol
    return False


def _values(result: dict[str, torch.Tensor], variable: str) -> dict[str, torch.Tensor]:
    return {k: result[k] for k in V.keys_of(result, variable)}


@pytest.fixture(scope="module")
def computed() -> list[V.Vacuous]:
    return V.find_vacuous()


def test_list_is_current(computed):
    lines = V.list_differences(computed, ENTRIES)
    assert not lines, f"{V.LIST.name} is out of date:\n" + "\n".join(lines)


def test_list_check_catches_drift(computed):
    """Dropping, adding, doubling or misquoting an entry is each reported."""
    first = ENTRIES[0]
    bogus = dataclasses.replace(first, variable="not_a_variable")
    assert any(x.startswith("missing") for x in V.list_differences(computed, ENTRIES[1:]))
    assert any(x.startswith("stale") for x in V.list_differences(computed, [*ENTRIES, bogus]))
    assert "an output is listed twice" in V.list_differences(computed, [*ENTRIES, first])
    wrong = [dataclasses.replace(first, max_gold=first.max_gold * 2 + 1e-30), *ENTRIES[1:]]
    assert any("max |gold|" in x for x in V.list_differences(computed, wrong))
    wrong = [dataclasses.replace(first, atol=first.atol * 10), *ENTRIES[1:]]
    assert any("tolerances" in x for x in V.list_differences(computed, wrong))


def test_scan_finds_a_vacuous_variable(tmp_path):
    """The scan on a made-up case: exactly the variable a zero result passes is listed,
    with the boundary ``|gold| = atol + rtol |gold|`` counted as vacuous."""
    atol, rtol = 0.5, 0.5  # the boundary |gold| = atol + rtol |gold| is 1, exactly
    gold = {
        "input.1.a": [1.0],
        "output.1.tiny": [1.0, -1.0],
        "output.2.tiny": [0.0, 0.25],
        "output.1.big": [0.0, 0.25],
        "output.2.big": [0.0, 1.0 + 1e-9],  # one entry above: not vacuous
        "output.1.flat": 0.0,
    }
    gold = {k: torch.tensor(v, dtype=torch.float64) for k, v in gold.items()}
    torch.save(gold, tmp_path / "gold.pt")
    (tmp_path / "case.i").write_text(
        "[Tensors]\n  [times]\n    type = Python\n"
        "    expr = 'linspace(Scalar(0.0).dynamic_batch, Scalar(1.0).dynamic_batch, 3)'\n"
        "  []\n[]\n"
        "[Models]\n  [model]\n    type = ScalarLinearCombination\n"
        "    from = 'a'\n    to = 'tiny'\n  []\n[]\n"
        "[Drivers]\n  [driver]\n    type = TransientDriver\n    model = 'model'\n"
        "    prescribed_time = 'times'\n  []\n"
        "  [regression]\n    type = TransientRegression\n    driver = 'driver'\n"
        f"    reference = 'gold.pt'\n    atol = {atol!r}\n    rtol = {rtol!r}\n  []\n[]\n"
    )
    found = {v.variable: v for v in V.scan_case(tmp_path / "case.i", case="made-up")}
    assert sorted(found) == ["flat", "tiny"]
    assert found["tiny"].compared == 2 and found["tiny"].max_gold == 1.0
    assert found["flat"].max_gold == 0.0


def test_list_is_well_formed():
    for e in ENTRIES:
        assert any(not V.split_oracle(spec)[1] for spec in e.oracles), (
            f"{e.id}: needs an oracle on the file as written, not only @converged"
        )
        for muts in e.oracles.values():
            for m in muts:
                V.mutation(m)


@pytest.mark.parametrize("pair", PAIRS, ids=[_pair_id(p) for p in PAIRS])
def test_oracle_passes(pair):
    entry, spec = pair
    converged = V.split_oracle(spec)[1]
    r = V.run(entry, converged=converged)
    assert not r.error, r.error
    if not converged:  # as written, the case passes its own check (test_conformance.py)
        assert r.passed, f"{entry.case} fails its own check: {r.failures[:3]}"
    bad = V.judge(spec, r, entry.variable)
    assert not bad, f"{spec} fails the unmutated {entry.variable}: {bad[:3]}"


@pytest.mark.parametrize("triple", TRIPLES, ids=[_triple_id(t) for t in TRIPLES])
def test_result_mutation_is_caught(triple):
    """The mutated result fails the oracle; as written, the gold comparison passes it
    where the vacuity says so (the reason the oracle exists)."""
    entry, spec, m = triple
    converged = V.split_oracle(spec)[1]
    r = V.run(entry, converged=converged)
    bad = V.mutated(r.result, entry.variable, m)
    before, after = _values(r.result, entry.variable), _values(bad, entry.variable)
    assert any(not torch.equal(before[k], after[k]) for k in before), f"{m} changes nothing"
    caught = V.judge(spec, dataclasses.replace(r, result=bad), entry.variable)
    assert caught, f"{spec} passes {entry.variable} {m}"
    if not converged and _gold_must_pass(entry, m):
        passed, failures = V.recheck(entry, bad)
        assert passed, f"the gold comparison was expected to miss {m}: {failures[:3]}"


@pytest.mark.parametrize("triple", TRIPLES, ids=[_triple_id(t) for t in TRIPLES])
def test_model_mutation_is_caught(triple):
    """The top model returns the mutated output at every step (later steps see it): the
    oracle fails the run's result, unless the mutated run cannot even finish (a scale
    fed back as history compounds, x1000 overflows): then the run itself caught it."""
    entry, spec, m = triple
    r = V.run(entry, converged=V.split_oracle(spec)[1], mutate=m)
    if r.error:
        assert "ConvergenceError" in r.error, r.error
        return
    before = V.run(entry, converged=V.split_oracle(spec)[1])
    changed = _values(r.result, entry.variable)
    assert any(
        not torch.equal(v, changed[k]) for k, v in _values(before.result, entry.variable).items()
    )
    assert V.judge(spec, r, entry.variable), f"{spec} passes {entry.variable} {m} (model level)"


@pytest.mark.parametrize("pair", PAIRS, ids=[_pair_id(p) for p in PAIRS])
@pytest.mark.parametrize("broken", BROKEN)
def test_oracle_fails_broken_values(pair, broken):
    entry, spec = pair
    r = V.run(entry, converged=V.split_oracle(spec)[1])
    bad = V.mutated(r.result, entry.variable, broken)
    assert V.judge(spec, dataclasses.replace(r, result=bad), entry.variable), (
        f"{spec} passes {entry.variable} made {broken}"
    )


GOLD_PAIRS = [p for p in PAIRS if V.split_oracle(p[1])[0] in ("scaled_gold", "exact_zero")]


@pytest.mark.parametrize("pair", GOLD_PAIRS, ids=[_pair_id(p) for p in GOLD_PAIRS])
@pytest.mark.parametrize("broken", BROKEN)
def test_gold_oracle_fails_broken_gold(pair, broken):
    """An oracle that reads the gold fails a NaN, infinite, empty or missing reference."""
    entry, spec = pair
    r = V.run(entry, converged=V.split_oracle(spec)[1])
    bad = V.mutated(r.gold, entry.variable, broken)
    assert V.judge(spec, dataclasses.replace(r, gold=bad), entry.variable), (
        f"{spec} passes {entry.variable} against a gold made {broken}"
    )


@pytest.mark.parametrize("case", STAND_IN_CASES)
def test_stand_in_rates_zeroed(case):
    """The stand-in models' rates times 0: the case's gold comparison still passes (the
    vacuity as first reported), and an oracle of each listed output of the case fails."""
    entries = [e for e in ENTRIES if e.case == case]
    zeroed = V.run(entries[0], stand_in="x0")
    assert not zeroed.error, zeroed.error
    assert zeroed.passed, f"the gold comparison now catches zeroed rates: {zeroed.failures[:3]}"
    for e in entries:
        caught = []
        for spec in e.oracles:
            converged = V.split_oracle(spec)[1]
            r = V.run(e, converged=True, stand_in="x0") if converged else zeroed
            assert not r.error, r.error
            caught += V.judge(spec, r, e.variable)
        assert caught, f"no oracle of {e.id} fails with the stand-in rates zeroed"
