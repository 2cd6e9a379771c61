"""The comparison helper behind every check driver: it cannot pass by accident."""

from __future__ import annotations

import math

import pytest
import torch

from neml2.drivers._compare import compare, compare_block, format_error, worst_of

NAN, INF = math.nan, math.inf


def t(*values):
    return torch.tensor(values, dtype=torch.float64)


def test_within_tolerance_passes_and_reports_the_worst():
    c = compare("x", t(1.0, 2.0), t(1.0, 2.0 + 1e-9), 1e-5, 1e-8)
    assert c.ok and c.bad == 0 and c.total == 2
    assert c.worst == pytest.approx(1e-9)


@pytest.mark.parametrize(
    "ours, expected, side",
    [
        (t(NAN, 1.0), t(1.0, 1.0), "ours"),
        (t(1.0, 1.0), t(NAN, 1.0), "expected"),
        (t(INF, 1.0), t(1.0, 1.0), "ours"),
        (t(1.0, 1.0), t(-INF, 1.0), "expected"),
        (t(INF, 1.0), t(-INF, 1.0), "ours and expected"),
        (t(NAN, 1.0), t(INF, 1.0), "ours and expected"),
    ],
)
def test_one_sided_or_different_nonfinite_fails(ours, expected, side):
    c = compare("x", ours, expected, 1e-5, 1e-8)
    assert not c.ok and c.bad == 1
    assert f"non-finite on one side only ({side})" in c.reason


def test_infinite_expected_is_not_within_an_infinite_tolerance():
    # rtol * |inf| = inf: a plain "err <= atol + rtol*|w|" would accept anything
    assert not compare("x", t(5.0), t(INF), 1e-5, 1e-8).ok


def test_same_nonfinite_where_the_expected_says_so_passes():
    c = compare("x", t(NAN, INF, -INF, 1.0), t(NAN, INF, -INF, 1.0), 1e-5, 1e-8)
    assert c.ok and c.worst == 0.0


def test_same_nonfinite_fails_when_the_expected_is_an_oracle():
    c = compare("d", t(NAN), t(NAN), 1e-5, 1e-8, expected_may_be_nonfinite=False)
    assert not c.ok and math.isnan(c.worst)


def test_worst_is_nan_when_any_entry_is_nan_on_one_side():
    c = compare("x", t(1.0, NAN, 3.0), t(1.5, 2.0, 3.0), 1e-5, 1e-8)
    assert math.isnan(c.worst)
    assert "max |error| nan" in c.line()


def test_empty_expected_fails():
    c = compare("x", t(1.0), torch.zeros(0, dtype=torch.float64), 1e-5, 1e-8)
    assert not c.ok and "expected value is empty" in c.reason


def test_empty_ours_fails():
    c = compare("x", torch.zeros(0, 6, dtype=torch.float64), t(1.0), 1e-5, 1e-8)
    assert not c.ok and "our value is empty" in c.reason


def test_shapes_that_do_not_broadcast_fail():
    c = compare("x", torch.zeros(2, 6), torch.zeros(3, 6), 1e-5, 1e-8)
    assert not c.ok and "do not broadcast" in c.reason


def test_broadcasting_counts_every_broadcast_entry():
    c = compare("x", torch.zeros(4, 6), torch.ones(6), 1e-5, 1e-8)
    assert not c.ok and c.bad == 24 and c.total == 24


@pytest.mark.parametrize("rtol, atol", [(NAN, 1e-8), (1e-5, INF), (-1.0, 0.0)])
def test_bad_tolerances_fail(rtol, atol):
    assert not compare("x", t(1.0), t(1.0), rtol, atol).ok


def test_worst_of_ranks_nan_first_and_handles_none():
    a = compare("a", t(1.0), t(2.0), 0, 0)
    b = compare("b", t(NAN), t(2.0), 0, 0)
    assert worst_of([a, b]).what == "b"
    assert worst_of([]) is None
    assert format_error(NAN) == "nan" and format_error(INF) == "inf"
    assert format_error(1.5e-3) == "1.500e-03"


# ---------------------------------------------------------------- a derivative block, whole
def test_block_error_is_relative_to_its_largest_entry():
    ref = torch.tensor([[1e5, 0.0], [0.0, 1e5]], dtype=torch.float64)
    ours = ref + torch.tensor([[1e3, 0.0], [0.0, 0.0]], dtype=torch.float64)
    c = compare_block("dy/dx", ours, ref, 1e-5, 1e-8)
    assert not c.ok and c.bad == 1 and c.total == 4
    assert c.worst == pytest.approx(1e3) and c.scale == 1e5 and c.relative == pytest.approx(1e-2)
    assert c.line().startswith("dy/dx: max |error| 1.000e+03, relative 1.000e-02 (max |J_ref|")
    assert compare_block("dy/dx", ours, ref, 2e-2, 1e-8).ok


def test_block_round_off_in_a_zero_entry_passes():
    # entrywise, 1e-9 in an exact zero would fail atol 1e-12; normwise it is 1e-14 of the block
    ref = torch.tensor([1e5, 0.0], dtype=torch.float64)
    assert compare_block("d", ref + t(0.0, 1e-9), ref, 1e-12, 1e-12).ok
    assert not compare("d", ref + t(0.0, 1e-9), ref, 1e-12, 1e-12).ok


@pytest.mark.parametrize("ours, ref", [(t(NAN, 1.0), t(1.0, 1.0)), (t(1.0, 1.0), t(1.0, INF))])
def test_block_with_a_nonfinite_entry_fails(ours, ref):
    c = compare_block("d", ours, ref, 1e-5, 1e-8)
    assert not c.ok and math.isnan(c.worst) and "max |error| nan" in c.line()


def test_block_of_other_shape_or_empty_fails():
    assert "shapes differ" in compare_block("d", t(1.0, 2.0), t(1.0), 1e-5, 1e-8).reason
    empty = torch.zeros(0, dtype=torch.float64)
    assert "empty" in compare_block("d", empty, empty, 1e-5, 1e-8).reason


def test_block_error_in_a_zero_block():
    c = compare_block("d", t(0.0, 1e-3), t(0.0, 0.0), 1e-5, 1e-8)
    assert not c.ok and c.relative == INF
    assert compare_block("d", t(0.0, 0.0), t(0.0, 0.0), 1e-5, 1e-8).relative == 0.0
