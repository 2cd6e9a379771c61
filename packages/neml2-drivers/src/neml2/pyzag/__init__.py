"""The pyzag adapter under the reference library's import path.

``from neml2.pyzag import NEML2PyzagModel`` as in the reference library; the class is
:class:`neml2.drivers.pyzag.NEML2PyzagModel`, a :class:`neml2.drivers.pyzag.PyzagModel`
built from an ``[EquationSystems]`` block. Needs pyzag
(``pip install 'neml2-drivers[pyzag]'``).
"""

from neml2.drivers.pyzag import NEML2PyzagModel, PyzagModel

__all__ = ["NEML2PyzagModel", "PyzagModel"]
