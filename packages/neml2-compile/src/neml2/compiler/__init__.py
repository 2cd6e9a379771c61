"""Ahead-of-time compilation of neml2 models (neml2-compile)."""
