"""Drivers ([Drivers] blocks) and the command-line tools neml2-run / -inspect / -syntax.

Importing this package registers the built-in driver types.
"""

from neml2.drivers._driver import Driver
from neml2.drivers.model_unit import ModelUnitTest
from neml2.drivers.regression import TransientRegression, Verification
from neml2.drivers.transient import TransientDriver

__all__ = ["Driver", "ModelUnitTest", "TransientDriver", "TransientRegression", "Verification"]
