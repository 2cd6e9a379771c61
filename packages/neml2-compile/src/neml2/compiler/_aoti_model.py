"""Deprecated location of the ``AOTIModel`` HIT shim: it moved to the runtime,
``neml2.aoti._aoti_model`` (neml2-aoti-runtime), which owns the artifact. This alias
goes in the next release of neml2-compile."""

from __future__ import annotations

import warnings

from neml2.aoti._aoti_model import AOTIModel

warnings.warn(
    "neml2.compiler._aoti_model moved to neml2.aoti._aoti_model (neml2-aoti-runtime); "
    "import AOTIModel from there (this alias goes in the next neml2-compile release)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["AOTIModel"]
