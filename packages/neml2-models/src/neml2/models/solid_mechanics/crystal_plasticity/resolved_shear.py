"""Resolved shear stress on every slip system."""

from __future__ import annotations

from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import CrystalModel
from neml2.tensors import R2, SR2, Scalar


@register()
class ResolvedShear(CrystalModel):
    """Resolved shears ``τ_i = σ : Q sym(d_i ⊗ n_i) Qᵀ``.

    ``σ`` is the Cauchy stress (sample frame), ``Q`` the orientation matrix (crystal
    to sample), ``d_i, n_i`` the unit slip direction and plane normal of system ``i``
    (crystal frame). Computed as ``(Qᵀ σ Q) : M_i``, i.e. the stress is rotated into
    the crystal frame once. Output: a per-slip ``Scalar`` whose last sub-batch axis
    has length ``nslip`` (after any sub-batch axes of the inputs, e.g. grains).
    """

    fields = (
        output("resolved_shears", Scalar, doc="per-slip resolved shear stresses"),
        input("stress", SR2, doc="Cauchy stress"),
        input("orientation_matrix", R2, doc="orientation (rotation) matrix Q"),
    )

    def setup(self) -> None:
        super().setup()
        self.register_slip_buffer("schmid_sym", self.crystal.M)

    def forward(self, stress: SR2, orientation: R2) -> Scalar:
        crystal_stress = stress.rotate(orientation.transpose())
        return self.slip_project(crystal_stress, self.schmid_sym)
