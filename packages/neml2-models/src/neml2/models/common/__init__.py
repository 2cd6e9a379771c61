"""General-purpose models: linear combinations, invariants, time integration, control."""

from neml2.models.common import (  # noqa: F401  (importing registers the types)
    complementarity,
    intermediate_mean,
    invariant,
    linear_combination,
    mixed_control,
    rotation,
    time_integration,
    variable_rate,
)
