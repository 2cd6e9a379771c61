"""neml2.aoti: run compiled (AOTI) neml2 models from Python (the py-aoti route).

This package is the Python face of ``libneml2``; together with
``neml2-tensors`` it is all a deployment needs::

    from neml2.aoti import Model
    m = Model("out/elasticity")            # or out/elasticity/metadata.json, or
    # Model("out/elasticity/cpu/elasticity_meta.json"): the per-device file picks cpu
    out = m.forward({"strain": strain})    # {"stress": (*B, 6)}
    out, J = m.jacobian({"strain": strain})  # J["stress"]["strain"]: (*B, 6, 6)
"""

from __future__ import annotations

from pathlib import Path

from neml2.aoti import _core, _ops  # noqa: F401  (_ops: the operators' fake kernels)
from neml2.aoti._core import (
    DispatchedModel,
    available_devices,
    broadcast_batch_shape,
    check_torch_compatible,
    torch_version,
)
from neml2.aoti._model import Model, read_metadata, sub_batch_shape
from neml2.aoti._schema import SCHEMA_VERSION

__version__ = _core.version()

__all__ = [
    "SCHEMA_VERSION",
    "DispatchedModel",
    "Model",
    "available_devices",
    "broadcast_batch_shape",
    "check_torch_compatible",
    "cmake_prefix_path",
    "read_metadata",
    "sub_batch_shape",
    "torch_version",
]


def cmake_prefix_path() -> str:
    """Return the directory to pass as ``CMAKE_PREFIX_PATH`` for ``find_package(neml2)``.

    The wheel ships libneml2, its headers and ``neml2Config.cmake``::

        prefix=$(python -c "import neml2.aoti as a; print(a.cmake_prefix_path())")
        cmake -DCMAKE_PREFIX_PATH="$prefix" ...

    Returns:
        The absolute path of the installed ``neml2/aoti`` package directory.
    """
    return str(Path(__file__).resolve().parent)
