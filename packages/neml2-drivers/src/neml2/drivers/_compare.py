"""The one comparison every check driver uses: ours against an expected value.

``ModelUnitTest``, ``TransientRegression`` and ``Verification`` all decide
pass/fail through :func:`compare`, so none of them can pass by accident:

* an entry passes only if ``|ours - expected| <= atol + rtol * |expected|``
  holds (written so that NaN makes it false, never ``err > tol``);
* a non-finite value on either side fails, unless both sides hold the *same*
  non-finite value at that entry (NaN and NaN, +inf and +inf: the expected
  value says so);
* an empty expected value fails (nothing was checked), and so do shapes that
  do not broadcast;
* the reported worst error is the true worst: ``nan`` when any compared entry
  is NaN on one side only, ``inf`` for a one-sided infinity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Comparison:
    """Outcome of one :func:`compare` call.

    Attributes:
        what: the label of the compared quantity (``"value of 'stress'"``)
        ok: True if every entry is within tolerance
        worst: the largest absolute error over the compared entries (``nan``
            when an entry is NaN on one side only; ``0.0`` never stands for
            "nothing compared": an empty comparison is not ok)
        bad: how many entries failed
        total: how many entries were compared (after broadcasting)
        reason: why the comparison failed, ``""`` when ok
    """

    what: str
    ok: bool
    worst: float
    bad: int
    total: int
    reason: str = ""

    def line(self) -> str:
        """One line for a report: the label, the worst error and the verdict."""
        head = f"{self.what}: max |error| {format_error(self.worst)}"
        return head if self.ok else f"{head}: {self.reason}"


def format_error(value: float) -> str:
    """An error for humans: ``nan`` / ``inf`` spelled out, numbers as ``%.3e``."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf"
    return f"{value:.3e}"


def compare(
    what: str,
    ours: torch.Tensor,
    expected: torch.Tensor,
    rtol: float,
    atol: float,
    *,
    expected_may_be_nonfinite: bool = True,
) -> Comparison:
    """Compare *ours* with *expected* entry by entry after broadcasting both.

    Args:
        what: label used in messages
        ours: our value, any shape broadcastable with *expected*
        expected: the reference value (gold, expected output, CSV column)
        rtol: relative tolerance (on ``|expected|``)
        atol: absolute tolerance
        expected_may_be_nonfinite: whether a non-finite expected entry matched
            by the same non-finite value of ours passes. True for a gold or an
            expected output written by someone; False where "expected" is
            computed from the same model (a derivative oracle), so NaN on both
            sides is a broken model, not an agreement.

    Returns:
        a :class:`Comparison`; ``ok`` is False on a tolerance miss, a one-sided
        non-finite entry, an empty expected value, an empty result or shapes
        that do not broadcast.
    """
    if not (math.isfinite(rtol) and math.isfinite(atol)) or rtol < 0 or atol < 0:
        return Comparison(
            what, False, math.nan, 0, 0, f"invalid tolerances rtol={rtol} atol={atol}"
        )
    got = ours.detach().to("cpu", torch.float64)
    want = expected.detach().to("cpu", torch.float64)
    if want.numel() == 0:
        return Comparison(what, False, math.nan, 0, 0, "the expected value is empty")
    if got.numel() == 0:
        return Comparison(
            what, False, math.nan, 0, 0, f"our value is empty (shape {tuple(ours.shape)})"
        )
    try:
        got, want = torch.broadcast_tensors(got, want)
    except RuntimeError:
        return Comparison(
            what,
            False,
            math.nan,
            0,
            0,
            f"shapes do not broadcast: ours {tuple(ours.shape)}, expected {tuple(expected.shape)}",
        )
    # The same non-finite value on both sides is a match the reference asked for.
    same_nonfinite = (torch.isnan(got) & torch.isnan(want)) | (
        torch.isinf(got) & torch.isinf(want) & (got == want)
    )
    if not expected_may_be_nonfinite:
        same_nonfinite = torch.zeros_like(same_nonfinite)
    err = (got - want).abs()
    # NaN compares False, and an infinity is never "within" (inf <= rtol * inf is True).
    within = (err <= atol + rtol * want.abs()) & torch.isfinite(got) & torch.isfinite(want)
    good = within | same_nonfinite
    total = good.numel()
    bad = int((~good).sum())
    compared = err[~same_nonfinite]
    if compared.numel() == 0:
        worst = 0.0
    elif bool(torch.isnan(compared).any()):
        worst = math.nan
    else:
        worst = float(compared.max())
    if bad == 0:
        return Comparison(what, True, worst, 0, total)
    nonfinite = int((~good & ~(torch.isfinite(got) & torch.isfinite(want))).sum())
    if nonfinite:
        sides = []
        if bool((~good & ~torch.isfinite(got)).any()):
            sides.append("ours")
        if bool((~good & ~torch.isfinite(want)).any()):
            sides.append("expected")
        reason = (
            f"{nonfinite} of {total} entries non-finite on one side only ({' and '.join(sides)})"
        )
        if bad > nonfinite:
            more = bad - nonfinite
            reason += f", and {more} more beyond atol {atol:g} + rtol {rtol:g}*|expected|"
    else:
        reason = f"{bad} of {total} entries beyond atol {atol:g} + rtol {rtol:g}*|expected|"
    return Comparison(what, False, worst, bad, total, reason)


def worst_of(results: list[Comparison]) -> Comparison | None:
    """The comparison with the largest error (a NaN worst ranks above any number)."""

    def rank(c: Comparison) -> float:
        return math.inf if math.isnan(c.worst) else c.worst

    return max(results, key=rank, default=None)
