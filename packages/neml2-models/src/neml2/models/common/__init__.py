"""General-purpose models: linear combinations, invariants, time integration, control."""
