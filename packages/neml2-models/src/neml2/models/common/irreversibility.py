"""Irreversible (ratcheting) variables: a value that can only grow from step to step."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._naming import HISTORY
from neml2.models._registry import register
from neml2.models._schema import derived
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, where


@register()
class IrreversibleScalar(Model):
    """Monotone ratchet ``y = max(y_n, x)``.

    ``x`` (``from``) is the trial value of this step, ``y`` (``to``) the updated value
    and ``y_n`` its previous-step value, the input ``<to>~1``. The derivative is that
    of the selected argument (``y_n`` on a tie). All Scalars.
    """

    fields = (
        variable("from", Scalar, doc="trial value x at the current step"),
        variable("to", Scalar, output=True, doc="updated value y (its history is <to>~1)"),
    )

    derives = (derived(HISTORY, "to", doc="the previous-step value y_n of <to>"),)

    def setup(self) -> None:
        self.declare_input(self.derived_name(HISTORY, "to"), Scalar)

    def forward(self, x: Scalar, y_n: Scalar) -> Scalar:
        return where(x > y_n, x, y_n)
