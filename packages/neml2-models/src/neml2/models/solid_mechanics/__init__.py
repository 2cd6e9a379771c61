"""Solid-mechanics models: elasticity, plasticity, crystal plasticity."""
