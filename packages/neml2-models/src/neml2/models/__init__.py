"""neml2 material models: the Model contract, composition, the registry and the HIT factory."""

from neml2.models._factory import load_model
from neml2.models._registry import ENTRY_POINT_GROUP, register, registered_types

__all__ = ["ENTRY_POINT_GROUP", "load_model", "register", "registered_types"]
