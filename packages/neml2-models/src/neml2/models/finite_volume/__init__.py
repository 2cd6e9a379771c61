"""1-D finite-volume transport on a cell axis (the last sub-batch axis of a Scalar).

Cell-averaged fields have N entries on that axis, interior edge quantities N - 1,
edge fields closed by boundary values N + 1.
"""

from neml2.models.finite_volume import boundary as _boundary  # noqa: F401
from neml2.models.finite_volume import coordinates as _coordinates  # noqa: F401
from neml2.models.finite_volume import fluxes as _fluxes  # noqa: F401
from neml2.models.finite_volume import interpolation as _interpolation  # noqa: F401
from neml2.models.finite_volume import sources as _sources  # noqa: F401
