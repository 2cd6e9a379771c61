"""Ahead-of-time compilation of neml2 models (neml2-compile).

``compile_file("model.i", CompileOptions.from_strings("elasticity", ["stress:strain"]), "out")``
writes ``out/elasticity/metadata.json``, ``out/elasticity/<device>/<dtype>/*.pt2``, one
``out/elasticity/<device>/elasticity_meta.json`` per device and the HIT stub
``out/elasticity_aoti.i``; see docs/aoti.md.
"""

from neml2.compiler._cli import compile_file, main
from neml2.compiler._compile import (
    SCHEMA_VERSION,
    CompileResult,
    GraphReport,
    compile_model,
    default_cache_dir,
)
from neml2.compiler._options import CompileOptions, DerivativePair, parse_derivative

__all__ = [
    "SCHEMA_VERSION",
    "CompileOptions",
    "CompileResult",
    "DerivativePair",
    "GraphReport",
    "compile_file",
    "compile_model",
    "default_cache_dir",
    "main",
    "parse_derivative",
]
