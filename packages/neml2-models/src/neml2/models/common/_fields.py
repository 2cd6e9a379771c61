"""Small field helpers shared by the common models."""

from __future__ import annotations

from neml2.models._schema import REQUIRED, VariableField
from neml2.tensors import Scalar


def variable(name: str, typ: type, *, doc: str, output: bool = False, default=REQUIRED):
    """A variable field whose name must be given in HIT unless *default* is set."""
    return VariableField(name, doc, default, type=typ, is_output=output)


def history(name: str) -> str:
    """The previous-step name of variable *name* (``x~1``)."""
    return f"{name}~1"


def rate(name: str) -> str:
    """The rate name of variable *name* (``x_rate``)."""
    return f"{name}_rate"


def residual(name: str) -> str:
    """The residual name of variable *name* (``x_residual``)."""
    return f"{name}_residual"


#: The ``time`` input of the time-integration models (previous value ``t~1``).
TIME = variable("time", Scalar, default="t", doc="time (its previous value is time~1)")
