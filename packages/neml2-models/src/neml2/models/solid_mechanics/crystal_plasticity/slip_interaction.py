"""Elastic interaction of the slip systems over one step (coordinate-descent coupling)."""

from __future__ import annotations

from neml2.models._naming import HISTORY
from neml2.models._registry import register
from neml2.models._schema import derived, input, output, parameter
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import CrystalModel
from neml2.tensors import MRP, SR2, SSR4, Scalar


@register()
class SlipSystemElasticInteraction(CrystalModel):
    """The coupling matrix ``A_ij = (t - t~1) M_i : C : M_j`` of the slip systems.

    ``M_i`` is the symmetric Schmid tensor of system ``i`` and ``C`` the elastic
    stiffness (``elastic_stiffness_tensor``, crystal frame). With the elastic strain
    relaxed by the slip of the step, ``ε_e = ε_e^trial - Δt Σ_j γ̇_j M_j``, the
    resolved shears are ``τ_i = τ_i^trial - Σ_j A_ij γ̇_j``: ``A`` is the coupling of
    the condensed system solved by ``CoordinateDescentPredictor`` (symmetric, positive
    semi-definite; the spin convection of the elastic strain rate is left out so that
    it stays symmetric). Rotating both the Schmid tensors and the stiffness into the
    sample frame by the ``orientation`` leaves every full contraction unchanged, so
    ``A`` is evaluated in the crystal frame and does not depend on the orientation
    (an input for the reference library's interface only). Output: a Scalar with two
    sub-batch axes ``(nslip, nslip)``.
    """

    fields = (
        input("orientation", MRP, doc="crystal orientation (does not change A)"),
        input("time", Scalar, "t", doc="time (its previous value is time~1)"),
        output("coupling", Scalar, doc="the coupling matrix, sub-batched (nslip, nslip)"),
        parameter("elastic_stiffness_tensor", SSR4, doc="elastic stiffness C (crystal frame)"),
    )

    derives = (derived(HISTORY, "time"),)

    def setup(self) -> None:
        super().setup()
        self.declare_input(self.derived_name(HISTORY, "time"), Scalar)
        self.register_slip_buffer("schmid_sym", self.crystal.M)

    def forward(self, orientation: MRP, t: Scalar, t_old: Scalar) -> Scalar:
        del orientation  # A is invariant under a common rotation of M and C
        M = SR2(self.schmid_sym, 1)
        CM = self.param("elastic_stiffness_tensor") @ M
        A = M.sub_batch.unsqueeze(-1).inner(CM.sub_batch.unsqueeze(-2))
        # the two slip axes come after any sub-batch axes of the inputs (e.g. grains)
        dt = (t - t_old).sub_batch.unsqueeze(-1).sub_batch.unsqueeze(-1)
        return dt * A
