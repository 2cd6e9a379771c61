"""Ahead-of-time compilation of neml2 models (neml2-compile)."""

from neml2.compiler._options import CompileOptions, DerivativePair, parse_derivative

__all__ = ["CompileOptions", "DerivativePair", "parse_derivative"]
