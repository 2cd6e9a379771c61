"""Hostile values at the API boundary on py-eager and py-jit.

* ``set_parameter``: a typed value of another base shape, a raw tensor of another shape
  before its batch axes, an integer / bool / complex tensor, a string, a tensor that
  cannot be moved and a value that is not finite are refused with one line naming the
  parameter (and the expected and given shape or dtype, the first non-finite index); a
  batch of values stays legitimate, and a batch that does not broadcast with the inputs'
  is an error of the call naming the parameter;
* ``forward`` names the two inputs whose batch shapes do not broadcast, and an input
  wrapped from integer data names the dtype it was given.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

import neml2
from neml2.models import load_model, load_string
from neml2.tensors import SR2, FatalError, Scalar

F64 = torch.float64


@pytest.fixture(autouse=True)
def _float32_default():
    """torch's own default dtype (float32), whatever an earlier module of the run set
    (some set float64 at import): the messages below name the dtypes it gives."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    yield
    torch.set_default_dtype(old)


MODELS = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [rate]
    type = SR2VariableRate
    variable = 'strain'
  []
  [model]
    type = ComposedModel
    models = 'elasticity rate'
  []
  [s0]
    type = SR2ConstantParameter
    value = '1 2 3 4 5 6'
  []
  [miller]
    type = MillerIndexConstantParameter
    value = '1 1 0'
  []
