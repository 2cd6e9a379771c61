"""The one Python surface of the C++ model classes (csrc/bind_surface.h).

``neml2.aoti._core.Model`` (cpp-aoti, wrapped by ``neml2.aoti.Model``),
``neml2.aoti.DispatchedModel`` (cpp-dispatch) and ``neml2.aoti.cpp_eager.Model``
(cpp-eager) have the same signature properties, with values of the same Python types;
on one artifact the two compiled classes, and the ``neml2.aoti.Model`` wrapper, report
the same values. The cpp-eager values need neml2.models (marked needs_sibling).
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest
import torch

from neml2.aoti import DispatchedModel, Model, _core, cpp_eager

ROOT = Path(__file__).resolve().parents[3]
F64 = torch.float64


def _list_of(item):
    return lambda v: isinstance(v, list) and all(item(x) for x in v)


def _tuple_of(item):
    return lambda v: isinstance(v, tuple) and all(item(x) for x in v)


def _dict_of(key, value):
    return lambda v: isinstance(v, dict) and all(key(k) and value(x) for k, x in v.items())


def _is(cls):
    return lambda v: type(v) is cls


_STRS = _list_of(_is(str))
_SHAPES = _list_of(_tuple_of(_is(int)))
_TYPES = _dict_of(_is(str), _is(str))

#: every signature property, and the test of the Python type of its value
SIGNATURE = {
    "input_names": _STRS,
    "output_names": _STRS,
    "variable_types": _TYPES,
    "input_types": _TYPES,
    "output_types": _TYPES,
    "input_base_shapes": _SHAPES,
    "output_base_shapes": _SHAPES,
    "input_sub_batch_shapes": _SHAPES,
    "output_sub_batch_shapes": _SHAPES,
    "derivatives": _list_of(lambda p: _tuple_of(_is(str))(p) and len(p) == 2),
    "device": _is(torch.device),
    "dtype": _is(torch.dtype),
    "path": lambda v: isinstance(v, Path),
    "built_with_torch": _is(str),
}
METHODS = ("forward", "__call__", "jvp", "jacobian", "named_parameters", "set_parameter")
CLASSES = {
    "_core.Model": _core.Model,
    "DispatchedModel": DispatchedModel,
    "cpp_eager.Model": cpp_eager.Model,
}


@pytest.mark.parametrize("cls", CLASSES.values(), ids=CLASSES)
def test_same_properties_and_methods(cls):
    for name in SIGNATURE:
        assert isinstance(inspect.getattr_static(cls, name), property), name
    for name in METHODS:
        assert callable(getattr(cls, name)), name


def test_compiled_classes_agree(wobble):
    core, dispatched, wrapper = _core.Model(str(wobble)), DispatchedModel(wobble), Model(wobble)
    for name, has_its_type in SIGNATURE.items():
        assert has_its_type(getattr(core, name)), name
        assert getattr(dispatched, name) == getattr(core, name), name
    assert core.input_sub_batch_shapes == [(), (), (3,)]
    assert core.output_sub_batch_shapes == [(), (), (3,)]
    assert core.input_base_shapes == [(), (6,), ()]
    assert core.input_types == {"x": "Scalar", "strain": "SR2", "slip": "Scalar"}
    assert core.derivatives and all(len(p) == 2 for p in core.derivatives)
    assert (core.device, core.dtype, core.path) == (torch.device("cpu"), F64, Path(wobble))
    # the neml2.aoti.Model wrapper reads the metadata itself: the same values
    for name in (
        "input_names",
        "output_names",
        "input_types",
        "output_types",
        "input_base_shapes",
        "output_base_shapes",
        "input_sub_batch_shapes",
        "output_sub_batch_shapes",
        "derivatives",
        "device",
        "dtype",
        "path",
    ):
        assert getattr(wrapper, name) == getattr(core, name), name


def test_set_parameter_takes_numbers(wobble):
    for m in (_core.Model(str(wobble)), DispatchedModel(wobble)):
        m.set_parameter("k", 2.5)  # converted to the model's dtype
        assert m.named_parameters()["k"].dtype == F64
        assert m.named_parameters()["k"].item() == 2.5


@pytest.mark.needs_sibling  # neml2.models: run by the integration session
@pytest.mark.skipif(
    importlib.util.find_spec("neml2.models") is None,
    reason="neml2.models is not installed (deployment pair): cpp-eager has no models to run",
)
def test_cpp_eager_values_have_the_same_types():
    m = cpp_eager.Model(str(ROOT / "cpp" / "tests" / "eager" / "crystal.i"), "model")
    for name, has_its_type in SIGNATURE.items():
        assert has_its_type(getattr(m, name)), name
    assert len(m.derivatives) == len(m.input_names) * len(m.output_names)
