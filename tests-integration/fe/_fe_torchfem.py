"""torch-fem as the host of a neml2 material, beside its own J2 material.

torch-fem's ``Solid.solve`` runs the load increments (with its own cut-back), a global
Newton per increment, and per Newton iteration calls its material's ``step`` once per
quadrature point with a batch of all elements:

    step(H_inc, F, stress, state, de0, cl, iter) -> (stress_new, state_new, ddsdde)

``H_inc`` is the displacement-gradient increment from the last converged state ``F``,
``stress`` and ``state`` are that state's, all ``(E, 3, 3)`` / ``(E, n_state)``, and the
tangent ``ddsdde`` is ``(E, 3, 3, 3, 3)``. :class:`Neml2Material` answers that with one
material-point update on the total strain ``sym(F - I) + sym(H_inc)``, the state packed
into ``(E, state_size)`` (torch-fem stores ``n_state`` numbers per point).
"""

from __future__ import annotations

import time as _time

import torch
from torchfem import Solid
from torchfem.materials import IsotropicPlasticity3D, MechanicsMaterial
from torchfem.mesh import cube_hexa
from torchfem.sparse import ConvergenceError as TorchFemConvergenceError

import neml2
from neml2.tensors.notation import full_to_mandel, mandel_to_full, mandel_to_full4


class Neml2Material(MechanicsMaterial):
    """A neml2 material point as a torch-fem material (small strain, rate independent:
    every call is the step from ``t~1 = 0`` to ``t = 1``).

    A failed local solve becomes torch-fem's ``ConvergenceError``, which its ``solve``
    answers by cutting the increment back.

    Args:
        mp: the material point (``update``, ``state_size``).
    """

    def __init__(self, mp) -> None:
        super().__init__()
        self.mp = mp
        self.n_state = mp.state_size
        self.seconds = 0.0
        self.calls = 0

    def step(self, H_inc, F, stress, state, de0, cl, iter):
        if bool(de0.any()):
            raise ValueError("_fe_torchfem.py: Neml2Material takes no external strain (de0)")
        H = F - torch.eye(3, dtype=F.dtype) + H_inc
        start = _time.perf_counter()
        try:
            res = self.mp.update(full_to_mandel(H), state, on_failure="raise")
        except neml2.ConvergenceError as e:
            raise TorchFemConvergenceError(str(e)) from e
        finally:
            self.seconds += _time.perf_counter() - start
            self.calls += 1
        return mandel_to_full(res.stress), res.state, mandel_to_full4(res.tangent)


def voce_j2(E: float, nu: float, sy: float, R: float, d: float, tolerance: float):
    """torch-fem's own J2 material with the yield stress ``sy + R (1 - exp(-d q))``
    (the tutorial's ``YieldFunction`` + ``VoceIsotropicHardening``)."""
    return IsotropicPlasticity3D(
        E=E,
        nu=nu,
        sigma_f=lambda q: sy + R * (1.0 - torch.exp(-d * q)),
        sigma_f_prime=lambda q: R * d * torch.exp(-d * q),
        tolerance=tolerance,
        max_iter=50,
    )


class RecordingSolid(Solid):
    """torch-fem's ``Solid``, recording the global residual norm of every Newton
    iteration: :attr:`substeps` holds one list per Newton solve (a substep)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.substeps: list[list[float]] = []

    def _residual(self, F_ext, DU, de0, k_visc, k_hess, con, du, i, prev):
        res, K = super()._residual(F_ext, DU, de0, k_visc, k_hess, con, du, i, prev)
        if i == 0:
            self.substeps.append([])
        self.substeps[-1].append(float(torch.linalg.norm(res)))
        return res, K


def bar(material, *, nx=6, ny=2, nz=2, length=3.0, width=1.0, disp=1.0):
    """A bar ``[0, length] x [0, width]^2`` of hexahedra (8 quadrature points each), the
    face ``x = 0`` clamped, the face ``x = length`` moved by ``disp`` along x (torch-fem
    scales it by the load factor of each increment).

    Returns:
        ``(solid, pulled)``: the model and the mask of the pulled nodes.
    """
    nodes, elements = cube_hexa(nx + 1, ny + 1, nz + 1, length, width, width)
    solid = RecordingSolid(nodes, elements, material)
    left = torch.isclose(nodes[:, 0], torch.tensor(0.0, dtype=nodes.dtype))
    pulled = torch.isclose(nodes[:, 0], torch.tensor(length, dtype=nodes.dtype))
    constraints = torch.zeros_like(solid.constraints)
    constraints[left, :] = True
    constraints[pulled, 0] = True
    solid.constraints = constraints
    displacements = torch.zeros_like(solid.displacements)
    displacements[pulled, 0] = disp
    solid.displacements = displacements
    return solid, pulled


def load_curve(solid, pulled, increments, **solve_options):
    """Solve over the load factors *increments*; the reaction on the pulled face per
    increment ``(N,)`` and the wall time of the solve."""
    start = _time.perf_counter()
    _, f, *_ = solid.solve(increments=increments, return_intermediate=True, **solve_options)
    seconds = _time.perf_counter() - start
    reaction = f[:, pulled, 0].sum(dim=1)
    if not bool(torch.isfinite(reaction).all()):
        raise AssertionError(f"_fe_torchfem.py: non-finite reactions {reaction}")
    return reaction, seconds
