"""Kampmann-Wagner numerical (KWN) precipitation: thermodynamic driving forces, classical
nucleation and the growth of a binned precipitate size distribution (the bins are the last
sub-batch axis of the per-bin Scalars)."""

from neml2.models.kwn import binning, growth, nucleation, thermodynamics

__all__ = ["binning", "growth", "nucleation", "thermodynamics"]
