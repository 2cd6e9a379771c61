"""Typed tensors for neml2 (``Scalar``, ``SR2``, ``SSR4``, ...) and the error taxonomy."""

from neml2.tensors._errors import ConvergenceError, FatalError, NEML2Error

__all__ = ["ConvergenceError", "FatalError", "NEML2Error"]
