"""Crystal kinematics: plastic deformation rate and vorticity from the slip rates, the
elastic strain rate and the rate of the crystal orientation."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import input, output
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import CrystalModel
from neml2.tensors import R2, SR2, WR2, Scalar


@register()
class PlasticDeformationRate(CrystalModel):
    """Plastic deformation rate ``dᵖ = Σ_i γ̇_i Q sym(d_i ⊗ n_i) Qᵀ``.

    ``γ̇_i`` the slip rate on system ``i`` (per-slip ``Scalar``; the sum runs over its
    last sub-batch axis), ``Q`` the orientation matrix and ``d_i, n_i`` the slip
    direction and normal (crystal frame).
    """

    fields = (
        output("plastic_deformation_rate", SR2, doc="plastic deformation rate dᵖ"),
        input("orientation_matrix", R2, doc="orientation (rotation) matrix Q"),
        input("slip_rates", Scalar, doc="per-slip slip rates"),
    )

    def setup(self) -> None:
        super().setup()
        self.register_slip_buffer("schmid_sym", self.crystal.M)

    def forward(self, orientation: R2, slip_rates: Scalar) -> SR2:
        crystal_rate = self.slip_sum(slip_rates, self.schmid_sym, SR2)
        return crystal_rate.rotate(orientation)


@register()
class PlasticVorticity(CrystalModel):
    """Plastic vorticity ``wᵖ = Σ_i γ̇_i Q skew(d_i ⊗ n_i) Qᵀ`` (see PlasticDeformationRate)."""

    fields = (
        output("plastic_vorticity", WR2, doc="plastic vorticity wᵖ"),
        input("orientation_matrix", R2, doc="orientation (rotation) matrix Q"),
        input("slip_rates", Scalar, doc="per-slip slip rates"),
    )

    def setup(self) -> None:
        super().setup()
        self.register_slip_buffer("schmid_skew", self.crystal.W)

    def forward(self, orientation: R2, slip_rates: Scalar) -> WR2:
        crystal_spin = self.slip_sum(slip_rates, self.schmid_skew, WR2)
        return crystal_spin.to_R2().rotate(orientation).skew()


@register()
class ElasticStrainRate(Model):
    """Elastic strain rate ``ε̇ = d - dᵖ + w ε - ε w``.

    ``d`` the deformation rate, ``dᵖ`` the plastic deformation rate, ``w`` the
    vorticity (skew) and ``ε`` the elastic strain; ``w ε - ε w`` is symmetric.
    """

    fields = (
        output("elastic_strain_rate", SR2, doc="elastic strain rate"),
        input("elastic_strain", SR2, doc="elastic strain ε"),
        input("deformation_rate", SR2, doc="deformation rate d"),
        input("vorticity", WR2, doc="vorticity w"),
        input("plastic_deformation_rate", SR2, doc="plastic deformation rate dᵖ"),
    )

    def forward(
        self, elastic_strain: SR2, deformation_rate: SR2, vorticity: WR2, plastic_rate: SR2
    ) -> SR2:
        E = elastic_strain.to_R2()
        W = vorticity.to_R2()
        return deformation_rate - plastic_rate + (W.matmul(E) - E.matmul(W)).sym()


@register()
class OrientationRate(Model):
    """Spin of the crystal orientation ``Ωᵉ = Q̇ Qᵀ = w - wᵖ + dᵖ ε - ε dᵖ``.

    ``w`` the vorticity, ``wᵖ`` the plastic vorticity, ``dᵖ`` the plastic deformation
    rate and ``ε`` the elastic strain; ``dᵖ ε - ε dᵖ`` is skew.
    """

    fields = (
        output("orientation_rate", WR2, doc="orientation rate (spin) Ωᵉ"),
        input("elastic_strain", SR2, doc="elastic strain ε"),
        input("vorticity", WR2, doc="vorticity w"),
        input("plastic_deformation_rate", SR2, doc="plastic deformation rate dᵖ"),
        input("plastic_vorticity", WR2, doc="plastic vorticity wᵖ"),
    )

    def forward(
        self, elastic_strain: SR2, vorticity: WR2, plastic_rate: SR2, plastic_vorticity: WR2
    ) -> WR2:
        E = elastic_strain.to_R2()
        Dp = plastic_rate.to_R2()
        return vorticity - plastic_vorticity + (Dp.matmul(E) - E.matmul(Dp)).skew()
