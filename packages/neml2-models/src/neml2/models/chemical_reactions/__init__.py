"""Chemical reactions: reaction mechanisms ``α̇ = f(α)``, the geometry of a cylindrical
shrinking-core product and the volume of a reacting control mass."""

from neml2.models.chemical_reactions import (
    channel_geometry,
    effective_volume,
    reaction_mechanisms,
)

__all__ = ["channel_geometry", "effective_volume", "reaction_mechanisms"]