[]
"""


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "models.i"
    p.write_text(textwrap.dedent(MODELS).lstrip())
    return p


@pytest.fixture(params=["py-eager", "py-jit"])
def route(request, path):
    """``open(name, dtype=F64)``: the model on the route (py-jit: neml2.compile of it;
    nothing here compiles, every check runs before)."""

    def open_(name: str, dtype=F64):
        m = load_model(path, name, dtype=dtype)
        return m if request.param == "py-eager" else neml2.compile(m)

    return open_


def _strain(*batch):
    return torch.full((*batch, 6), 1e-3, dtype=F64)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), r"parameter 'E' has the non-finite value nan: a parameter must be finite"),
        (
            torch.tensor([[1e5, float("inf"), 1e5], [float("nan"), 1e5, 1e5]], dtype=F64),
            r"parameter 'E' has the non-finite value inf at index \(0, 1\) \(2 of 6 values",
        ),
        (
            torch.tensor(3),
            r"parameter 'E' is torch\.float64: the value has dtype torch\.int64, which is not "
            r"floating-point",
        ),
        (torch.tensor(1 + 2j), r"the value has dtype torch\.complex64, which is not floating"),
        (torch.tensor(True), r"the value has dtype torch\.bool, which is not floating"),
        (1 + 2j, r"the value has dtype torch\.complex64"),
        ("2e5", r"parameter 'E': a str is not a number or tensor"),
        (
            SR2(torch.zeros(2, 6, dtype=F64)),
            r"parameter 'E' is a Scalar \(base shape \(\)\) but the value is a SR2 \(base "
            r"shape \(6,\)\)",
        ),
        (torch.empty(2, device="meta"), r"parameter 'E': the value on meta cannot be moved"),
    ],
)
def test_set_parameter_refuses(route, value, message):
    m = route("elasticity")
    before = dict(m.named_parameters())["E"].detach().clone()
    with pytest.raises(FatalError, match=message) as e:
        m.set_parameter("E", value)
    assert "\n" not in str(e.value) and "elasticity" in str(e.value)
    torch.testing.assert_close(dict(m.named_parameters())["E"].detach(), before)


def test_set_parameter_shape_of_a_typed_parameter(route):
    m = route("s0")
    with pytest.raises(
        FatalError, match=r"parameter 'value' is a SR2: the value has shape \(3, 3\)"
    ):
        m.set_parameter("value", torch.zeros(3, 3, dtype=F64))
    with pytest.raises(FatalError, match=r"the value has shape \(\) but must be \(\*batch, 6\)"):
        m.set_parameter("value", 1.0)
    m.set_parameter("value", torch.ones(4, 6, dtype=F64))  # a batch of values
    assert dict(m.named_parameters())["value"].shape == (4, 6)


def test_set_parameter_sub_batch_shape():
    """A raw value keeps the parameter's sub-batch axes: its shape before the base must be
    the sub-batch shape (or broadcast with it)."""
    m = load_string(textwrap.dedent(MODELS), "s0", dtype=F64)
    m.set_parameter("value", SR2(torch.zeros(3, 6, dtype=F64), 1))  # sub-batch (3,)
    m.set_parameter("value", torch.ones(2, 3, 6, dtype=F64))
    with pytest.raises(FatalError, match=r"shape \(4, 6\) but must be \(\*batch, 3, 6\)"):
        m.set_parameter("value", torch.ones(4, 6, dtype=F64))
    with pytest.raises(FatalError, match=r"shape \(6,\) but must be \(\*batch, 3, 6\) \(sub"):
        m.set_parameter("value", torch.ones(6, dtype=F64))
    m.set_parameter("value", torch.ones(2, 1, 6, dtype=F64))  # broadcasts with (3,)


def test_set_parameter_integer_parameter(route):
    m = route("miller")
    m.set_parameter("value", torch.tensor([1, 1, 1]))
    m.set_parameter("value", [1, 0, 0])
    with pytest.raises(FatalError, match=r"is torch\.int64: the value has dtype torch\.float64"):
        m.set_parameter("value", torch.tensor([1.0, 0.0, 0.0], dtype=F64))
    with pytest.raises(FatalError, match=r"the value has dtype torch\.float32"):
        m.set_parameter("value", [1.5, 0.0, 0.0])


def test_set_parameter_converts_numbers_and_floats_but_refuses_an_overflow(route):
    """A Python number and a tensor of another floating dtype are converted; a float64
    value that float32 cannot hold is refused (checked after the conversion)."""
    m = route("elasticity")
    e = _strain(2)
    ref = m.forward({"strain": e})["stress"]
    m.set_parameter("E", 100000)  # a Python int: no dtype of its own
    torch.testing.assert_close(m.forward({"strain": e})["stress"], ref / 2)
    m.set_parameter("E", torch.tensor(200e3, dtype=torch.float32))  # converted
    assert dict(m.named_parameters())["E"].dtype == F64
    torch.testing.assert_close(m.forward({"strain": e})["stress"], ref)
    m32 = route("elasticity", dtype=torch.float32)
    with pytest.raises(
        FatalError, match=r"non-finite value inf at index \(1,\) \(the given 1e\+300 overflows"
    ):
        m32.set_parameter("E", torch.tensor([1e5, 1e300], dtype=F64))


def test_a_batch_of_parameter_values_is_legitimate():
    """A (3, 3) tensor for the Scalar E is a (3, 3) batch of values (docs/hit.md), which
    the outputs take on; a batch that does not broadcast with the inputs' is the call's
    error, naming the parameter."""
    m = load_string(textwrap.dedent(MODELS), "elasticity", dtype=F64)
    m.set_parameter("E", torch.full((3, 3), 1e5, dtype=F64))
    assert m.forward({"strain": _strain()})["stress"].shape == (3, 3, 6)
    m.set_parameter("E", torch.full((3,), 1e5, dtype=F64))
    message = (
        r"parameter 'E' has batch shape \(3,\), which does not broadcast with the inputs' "
        r"batch shape \(2,\)"
    )
    with pytest.raises(FatalError, match=message):
        m.forward({"strain": _strain(2)})
    with pytest.raises(FatalError, match=message):
        m.jacobian({"strain": _strain(2)})


def test_inputs_that_do_not_broadcast_are_named(route):
    m = route("model")
    x = {
        "strain": _strain(2),
        "strain~1": _strain(2),
        "t": torch.ones(3, dtype=F64),
        "t~1": torch.zeros(3, dtype=F64),
    }
    message = r"input 'strain' has batch shape \(2,\) and input 't' \(3,\): they do not broadcast"
    with pytest.raises(FatalError, match=message):
        m.forward(x)
    with pytest.raises(FatalError, match=message):
        m.jacobian(x)
    with pytest.raises(FatalError, match=message):
        m.jvp(x, {"strain": _strain(2)})


def test_an_input_wrapped_from_integers_names_the_given_dtype(route):
    m = route("elasticity")
    x = SR2(torch.zeros(2, 6, dtype=torch.int64))
    message = (
        r"input 'strain' \(a SR2 made from torch\.int64 data, which it converted to "
        r"torch\.float32\) has dtype torch\.float32 .* the model computes in torch\.float64"
    )
    with pytest.raises(FatalError, match=message):
        m.forward({"strain": x})
    with pytest.raises(FatalError, match=message):
        m(x)
    assert Scalar(torch.tensor(2.0, dtype=F64)).converted_from is None
