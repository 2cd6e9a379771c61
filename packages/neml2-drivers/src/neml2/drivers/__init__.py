"""Drivers ([Drivers] blocks) and the command-line tools neml2-run / -inspect / -syntax.

Importing this package registers the built-in driver types.

From Python, :func:`run` runs a driver block of an input file and returns its
:class:`TransientResult` (``result["stress"]``: ``(steps, *B, 6)``).
"""

from neml2.drivers._driver import Driver
from neml2.drivers._run import CheckFailed, run
from neml2.drivers.model_unit import ModelUnitTest
from neml2.drivers.regression import TransientRegression, Verification
from neml2.drivers.results import TransientResult
from neml2.drivers.transient import TransientDriver

__all__ = [
    "CheckFailed",
    "Driver",
    "ModelUnitTest",
    "TransientDriver",
    "TransientRegression",
    "TransientResult",
    "Verification",
    "run",
]
