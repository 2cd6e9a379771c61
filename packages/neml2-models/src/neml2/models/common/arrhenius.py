"""Temperature dependence by the Arrhenius law."""

from __future__ import annotations

from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._block_output import BlockNamedOutput
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, exp


@register()
class ArrheniusParameter(BlockNamedOutput):
    """Arrhenius law ``p = p0 exp(-Q / (R T))``.

    ``T`` (``temperature``), ``p0`` (``reference_value``), ``Q``
    (``activation_energy``) and the output ``p`` are Scalars; ``R``
    (``ideal_gas_constant``) is a number in units consistent with ``Q`` and ``T``.
    The output is named after the block unless ``parameter`` is given.
    """

    OUTPUT_OPTION = "parameter"

    fields = (
        variable("temperature", Scalar, default="temperature", doc="temperature T"),
        variable(
            "parameter",
            Scalar,
            output=True,
            default="parameter",
            doc="the parameter p (default: the block name)",
        ),
        parameter("reference_value", Scalar, doc="reference value p0"),
        parameter("activation_energy", Scalar, doc="activation energy Q"),
        option("ideal_gas_constant", float, bounds="(0, inf)", doc="ideal gas constant R"),
    )

    def forward(self, T: Scalar) -> Scalar:
        R = self.opts["ideal_gas_constant"]
        Q = self.param("activation_energy")
        return self.param("reference_value") * exp(-Q / (T * R))
