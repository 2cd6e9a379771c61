"""Small field helpers shared by the common models."""

from __future__ import annotations

from neml2.models._schema import REQUIRED, VariableField
from neml2.tensors import Scalar


def variable(name: str, typ: type, *, doc: str, output: bool = False, default=REQUIRED):
    """A variable field whose name must be given in HIT unless *default* is set."""
    return VariableField(name, doc, default, type=typ, is_output=output)


#: The ``time`` input of the time-integration models (previous value ``t~1``).
TIME = variable("time", Scalar, default="t", doc="time (its previous value is time~1)")
