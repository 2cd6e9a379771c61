"""The error taxonomy shared by every neml2 route.

It lives in the lowest package with torch so that the deployment pair
(``neml2-tensors`` + ``neml2-aoti-runtime``) has it; the C++ classes
``neml2::aoti::FatalError`` / ``ConvergenceError`` are translated onto these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


class NEML2Error(Exception):
    """Base class of every error neml2 raises on purpose."""

    #: True when the caller may recover, e.g. by cutting its time step and retrying.
    recoverable: bool = False


class FatalError(NEML2Error):
    """Bad input, bad artifact or bad option.

    The message names the file and line, the option or the variable at fault.
    """

    recoverable = False


class ConvergenceError(NEML2Error):
    """An implicit solve did not converge; recoverable (cut the step and retry).

    Constructible from a message alone (``ConvergenceError("...")``, as the C++
    runtimes' errors are mapped); where the solver can tell, it also carries:

    * ``failed_indices``: flat (C-order) indices into the batch of the points that
      failed, a tuple of ints (empty when unknown);
    * ``failed_mask``: a bool tensor of the batch shape, True at the failed points
      (``None`` when unknown);
    * ``n_points``: how many points were solved (``None`` when unknown);
    * ``iterations``: the iterations the solve ran (``None`` when unknown);
    * ``worst_residual``: the largest residual norm among the failed points, a float,
      ``nan`` when one of them is NaN (``None`` when unknown).

    :meth:`at_points` builds one with a message that states these fields. The error
    pickles with its fields.
    """

    recoverable = True

    #: how many failed indices a message lists before it abbreviates
    LISTED = 5

    def __init__(
        self,
        message: str = "",
        *,
        failed_indices: Sequence[int] = (),
        failed_mask: torch.Tensor | None = None,
        n_points: int | None = None,
        iterations: int | None = None,
        worst_residual: float | None = None,
    ):
        """Make the error from a message and, where known, the failed points.

        Args:
            message: The message.
            failed_indices: Flat (C-order) indices into the batch of the failed points.
            failed_mask: A bool tensor of the batch shape ``(*B)``, True at the failed points.
            n_points: How many points were solved.
            iterations: The iterations the solve ran.
            worst_residual: The largest residual norm among the failed points.
        """
        super().__init__(message)
        self.failed_indices: tuple[int, ...] = tuple(int(i) for i in failed_indices)
        self.failed_mask = failed_mask
        self.n_points = n_points
        self.iterations = iterations
        self.worst_residual = worst_residual
        #: what :meth:`at_points` was given, for :meth:`within`
        self._parts: dict[str, str] | None = None

    @classmethod
    def at_points(
        cls,
        what: str,
        failed_mask: torch.Tensor,
        iterations: int | None,
        residual_norm: torch.Tensor | None = None,
        *,
        worst_residual: float | None = None,
        solver: str = "Newton",
        detail: str = "",
        note: str = "",
    ) -> ConvergenceError:
        """The error of a batched solve that failed where *failed_mask* is True.

        Message: ``"<what>: <solver> did not converge at 3 of 100 points after 20
        iterations; worst residual norm nan (failed points 4, 17, 55; <detail>)<note>"``.

        Args:
            what: What was solved (the message's head, e.g. the model's label).
            failed_mask: A bool tensor of the batch shape ``(*B)``, True at the failed points.
            iterations: The iterations the solve ran, or ``None``.
            residual_norm: The residual norms, broadcastable to ``(*B)``; gives the worst
                residual of the failed points.
            worst_residual: The worst residual, when *residual_norm* is not given.
            solver: The solver's name in the message.
            detail: Text added inside the parentheses, after the failed points.
            note: Text appended to the message.

        Returns:
            The error, with every field set (``failed_indices`` from the mask, ``n_points``
                its size).
        """
        mask = failed_mask.detach().to("cpu", torch.bool)
        flat = mask.reshape(-1)
        indices, where = point_list(mask, cls.LISTED)
        if worst_residual is None and residual_norm is not None and indices:
            norms = residual_norm.detach().to("cpu", torch.float64).expand(mask.shape)
            worst_residual = _worst(norms.reshape(-1)[flat])
        its = "" if iterations is None else f" after {int(iterations)} iterations"
        worst = "" if worst_residual is None else f"; worst residual norm {worst_residual:.3e}"
        inside = f"failed points {where}" + (f"; {detail}" if detail else "")
        message = (
            f"{what}: {solver} did not converge at {len(indices)} of {flat.numel()} points"
            f"{its}{worst} ({inside}){note}"
        )
        err = cls(
            message,
            failed_indices=indices,
            failed_mask=mask,
            n_points=flat.numel(),
            iterations=None if iterations is None else int(iterations),
            worst_residual=worst_residual,
        )
        err._parts = {"what": what, "solver": solver, "detail": detail}
        return err

    def within(self, offset: int, batch_shape: Sequence[int], note: str = "") -> ConvergenceError:
        """Restate this error of a sub-range solve with indices into a larger batch.

        The solve covered the points ``[offset, offset + n)`` of a batch of shape
        *batch_shape* (flat, C order); points outside the solved range count as not failed
        (they were not solved).

        Args:
            offset: The flat index of the first solved point in the larger batch.
            batch_shape: The larger batch's shape.
            note: Text that ends the message.

        Returns:
            The restated error; without a mask (or when it does not fit), the same error
                with *note* appended.
        """
        total = 1
        for b in batch_shape:
            total *= int(b)
        if (
            self.failed_mask is None
            or self._parts is None
            or offset + self.failed_mask.numel() > total
        ):
            return self.with_context("", note)
        part = self.failed_mask.reshape(-1)
        mask = torch.zeros(total, dtype=torch.bool)
        mask[offset : offset + part.numel()] = part
        return type(self).at_points(
            self._parts["what"],
            mask.reshape(tuple(batch_shape)),
            self.iterations,
            worst_residual=self.worst_residual,
            solver=self._parts["solver"],
            detail=self._parts["detail"],
            note=note,
        )

    def with_context(self, prefix: str = "", suffix: str = "") -> ConvergenceError:
        """The same error (same fields) with text before and after its message.

        Args:
            prefix: Put before the message, followed by ``": "`` (nothing when empty).
            suffix: Appended to the message.

        Returns:
            A new error of the same type and fields.
        """
        message = str(self)
        if prefix:
            message = f"{prefix}: {message}"
        err = type(self)(message + suffix)
        err.__dict__.update(self.__dict__)
        return err


def point_list(
    mask: torch.Tensor, listed: int = ConvergenceError.LISTED
) -> tuple[tuple[int, ...], str]:
    """The batch points where *mask* is True, as every error about points names them.

    Args:
        mask: A bool tensor of the batch shape ``(*B)``.
        listed: How many indices the text lists before it abbreviates.

    Returns:
        The flat (C-order) indices and their text: ``"4, 17, 55"``, or past *listed*
            of them ``"4, 17, 55, 60, 61, ... (3 more)"``.
    """
    flat = mask.detach().to("cpu", torch.bool).reshape(-1)
    indices = tuple(int(i) for i in flat.nonzero().flatten().tolist())
    text = ", ".join(str(i) for i in indices[:listed])
    if len(indices) > listed:
        text += f", ... ({len(indices) - listed} more)"
    return indices, text


def _worst(norms: torch.Tensor) -> float:
    """The largest of *norms*, ``nan`` if one is NaN (``max`` would say so, but be explicit)."""
    if norms.numel() == 0:
        return math.nan
    if bool(torch.isnan(norms).any()):
        return math.nan
    return float(norms.max())


class ShapeError(ValueError):
    """Shapes of typed tensors do not fit together.

    Raised by the typed-tensor algebra (not a :class:`NEML2Error`: it is a programming
    error in a model, not a bad input file). The message names both shapes and the region
    (``dynamic batch``, ``sub-batch`` or ``base``) that disagrees.
    """
