"""The error taxonomy shared by every neml2 route.

It lives in the lowest package with torch so that the deployment pair
(``neml2-tensors`` + ``neml2-aoti-runtime``) has it; the C++ classes
``neml2::aoti::FatalError`` / ``ConvergenceError`` are translated onto these.
"""

from __future__ import annotations


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
    """An implicit solve did not converge; recoverable (cut the step and retry)."""

    recoverable = True


class ShapeError(ValueError):
    """Shapes of typed tensors do not fit together.

    Raised by the typed-tensor algebra (not a :class:`NEML2Error`: it is a programming
    error in a model, not a bad input file). The message names both shapes and the region
    (``dynamic batch``, ``sub-batch`` or ``base``) that disagrees.
    """
