"""scikit-fem as the host of a neml2 material: a body of bilinear / trilinear elements
pulled by one face, with a global Newton whose tangent is the material's consistent
tangent.

Per global iteration the host makes one batched material call over every quadrature
point, the batch shaped ``(elements, quadrature points)``:

* the strain of the iterate, ``eps = sym grad u`` at the quadrature points, as Mandel
  vectors ``(E, Q, 6)`` in 3-D, ``(E, Q, 3)`` = ``(xx, yy, sqrt2 xy)`` in 2-D (plane
  stress: ``neml2.models.PlaneStress``);
* from the material point: the stress, the tangent and the new state; the stress and the
  tangent go back to the full arrays scikit-fem's forms take, ``(d, d, E, Q)`` and
  ``(d, d, d, d, E, Q)``;
* the internal force ``f = int sigma : sym grad v`` (a ``LinearForm``) and the tangent
  stiffness ``K = int (C : sym grad du) : sym grad v`` (a ``BilinearForm``).

The state of the last converged step is kept per quadrature point and rolled forward
(``mp.roll``) only when a step's global Newton converges; a step whose local or global
solve fails is cut in half and retried from the same state.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field

import numpy as np
import torch
from skfem import (
    Basis,
    BilinearForm,
    ElementHex1,
    ElementQuad1,
    ElementVector,
    LinearForm,
    MeshHex,
    MeshQuad,
    condense,
)
from skfem import solve as skfem_solve
from skfem.helpers import ddot, sym_grad

from neml2.tensors.notation import full_to_mandel, mandel_to_full, mandel_to_full4


@BilinearForm
def tangent_stiffness(u, v, w):
    """``(C : sym grad u) : sym grad v`` with ``C`` at the quadrature points."""
    return np.einsum("ijkl...,kl...,ij...->...", w["C"], sym_grad(u), sym_grad(v))


@LinearForm
def internal_force(v, w):
    """``sigma : sym grad v`` with ``sigma`` at the quadrature points."""
    return ddot(w["sigma"], sym_grad(v))


# ------------------------------------------------------------------ 2-D Mandel (xx, yy, xy)
_R2 = math.sqrt(2.0)
#: (i, j) of the 2-D Mandel components and their weights
_PAIRS_2D = ((0, 0, 1.0), (1, 1, 1.0), (0, 1, _R2))


def _to_mandel_2d(a: torch.Tensor) -> torch.Tensor:
    """``(..., 2, 2)`` symmetric -> ``(..., 3)``: ``(xx, yy, sqrt2 xy)``."""
    return torch.stack([w * a[..., i, j] for i, j, w in _PAIRS_2D], dim=-1)


def _from_mandel_2d(m: torch.Tensor) -> torch.Tensor:
    """``(..., 3)`` -> ``(..., 2, 2)``."""
    xy = m[..., 2] / _R2
    return torch.stack([torch.stack([m[..., 0], xy], -1), torch.stack([xy, m[..., 1]], -1)], -2)


def _from_mandel4_2d(C: torch.Tensor) -> torch.Tensor:
    """``(..., 3, 3)`` -> ``(..., 2, 2, 2, 2)``: ``C_ijkl = C_IJ / (w_I w_J)``."""
    out = C.new_zeros((*C.shape[:-2], 2, 2, 2, 2))
    for a, (i, j, wi) in enumerate(_PAIRS_2D):
        for b, (k, m, wk) in enumerate(_PAIRS_2D):
            v = C[..., a, b] / (wi * wk)
            for p, q in {(i, j), (j, i)}:
                for r, s in {(k, m), (m, k)}:
                    out[..., p, q, r, s] = v
    return out


class Body:
    """A discretised body: basis, Dirichlet dofs and the conversions to the material.

    Args:
        mesh: a scikit-fem ``MeshHex`` (3-D) or ``MeshQuad`` (2-D).
        pulled: the dofs moved by the prescribed displacement (x components of a face).
        fixed: the dofs held at zero.
    """

    def __init__(self, mesh, pulled: np.ndarray, fixed: np.ndarray, basis) -> None:
        self.mesh, self.basis, self.pulled = mesh, basis, pulled
        self.dim = mesh.p.shape[0]
        self.fixed = np.union1d(fixed, pulled)
        self.free = np.setdiff1d(np.arange(basis.N), self.fixed)

    @property
    def batch_shape(self) -> tuple[int, int]:
        """``(elements, quadrature points)``."""
        return self.basis.nelems, self.basis.X.shape[1]

    def prescribed(self, disp: float) -> np.ndarray:
        """The Dirichlet values: zero on the fixed dofs, *disp* on the pulled ones."""
        u = np.zeros(self.basis.N)
        u[self.pulled] = disp
        return u

    def strain(self, u: np.ndarray) -> torch.Tensor:
        """``sym grad u`` at the quadrature points as Mandel vectors ``(E, Q, 6 or 3)``."""
        grad = self.basis.interpolate(u).grad  # (d, d, E, Q)
        eps = torch.from_numpy(
            np.moveaxis(0.5 * (grad + grad.transpose(1, 0, 2, 3)), (0, 1), (-2, -1)).copy()
        )
        return full_to_mandel(eps) if self.dim == 3 else _to_mandel_2d(eps)

    def force(self, stress: torch.Tensor) -> np.ndarray:
        """The nodal internal force of Mandel stresses ``(E, Q, 6 or 3)``."""
        full = mandel_to_full(stress) if self.dim == 3 else _from_mandel_2d(stress)
        sigma = np.moveaxis(full.numpy(), (-2, -1), (0, 1))
        return internal_force.assemble(self.basis, sigma=sigma)

    def stiffness(self, tangent: torch.Tensor):
        """The tangent stiffness (sparse) of Mandel tangents ``(E, Q, 6, 6 or 3, 3)``."""
        full = mandel_to_full4(tangent) if self.dim == 3 else _from_mandel4_2d(tangent)
        C = np.moveaxis(full.numpy(), (-4, -3, -2, -1), (0, 1, 2, 3))
        return tangent_stiffness.assemble(self.basis, C=np.ascontiguousarray(C))

    def reaction(self, f: np.ndarray) -> float:
        """The force on the pulled face along x (the sum of the internal forces there)."""
        return float(f[self.pulled].sum())


def bar(nx=6, ny=2, nz=2, length=3.0, width=1.0) -> Body:
    """A bar ``[0, length] x [0, width]^2`` of hexahedra, 8 quadrature points each; the
    face ``x = 0`` clamped, the face ``x = length`` pulled along x."""
    mesh = MeshHex.init_tensor(
        np.linspace(0.0, length, nx + 1),
        np.linspace(0.0, width, ny + 1),
        np.linspace(0.0, width, nz + 1),
    )
    basis = Basis(mesh, ElementVector(ElementHex1()), intorder=3)
    clamped = basis.get_dofs(lambda x: np.isclose(x[0], 0.0)).all()
    pulled = basis.get_dofs(lambda x: np.isclose(x[0], length)).nodal["u^1"]
    return Body(mesh, pulled, clamped, basis)


def thin_plate(nx=6, ny=2, length=3.0, width=1.0, thickness=0.02) -> Body:
    """A plate ``[0, length] x [0, width] x [0, thickness]``, one hexahedron through the
    thickness; the face ``x = 0`` held in x and y (free to contract in z), z held at
    one node (the rigid motion), the face ``x = length`` pulled along x; the faces
    ``z = 0, thickness`` free: plane stress as the thickness goes to zero."""
    mesh = MeshHex.init_tensor(
        np.linspace(0.0, length, nx + 1),
        np.linspace(0.0, width, ny + 1),
        np.array([0.0, thickness]),
    )
    basis = Basis(mesh, ElementVector(ElementHex1()), intorder=3)
    left = basis.get_dofs(lambda x: np.isclose(x[0], 0.0))
    corner = basis.get_dofs(
        lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0) & np.isclose(x[2], 0.0)
    )
    fixed = np.concatenate([left.nodal["u^1"], left.nodal["u^2"], corner.nodal["u^3"]])
    pulled = basis.get_dofs(lambda x: np.isclose(x[0], length)).nodal["u^1"]
    return Body(mesh, pulled, fixed, basis)


def plane_plate(nx=6, ny=2, length=3.0, width=1.0) -> Body:
    """The plate of :func:`thin_plate` in 2-D (bilinear quadrilaterals, 4 quadrature
    points each, unit thickness): the edge ``x = 0`` held, the edge ``x = length`` pulled."""
    mesh = MeshQuad.init_tensor(np.linspace(0.0, length, nx + 1), np.linspace(0.0, width, ny + 1))
    basis = Basis(mesh, ElementVector(ElementQuad1()), intorder=3)
    fixed = basis.get_dofs(lambda x: np.isclose(x[0], 0.0)).all()
    pulled = basis.get_dofs(lambda x: np.isclose(x[0], length)).nodal["u^1"]
    return Body(mesh, pulled, fixed, basis)


class StepFailed(RuntimeError):
    """A load step that did not converge after the cuts allowed."""


@dataclass
class StepLog:
    """One attempted load step: its residual norms, whether it converged, why not."""

    disp: float
    residuals: list[float] = field(default_factory=list)
    converged: bool = False
    failure: str = ""


@dataclass
class Timings:
    """Wall time of the global iterations, split into the material update and the rest."""

    material: float = 0.0
    total: float = 0.0
    iterations: int = 0


class Host:
    """The global solver: displacement control, Newton, step cutting.

    Args:
        body: the discretisation.
        mp: a material point (``neml2.MaterialPoint`` or a reduced-dimension wrapper).
        tangent: ``None`` for the material's consistent tangent at every iteration, or
            one fixed Mandel tangent ``(E, Q, n, n)`` (the elastic one: a modified
            Newton, whose linear rate the quadratic-rate check must reject).
        rtol: the global Newton stops when ``|r_free| <= rtol * |f|`` (``f`` the internal
            force of the iterate, reactions included).
        max_iterations: global iterations before a step counts as failed.
    """

    def __init__(
        self,
        body: Body,
        mp,
        *,
        tangent: torch.Tensor | None = None,
        rtol: float = 1e-10,
        max_iterations: int = 12,
    ) -> None:
        self.body, self.mp = body, mp
        self.rtol, self.max_iterations = rtol, max_iterations
        self.u = np.zeros(body.basis.N)
        self.state = mp.initial_state(body.batch_shape)
        self.time = 0.0
        self.disp = 0.0
        self.log: list[StepLog] = []
        self.curve: list[tuple[float, float]] = [(0.0, 0.0)]
        self.timings = Timings()
        self.last = None  # the material point's result at the last converged step
        self._fixed_K = None if tangent is None else body.stiffness(tangent)

    def try_step(self, disp: float, dt: float = 1.0) -> StepLog:
        """One load step to the end displacement *disp* from the last converged state;
        the host's state changes only when the step converges.

        The first Newton correction starts from the converged displacement and carries
        the increment of the prescribed displacement (inhomogeneous Dirichlet values of
        the correction); the later ones are zero there. The residual ``|f_free|`` is
        logged from the first iterate that satisfies the Dirichlet values on.
        """
        body, log = self.body, StepLog(disp)
        self.log.append(log)
        u, target = self.u.copy(), body.prescribed(disp)
        t_old, t_new = self.time, self.time + dt
        for it in range(self.max_iterations + 1):
            start = _time.perf_counter()
            res = self.mp.update(body.strain(u), self.state, time=t_new, time_old=t_old)
            material = _time.perf_counter() - start
            if not bool(res.converged.all()):
                log.failure = f"local solve failed at {int((~res.converged).sum())} points"
                self._time(start, material)
                return log
            f = body.force(res.stress)
            pending = np.zeros_like(u)
            pending[body.fixed] = target[body.fixed] - u[body.fixed]
            if it > 0:
                r = float(np.linalg.norm(f[body.free]))
                log.residuals.append(r)
                if not np.isfinite(r):
                    log.failure = "global residual not finite"
                    self._time(start, material)
                    return log
                if r <= self.rtol * float(np.linalg.norm(f)):
                    self._time(start, material)
                    log.converged = True
                    self.u, self.state, self.last = u, self.mp.roll(res.state), res
                    self.time, self.disp = t_new, disp
                    self.curve.append((disp, body.reaction(f)))
                    return log
            if it == self.max_iterations:
                log.failure = f"global Newton: no convergence in {self.max_iterations} iterations"
                self._time(start, material)
                return log
            K = body.stiffness(res.tangent) if self._fixed_K is None else self._fixed_K
            u = u + skfem_solve(*condense(K, -f, D=body.fixed, x=pending))
            self._time(start, material)
        raise AssertionError("unreachable")

    def step(self, disp: float, *, max_cuts: int = 6) -> int:
        """Reach the end displacement *disp*: after a failed attempt, try half the
        remaining increment first (at most *max_cuts* cuts in all). The time advances by
        1 over the whole step, in proportion over its pieces.

        Returns:
            The number of cuts.

        Raises:
            StepFailed: after *max_cuts* cuts.
        """
        start, targets, cuts = self.disp, [disp], 0
        while targets:
            d = targets[-1]
            if self.try_step(d, dt=(d - self.disp) / (disp - start)).converged:
                targets.pop()
                continue
            cuts += 1
            if cuts > max_cuts:
                raise StepFailed(
                    f"_fe_skfem.py: no convergence to disp={disp} after {max_cuts} cuts: "
                    f"{self.log[-1].failure}"
                )
            targets.append(0.5 * (self.disp + d))
        return cuts

    def _time(self, start: float, material: float) -> None:
        self.timings.material += material
        self.timings.total += _time.perf_counter() - start
        self.timings.iterations += 1
