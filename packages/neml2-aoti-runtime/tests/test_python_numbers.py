"""A Python number is an input (``x=1.0``, as py-eager takes it): a 0-d tensor of the
artifact's dtype and device, broadcast like any other input. A refused input is one short
line: no C++ binding error listing every argument (tensors in full) as its context."""

from __future__ import annotations

import traceback

import numpy as np
import pytest
import torch

from neml2.aoti import Model
from neml2.tensors import FatalError

F64 = torch.float64


def _strain(*batch):
    return torch.rand((*batch, 6), generator=torch.Generator().manual_seed(3), dtype=F64)


@pytest.mark.parametrize("number", [2.5, 2, np.float64(2.5)], ids=["float", "int", "numpy"])
def test_numbers_are_inputs(artifact, number):
    m = Model(artifact)
    strain = _strain(3)
    x = torch.tensor(float(number), dtype=F64)
    want = m.forward({"x": x, "strain": strain})
    got = m.forward({"x": number, "strain": strain})
    assert got["y"].shape == (3,) and got["s"].shape == (3, 6)  # broadcast onto the batch
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=0, atol=0)
    # tangents too, and every call
    _, want_jvp = m.jvp({"x": x, "strain": strain}, {"x": torch.ones((), dtype=F64)})
    _, got_jvp = m.jvp({"x": number, "strain": strain}, {"x": 1.0})
    torch.testing.assert_close(got_jvp["s"], want_jvp["s"], rtol=0, atol=0)
    _, J = m.jacobian({"x": number, "strain": strain})
    torch.testing.assert_close(
        J["y"]["strain"], m.jacobian({"x": x, "strain": strain})[1]["y"]["strain"]
    )
    dest = {"y": torch.empty(3, dtype=F64), "s": torch.empty(3, 6, dtype=F64)}
    m.forward_into({"x": number, "strain": strain}, dest)
    torch.testing.assert_close(dest["s"], want["s"], rtol=0, atol=0)


def _one_line(call) -> str:
    with pytest.raises(FatalError) as e:
        call()
    text = "".join(traceback.format_exception(e.value))
    assert e.value.__context__ is None and e.value.__cause__ is None, text
    assert "tensor(" not in text and "incompatible function arguments" not in text, text
    assert len(str(e.value).splitlines()) == 1
    return str(e.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "input 'x' is a bool, not a torch.Tensor or a number"),
        ("1.0", "input 'x' is a str, not a torch.Tensor or a number"),
        ([1.0], "input 'x' is a list, not a torch.Tensor or a number"),
        (torch.tensor(1.0), "input 'x' has dtype torch.float32 but the model was compiled for"),
    ],
)
def test_a_refused_input_is_one_line(artifact, value, message):
    m = Model(artifact)
    assert _one_line(lambda: m.forward({"x": value, "strain": _strain(4)})).startswith(message)


def test_a_number_where_a_vector_goes_is_one_line(artifact):
    m = Model(artifact)
    line = _one_line(lambda: m.forward({"x": 1.0, "strain": 1.0}))
    assert line.startswith("input 'strain' has shape () but must end in its base shape (6,)")
    line = _one_line(lambda: m.jvp({"x": 1.0, "strain": _strain(2)}, {"x": "one"}))
    assert line == "tangent 'x' is a str, not a torch.Tensor or a number"


@pytest.mark.needs_sibling  # the AOTIModel shim is a neml2.models Model
def test_the_shim_takes_numbers(artifact, tmp_path):
    import neml2

    stub = tmp_path / "scale_aoti.i"
    stub.write_text(
        f"[Models]\n  [scale]\n    type = AOTIModel\n    artifact_path = '{artifact}'\n  []\n[]\n"
    )
    shim, m = neml2.load_model(stub, "scale"), Model(artifact)
    strain = _strain(2)
    want = m.forward({"x": torch.tensor(2.0, dtype=F64), "strain": strain})
    torch.testing.assert_close(shim.forward({"x": 2.0, "strain": strain})["y"], want["y"])
    _, jvp = shim.jvp({"x": 2.0, "strain": strain}, {"x": 1.0})
    assert jvp["s"].shape == (2, 6)
    _, J = shim.jacobian({"x": 2, "strain": strain})
    assert J["y"]["strain"].shape == (2, 6)
