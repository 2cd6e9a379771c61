"""General-purpose models: linear combinations, invariants, time integration, control."""

from neml2.models.common import (  # noqa: F401  (importing registers the types)
    arrhenius,
    batch_reductions,
    complementarity,
    conversions,
    copy_variable,
    determinant,
    intermediate_mean,
    interpolation,
    invariant,
    irreversibility,
    linear_combination,
    macaulay_split,
    mixed_control,
    parameters,
    pnorm,
    products,
    rotation,
    smooth_step,
    time_integration,
    variable_rate,
)
