"""The convergence-rate check of a global Newton, from its residual norms.

Quadratic convergence means ``rho_{k+1} <= C rho_k^2`` near the solution, with
``rho = |r| / F`` the residual relative to a force scale ``F`` (the largest reaction of
the load path, so that ``C`` is a number without units). The check takes, per Newton
solve, the **last** pair ``(rho_k, rho_{k+1})`` whose ``rho_{k+1}`` is still above the
round-off floor, and bounds its ``C``: a Newton with the consistent tangent gives ``C``
of order one; a modified Newton (a fixed tangent) converges linearly, ``rho_{k+1} ~ q
rho_k``, so its last ``C ~ q / rho_k`` is large (the check must reject it, and a test
makes sure it does).
"""

from __future__ import annotations

from itertools import pairwise

#: residuals below FLOOR * scale are round-off and take no part in the rate
FLOOR = 1e-11
#: the largest quadratic constant C accepted
BOUND = 20.0


def last_constant(residuals: list[float], scale: float, floor: float = FLOOR) -> float | None:
    """``C = rho_{k+1} / rho_k^2`` of the last pair of *residuals* above the floor, or
    None when no pair is (a solve that converged in one iteration, an elastic step).

    Args:
        residuals: the residual norms of one Newton solve, in order.
        scale: the force scale ``F`` (``rho = r / F``).
        floor: the round-off floor, relative to *scale*.
    """
    rho = [r / scale for r in residuals]
    pairs = [(a, b) for a, b in pairwise(rho) if b > floor]
    if not pairs:
        return None
    a, b = pairs[-1]
    return b / a**2


def rate_table(sequences: list[list[float]], scale: float) -> str:
    """The residual sequences with their last quadratic constants, one line each (for
    the test's output and failure messages)."""
    lines = []
    for i, seq in enumerate(sequences):
        c = last_constant(seq, scale)
        cs = "-" if c is None else f"{c:.2e}"
        lines.append(f"  {i:3d}: C={cs:>9s}  " + " ".join(f"{r:.2e}" for r in seq))
    return "\n".join(lines)


def check_quadratic(sequences: list[list[float]], scale: float, *, at_least: int) -> list[float]:
    """Assert that every sequence with a pair above the floor has ``C <= BOUND``, and
    that at least *at_least* sequences have one (the check cannot pass vacuously).

    Returns:
        The constants ``C`` of the sequences that have one.
    """
    constants = [c for c in (last_constant(s, scale) for s in sequences) if c is not None]
    table = rate_table(sequences, scale)
    assert len(constants) >= at_least, (
        f"only {len(constants)} Newton solves with a pair above round-off, expected "
        f">= {at_least}:\n{table}"
    )
    bad = [c for c in constants if not (c <= BOUND)]
    assert not bad, f"not quadratic: C = {bad} > {BOUND} (scale {scale:.3e}):\n{table}"
    return constants
