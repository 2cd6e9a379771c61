"""The pybind binding of libneml2: error translation, versions, batch checks."""

from __future__ import annotations

from importlib import metadata

import pytest
import torch

import neml2.aoti as aoti
from neml2.aoti import _core
from neml2.tensors import ConvergenceError, FatalError, NEML2Error


def test_versions():
    # libneml2's version is the distribution's: cpp/CMakeLists.txt reads it from
    # this package's pyproject.toml, the one place a release bumps it
    assert aoti.__version__ == metadata.version("neml2-aoti-runtime")
    # libneml2 was compiled against the torch we run with (same major.minor).
    assert aoti.torch_version().split(".")[:2] == torch.__version__.split(".")[:2]


def test_convergence_error_is_recoverable():
    with pytest.raises(ConvergenceError, match="3 points failed") as e:
        _core._raise("convergence", "3 points failed")
    assert e.value.recoverable
    assert isinstance(e.value, NEML2Error)
    assert not isinstance(e.value, FatalError)


def test_fatal_error_is_not_recoverable():
    with pytest.raises(FatalError, match="bad artifact") as e:
        _core._raise("fatal", "bad artifact")
    assert not e.value.recoverable


def test_torch_compatibility():
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    aoti.check_torch_compatible(f"{major}.{minor}.7+cpu", "x.pt2")
    with pytest.raises(FatalError, match=r"meta\.json was built with torch 1\.0\.0"):
        aoti.check_torch_compatible("1.0.0", "meta.json")
    with pytest.raises(FatalError, match="not a version"):
        aoti.check_torch_compatible("latest", "meta.json")


@pytest.mark.parametrize(
    ("shapes", "expected"),
    [
        ({"strain": (6,), "T": ()}, []),
        ({"strain": (1, 6), "T": ()}, [1]),
        ({"strain": (4, 1, 6), "T": (3,)}, [4, 3]),
        ({"strain": (2, 3, 6), "T": (2, 3)}, [2, 3]),
    ],
)
def test_broadcast_batch_shape(shapes, expected):
    inputs = {k: torch.zeros(s, dtype=torch.float64) for k, s in shapes.items()}
    base = {"strain": [6], "T": []}
    assert aoti.broadcast_batch_shape(inputs, base) == expected


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"strain": (4, 6), "T": (3,)}, "does not broadcast"),
        ({"strain": (4, 5), "T": ()}, r"input 'strain' has shape \(4, 5\) but must end in"),
        ({"strain": (6,)}, "missing input 'T'"),
        ({"strain": (6,), "T": (), "stress": (6,)}, "unknown input 'stress'"),
    ],
)
def test_broadcast_batch_shape_errors(shapes, message):
    inputs = {k: torch.zeros(s) for k, s in shapes.items()}
    with pytest.raises(FatalError, match=message):
        aoti.broadcast_batch_shape(inputs, {"strain": [6], "T": []})


def test_sdk_is_shipped():
    from pathlib import Path

    prefix = Path(aoti.cmake_prefix_path())
    assert (prefix / "lib" / "cmake" / "neml2" / "neml2Config.cmake").is_file()
    assert (prefix / "include" / "neml2" / "aoti" / "errors.h").is_file()
    assert any((prefix / "lib").glob("libneml2.so*"))
