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

A derivative block (``ModelUnitTest``) is judged as a whole by
:func:`compare_block`: its largest entry error against the block's largest entry,
``max |J - J_ref| <= atol + rtol * max |J_ref|``, and its line gives that error
both absolute and relative to ``max |J_ref|``.
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
        scale: for a block compared as a whole (:func:`compare_block`), the largest
            magnitude of the expected block, ``max |J_ref|``; None otherwise
    """

    what: str
    ok: bool
    worst: float
    bad: int
    total: int
    reason: str = ""
    scale: float | None = None

    @property
    def relative(self) -> float | None:
        """``worst / scale`` for a block (``0`` when both are zero, ``inf`` for an
        error in a zero block); None for an entrywise comparison."""
        if self.scale is None:
            return None
        if math.isnan(self.worst):
            return math.nan
        if self.scale > 0 or math.isnan(self.scale):
            return self.worst / self.scale
        return 0.0 if self.worst == 0 else math.inf

    def line(self) -> str:
        """One line for a report: the label, the worst error and the verdict.

        A block adds the error relative to its largest entry:
        ``dstress/dstrain: max |error| 1.000e+03, relative 1.000e-02 (max |J_ref| 1.000e+05)``.
        """
        head = f"{self.what}: max |error| {format_error(self.worst)}"
        if self.scale is not None:
            head += (
                f", relative {format_error(self.relative)} (max |J_ref| {format_error(self.scale)})"
            )
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


def compare_block(
    what: str, ours: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float
) -> Comparison:
    """Compare a derivative block *ours* with its reference *expected* as a whole.

    With ``err = max |ours - expected|`` and ``scale = max |expected|`` over every
    entry (all batch points, all components), the block passes when
    ``err <= atol + rtol * scale``: a normwise test, so an entry that is zero in
    exact arithmetic and round-off in both computations does not fail a block whose
    other entries are large. The reference is computed (an oracle), so a
    non-finite entry on either side fails, and so do an empty block and shapes
    that differ.

    Args:
        what: label used in messages (``"dstress/dstrain"``)
        ours: our block, any shape
        expected: the reference block, the same shape
        rtol: tolerance relative to ``max |expected|``
        atol: absolute tolerance

    Returns:
        a :class:`Comparison` with ``scale = max |expected|``; ``worst`` is ``err``
        (``nan`` when any entry is non-finite), ``bad`` counts the entries beyond
        ``atol + rtol * scale``.
    """
    if not (math.isfinite(rtol) and math.isfinite(atol)) or rtol < 0 or atol < 0:
        return Comparison(
            what, False, math.nan, 0, 0, f"invalid tolerances rtol={rtol} atol={atol}"
        )
    got = ours.detach().to("cpu", torch.float64)
    want = expected.detach().to("cpu", torch.float64)
    if want.numel() == 0 or got.shape != want.shape:
        why = (
            "the reference block is empty"
            if want.numel() == 0
            else f"shapes differ: ours {tuple(ours.shape)}, reference {tuple(expected.shape)}"
        )
        return Comparison(what, False, math.nan, 0, 0, why)
    total = want.numel()
    finite = torch.isfinite(got) & torch.isfinite(want)
    nonfinite = int((~finite).sum())
    if nonfinite:
        sides = [s for s, x in (("ours", got), ("reference", want)) if not bool(x.isfinite().all())]
        return Comparison(
            what,
            False,
            math.nan,
            nonfinite,
            total,
            f"{nonfinite} of {total} entries non-finite ({' and '.join(sides)})",
            scale=float(want[torch.isfinite(want)].abs().max()) if bool(finite.any()) else 0.0,
        )
    err = (got - want).abs()
    worst, scale = float(err.max()), float(want.abs().max())
    bound = atol + rtol * scale
    bad = int((~(err <= bound)).sum())
    if bad == 0:
        return Comparison(what, True, worst, 0, total, scale=scale)
    reason = f"{bad} of {total} entries beyond atol {atol:g} + rtol {rtol:g}*max|J_ref|"
    return Comparison(what, False, worst, bad, total, reason, scale=scale)


def worst_of(results: list[Comparison]) -> Comparison | None:
    """The comparison with the largest error (a NaN worst ranks above any number)."""

    def rank(c: Comparison) -> float:
        return math.inf if math.isnan(c.worst) else c.worst

    return max(results, key=rank, default=None)
