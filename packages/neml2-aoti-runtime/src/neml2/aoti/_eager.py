"""Deprecated: the former name of :mod:`neml2.aoti.cpp_eager`, kept for one release."""

from __future__ import annotations

import warnings

from neml2.aoti.cpp_eager import Model, python_interpreter

warnings.warn(
    "neml2.aoti._eager is deprecated and will be removed in the next release; "
    "import neml2.aoti.cpp_eager instead (the same Model and python_interpreter)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Model", "python_interpreter"]
