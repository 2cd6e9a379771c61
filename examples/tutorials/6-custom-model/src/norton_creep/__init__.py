"""Norton power-law creep for neml2 (the example plugin of tutorial 6)."""

from norton_creep.models import NortonCreepRate

__all__ = ["NortonCreepRate"]
