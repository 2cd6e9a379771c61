"""The plastic spatial velocity gradient of the slip systems (large-deformation crystal
plasticity)."""

from __future__ import annotations

from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import CrystalModel
from neml2.tensors import R2, Scalar


@register()
class PlasticSpatialVelocityGradient(CrystalModel):
    """Plastic spatial velocity gradient ``lᵖ = Σ_i γ̇_i Q (d_i ⊗ n_i) Qᵀ``.

    ``γ̇_i`` the slip rate on system ``i`` (per-slip ``Scalar``; the sum runs over its
    last sub-batch axis), ``Q`` the orientation matrix (R2) and ``d_i ⊗ n_i`` the full
    (unsymmetrized) Schmid tensor in the crystal frame. Output: R2 ``(*B, 3, 3)``.
    """

    fields = (
        input("orientation_matrix", R2, doc="orientation (rotation) matrix Q"),
        input("slip_rates", Scalar, doc="per-slip slip rates"),
        output("plastic_spatial_velocity_gradient", R2, doc="plastic velocity gradient lᵖ"),
    )

    def setup(self) -> None:
        super().setup()
        self.register_slip_buffer("schmid", self.crystal.schmid)

    def forward(self, orientation_matrix: R2, slip_rates: Scalar) -> R2:
        crystal = self.slip_sum(slip_rates, self.schmid, R2)
        return crystal.rotate(orientation_matrix)
