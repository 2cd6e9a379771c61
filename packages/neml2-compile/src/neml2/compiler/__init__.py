"""Ahead-of-time compilation of neml2 models (neml2-compile).

``compile_file("model.i", CompileOptions.from_strings("elasticity", ["stress:strain"]), "out")``
writes ``out/elasticity/metadata.json``, ``out/elasticity/<device>/<dtype>/*.pt2``, one
``out/elasticity/<device>/elasticity_meta.json`` per device and the HIT stub
``out/elasticity_aoti.i``; see docs/aoti.md.

The names below are imported on first use, so that ``neml2-compile`` reads its command
line and checks its folders before torch loads (seconds).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the module that defines it
_WHERE = {
    "SCHEMA_VERSION": "neml2.compiler._compile",
    "CompileOptions": "neml2.compiler._options",
    "CompileResult": "neml2.compiler._compile",
    "DerivativePair": "neml2.compiler._options",
    "ExportedModel": "neml2.compiler._compile",
    "GraphReport": "neml2.compiler._compile",
    "compile_file": "neml2.compiler._cli",
    "compile_model": "neml2.compiler._compile",
    "default_cache_dir": "neml2.compiler._defaults",
    "export_file": "neml2.compiler._source",
    "export_model": "neml2.compiler._compile",
    "main": "neml2.compiler._cli",
    "parse_derivative": "neml2.compiler._options",
}

__all__ = [
    "SCHEMA_VERSION",
    "CompileOptions",
    "CompileResult",
    "DerivativePair",
    "ExportedModel",
    "GraphReport",
    "compile_file",
    "compile_model",
    "default_cache_dir",
    "export_file",
    "export_model",
    "main",
    "parse_derivative",
]

if TYPE_CHECKING:
    from neml2.compiler._cli import compile_file, main
    from neml2.compiler._compile import (
        SCHEMA_VERSION,
        CompileResult,
        ExportedModel,
        GraphReport,
        compile_model,
        export_model,
    )
    from neml2.compiler._defaults import default_cache_dir
    from neml2.compiler._options import CompileOptions, DerivativePair, parse_derivative
    from neml2.compiler._source import export_file


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'neml2.compiler' has no attribute '{name}'")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
