"""Plane strain, axisymmetric and plane stress use of a 3-D small-strain model.

Each wraps a :class:`~neml2.models.MaterialPoint` of the 3-D model: the host gives the
components of its 2-D problem, the wrapper calls the 3-D model and returns the reduced
stress and consistent tangent. Components are Mandel, a subset of the 3-D Mandel order
``(xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy)``, so the reduced tangent of plane strain
and axisymmetry is a sub-matrix of the 3-D one:

==============  =================================  ====================
wrapper         components (in this order)         3-D Mandel indices
==============  =================================  ====================
PlaneStrain     ``xx, yy, sqrt2 xy``               0, 1, 5
Axisymmetric    ``rr, zz, thth, sqrt2 rz``         0, 1, 2, 5 (x = r, y = z, z = theta)
PlaneStress     ``xx, yy, sqrt2 xy``               0, 1, 5
==============  =================================  ====================

Plane strain sets the out-of-plane strains to zero; axisymmetry (without torsion) the
``r theta`` and ``z theta`` shears. Plane stress solves, per point, for the out-of-plane
strains ``(zz, sqrt2 yz, sqrt2 xz)`` that make ``sigma_zz = sigma_yz = sigma_xz = 0``
(Newton with the 3-D consistent tangent), and returns the condensed consistent tangent
``C_aa - C_az C_zz^-1 C_za`` (``a`` in-plane, ``z`` out-of-plane). Its state holds the
converged out-of-plane strain besides the model's (the next step's initial guess, and
the old strain of a model that reads ``strain~1``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from neml2.models.material_point import MaterialPoint, MaterialPointResult
from neml2.tensors import FatalError

__all__ = ["OUT_OF_PLANE_STRAIN", "Axisymmetric", "PlaneStrain", "PlaneStress"]

#: the state variable of :class:`PlaneStress` holding the out-of-plane strain
#: ``(zz, sqrt2 yz, sqrt2 xz)``
OUT_OF_PLANE_STRAIN = "out_of_plane_strain"

_IN_PLANE = (0, 1, 5)
_OUT_OF_PLANE = (2, 3, 4)


class _Embedded:
    """A 3-D material point seen through a subset of its Mandel components."""

    #: the 3-D Mandel indices of the reduced components
    ROWS: tuple[int, ...] = ()

    def __init__(self, mp: MaterialPoint):
        if not isinstance(mp, MaterialPoint):
            raise FatalError(
                f"{type(self).__name__}: expected a neml2.models.MaterialPoint, got "
                f"{type(mp).__name__}"
            )
        self.mp = mp

    @property
    def state_names(self) -> list[str]:
        """The state variables (see :attr:`MaterialPoint.state_names`).

        Returns:
            Their names, in packing order.
        """
        return self.mp.state_names

    @property
    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each state variable at one point.

        Returns:
            Name -> ``(*sub, *base)``.
        """
        return self.mp.state_shapes

    @property
    def state_size(self) -> int:
        """How many scalars the state of one point packs into.

        Returns:
            The sum of the state variables' sizes.
        """
        return self.mp.state_size

    def initial_state(
        self,
        batch_shape: Sequence[int] | int = (),
        dtype: torch.dtype = torch.float64,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, torch.Tensor]:
        """The state before the first step (see :meth:`MaterialPoint.initial_state`).

        Args:
            batch_shape: the batch.
            dtype: the state's dtype.
            values: state variable -> initial value (others zero).

        Returns:
            Name -> ``(*batch, *sub, *base)``.
        """
        return self.mp.initial_state(batch_shape, dtype, values)

    def pack(self, state: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """One contiguous array per point (see :meth:`MaterialPoint.pack`).

        Args:
            state: name -> ``(*batch, *sub, *base)``.

        Returns:
            ``(*batch, state_size)``.
        """
        return self.mp.pack(state)

    def unpack(self, array: torch.Tensor) -> dict[str, torch.Tensor]:
        """The variables of a packed state (see :meth:`MaterialPoint.unpack`).

        Args:
            array: ``(*batch, state_size)``.

        Returns:
            Name -> ``(*batch, *sub, *base)``.
        """
        return self.mp.unpack(array)

    def roll(
        self,
        state_new: Mapping[str, torch.Tensor] | torch.Tensor,
        state_old: Mapping[str, torch.Tensor] | torch.Tensor | None = None,
        accept: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor] | torch.Tensor:
        """The state to keep once a step is accepted (see :meth:`MaterialPoint.roll`).

        Args:
            state_new: the result's state.
            state_old: the state the update started from (needed with *accept*).
            accept: ``(*batch,)`` bool: where True the new state, elsewhere the old.

        Returns:
            The state, in the form of *state_new*.
        """
        return self.mp.roll(state_new, state_old, accept)

    def embed(self, strain: torch.Tensor) -> torch.Tensor:
        """The 3-D strain of reduced components (the others zero).

        Args:
            strain: ``(*batch, k)`` in this wrapper's component order.

        Returns:
            ``(*batch, 6)``, 3-D Mandel.

        Raises:
            FatalError: the last axis is not ``k`` long.
        """
        strain = self.mp._tensor(strain)
        k = len(self.ROWS)
        if strain.dim() < 1 or strain.shape[-1] != k:
            raise FatalError(
                f"{type(self).__name__}: strain has shape {tuple(strain.shape)}; it must be "
                f"(*batch, {k})"
            )
        full = strain.new_zeros((*strain.shape[:-1], 6))
        full[..., list(self.ROWS)] = strain
        return full

    def _reduce(self, res: MaterialPointResult) -> MaterialPointResult:
        rows = list(self.ROWS)
        return MaterialPointResult(
            stress=res.stress[..., rows],
            tangent=res.tangent[..., rows, :][..., rows],
            state=res.state,
            converged=res.converged,
            outputs=res.outputs,
        )

    def update(
        self,
        strain: torch.Tensor,
        state: Mapping[str, torch.Tensor] | torch.Tensor,
        *,
        strain_old: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> MaterialPointResult:
        """Reduced stress and tangent at reduced strains (the 3-D model inside).

        Args:
            strain: ``(*batch, k)`` in this wrapper's component order.
            state: as for :meth:`MaterialPoint.update`.
            strain_old: ``(*batch, k)``, for a model that reads ``strain~1``.
            **kwargs (Any): ``time``, ``time_old``, ``extra``, ``on_failure``, as for
                :meth:`MaterialPoint.update`.

        Returns:
            The result with ``stress`` ``(*batch, k)`` and ``tangent`` ``(*batch, k, k)``;
                ``outputs`` are the 3-D model's.
        """
        old = None if strain_old is None else self.embed(strain_old)
        res = self.mp.update(self.embed(strain), state, strain_old=old, **kwargs)
        return self._reduce(res)


class PlaneStrain(_Embedded):
    """Plane strain: components ``(xx, yy, sqrt2 xy)``, the out-of-plane strains zero.

    Example:
        ```python
        ps = neml2.models.PlaneStrain(neml2.MaterialPoint(model))
        res = ps.update(strain_2d, state_old, time=t, time_old=t_old)  # strain_2d: (*B, 3)
        res.stress, res.tangent  # (*B, 3), (*B, 3, 3); res.outputs["stress"]: 3-D (*B, 6)
        ```
    """

    ROWS = _IN_PLANE


class Axisymmetric(_Embedded):
    """Axisymmetry without torsion: components ``(rr, zz, thth, sqrt2 rz)``.

    The 3-D model sees ``x = r``, ``y = z``, ``z = theta``: the Mandel strain
    ``(rr, zz, thth, 0, 0, sqrt2 rz)``. The hoop strain ``thth = u_r / r`` is the host's.
    """

    ROWS = (0, 1, 2, 5)


class PlaneStress(_Embedded):
    """Plane stress: components ``(xx, yy, sqrt2 xy)``; a local Newton per point on the
    out-of-plane strains ``(zz, sqrt2 yz, sqrt2 xz)`` makes ``sigma_zz = sigma_yz =
    sigma_xz = 0``.

    Each iteration evaluates the 3-D model (one batched call over the points not yet
    converged) and steps ``dz = -C_zz^-1 sigma_z``; a point has converged when
    ``|sigma_z| <= max(tol, rel_tol |sigma|)``. The tangent is the condensed consistent
    one, ``C_aa - C_az C_zz^-1 C_za``. A point is converged when the model converged at
    its last evaluation and this solve did within ``max_iter`` iterations; otherwise it
    keeps its old state (the out-of-plane strain included) with zero stress and tangent.

    The state is the model's plus :data:`OUT_OF_PLANE_STRAIN` ``(3,)``, the converged
    out-of-plane strain: the next step starts its Newton there.

    Attributes:
        mp: the 3-D material point.
        tol: the absolute tolerance on ``|sigma_z|`` (stress units).
        rel_tol: the tolerance relative to ``|sigma|``.
        max_iter: the most Newton iterations.
    """

    ROWS = _IN_PLANE

    def __init__(
        self, mp: MaterialPoint, tol: float = 1e-8, max_iter: int = 25, rel_tol: float = 1e-12
    ):
        """Wrap *mp* with the solve's settings.

        Args:
            mp: the 3-D material point.
            tol: absolute tolerance on the out-of-plane stress norm.
            max_iter: the most Newton iterations (at least 1).
            rel_tol: tolerance on it relative to the stress norm.

        Raises:
            FatalError: a tolerance that is negative or not finite, both zero, or
                ``max_iter < 1``; a model with a state variable of the same name as
                :data:`OUT_OF_PLANE_STRAIN`.
        """
        super().__init__(mp)
        for name, v in (("tol", tol), ("rel_tol", rel_tol)):
            if not (math.isfinite(v) and v >= 0):
                raise FatalError(f"PlaneStress: {name}={v!r} must be finite and >= 0")
        if tol == 0 and rel_tol == 0:
            raise FatalError("PlaneStress: tol and rel_tol are both 0: nothing could converge")
        if int(max_iter) < 1:
            raise FatalError(f"PlaneStress: max_iter={max_iter!r} must be >= 1")
        if OUT_OF_PLANE_STRAIN in mp.state_names:
            raise FatalError(
                f"PlaneStress: the model has a state variable '{OUT_OF_PLANE_STRAIN}', the "
                "name of the plane-stress wrapper's own"
            )
        self.tol, self.rel_tol, self.max_iter = float(tol), float(rel_tol), int(max_iter)

    @property
    def state_names(self) -> list[str]:
        """The model's state variables, then :data:`OUT_OF_PLANE_STRAIN`.

        Returns:
            Their names, in packing order.
        """
        return [*self.mp.state_names, OUT_OF_PLANE_STRAIN]

    @property
    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each state variable at one point.

        Returns:
            Name -> ``(*sub, *base)``; ``(3,)`` for the out-of-plane strain.
        """
        return {**self.mp.state_shapes, OUT_OF_PLANE_STRAIN: (3,)}

    @property
    def state_size(self) -> int:
        """How many scalars the state of one point packs into.

        Returns:
            The model's state size plus 3.
        """
        return self.mp.state_size + 3

    def initial_state(
        self,
        batch_shape: Sequence[int] | int = (),
        dtype: torch.dtype = torch.float64,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, torch.Tensor]:
        """The state before the first step: the model's, and a zero out-of-plane strain.

        Args:
            batch_shape: the batch.
            dtype: the state's dtype.
            values: state variable -> initial value (others zero).

        Returns:
            Name -> ``(*batch, *sub, *base)``.
        """
        values = dict(values or {})
        z = values.pop(OUT_OF_PLANE_STRAIN, None)
        out = self.mp.initial_state(batch_shape, dtype, values)
        batch = (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape)
        zz = torch.zeros((*batch, 3), dtype=dtype, device=self.mp.model.device)
        out[OUT_OF_PLANE_STRAIN] = zz if z is None else zz + torch.as_tensor(z, dtype=dtype)
        return out

    def pack(self, state: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """One contiguous array per point: the model's state, then the out-of-plane strain.

        Args:
            state: name -> ``(*batch, *sub, *base)``.

        Returns:
            ``(*batch, state_size)``.
        """
        z = torch.as_tensor(state[OUT_OF_PLANE_STRAIN])
        inner = {k: v for k, v in state.items() if k != OUT_OF_PLANE_STRAIN}
        if not self.mp.state_names:
            return z.clone()
        a = self.mp.pack(inner)
        batch = torch.broadcast_shapes(a.shape[:-1], z.shape[:-1])
        return torch.cat([a.expand((*batch, -1)), z.expand((*batch, 3))], dim=-1)

    def unpack(self, array: torch.Tensor) -> dict[str, torch.Tensor]:
        """The variables of a packed state.

        Args:
            array: ``(*batch, state_size)``.

        Returns:
            Name -> ``(*batch, *sub, *base)``.
        """
        array = torch.as_tensor(array)
        if array.dim() < 1 or array.shape[-1] != self.state_size:
            raise FatalError(
                f"PlaneStress: a packed state is (*batch, {self.state_size}), got "
                f"{tuple(array.shape)}"
            )
        out = self.mp.unpack(array[..., :-3]) if self.mp.state_names else {}
        out[OUT_OF_PLANE_STRAIN] = array[..., -3:]
        return out

    def roll(
        self,
        state_new: Mapping[str, torch.Tensor] | torch.Tensor,
        state_old: Mapping[str, torch.Tensor] | torch.Tensor | None = None,
        accept: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor] | torch.Tensor:
        """The state to keep once a step is accepted (see :meth:`MaterialPoint.roll`).

        Args:
            state_new: the result's state.
            state_old: the state the update started from (needed with *accept*).
            accept: ``(*batch,)`` bool: where True the new state, elsewhere the old.

        Returns:
            The state, in the form of *state_new*.

        Raises:
            FatalError: *accept* without *state_old*.
        """
        if accept is None or isinstance(state_new, torch.Tensor):
            return self.mp.roll(state_new, state_old, accept)
        if state_old is None:
            raise FatalError("PlaneStress: roll(accept=...) needs state_old")
        old = state_old if isinstance(state_old, Mapping) else self.unpack(state_old)
        inner_new = {k: v for k, v in state_new.items() if k != OUT_OF_PLANE_STRAIN}
        inner_old = {k: v for k, v in old.items() if k != OUT_OF_PLANE_STRAIN}
        out = self.mp.roll(inner_new, inner_old, accept) if inner_new else {}
        m = torch.as_tensor(accept, dtype=torch.bool).unsqueeze(-1)
        z = torch.where(m, state_new[OUT_OF_PLANE_STRAIN], old[OUT_OF_PLANE_STRAIN])
        out[OUT_OF_PLANE_STRAIN] = z.detach().clone()
        return out

    def update(
        self,
        strain: torch.Tensor,
        state: Mapping[str, torch.Tensor] | torch.Tensor,
        *,
        time: Any = 1.0,
        time_old: Any = 0.0,
        strain_old: torch.Tensor | None = None,
        extra: Mapping[str, Any] | None = None,
        on_failure: str = "status",
    ) -> MaterialPointResult:
        """In-plane stress and condensed tangent at in-plane strains, ``sigma_z = 0``.

        Args:
            strain: ``(*batch, 3)``: ``xx, yy, sqrt2 xy``.
            state: the state of the last converged step (dict or packed), with
                :data:`OUT_OF_PLANE_STRAIN`.
            time: as for :meth:`MaterialPoint.update`.
            time_old: as for :meth:`MaterialPoint.update`.
            strain_old: ``(*batch, 3)``, the in-plane strain at the start of the step,
                for a model that reads ``strain~1`` (its out-of-plane part is the
                state's).
            extra: as for :meth:`MaterialPoint.update`.
            on_failure: as for :meth:`MaterialPoint.update`.

        Returns:
            ``stress`` ``(*batch, 3)``, ``tangent`` ``(*batch, 3, 3)``, the new state (the
                converged out-of-plane strain in it), the status, the 3-D outputs, and
                the iterations of the slowest point.

        Raises:
            FatalError: as for :meth:`MaterialPoint.update`.
            ConvergenceError: with ``on_failure="raise"``, some point did not converge.
        """
        mp = self.mp
        packed = isinstance(state, torch.Tensor)
        st = self.unpack(state) if packed else dict(state)
        missing = [n for n in self.state_names if n not in st]
        unknown = [n for n in st if n not in self.state_names]
        if missing or unknown:
            raise FatalError(
                f"PlaneStress: state: missing {', '.join(missing) or '-'}, unknown "
                f"{', '.join(unknown) or '-'}; the state is {', '.join(self.state_names)}"
            )
        strain = self.mp._tensor(strain)
        if strain.dim() < 1 or strain.shape[-1] != 3:
            raise FatalError(
                f"PlaneStress: strain has shape {tuple(strain.shape)}; it must be (*batch, 3)"
            )
        batch = tuple(strain.shape[:-1])
        n = math.prod(batch)
        e = strain.reshape(n, 3)
        z_old = mp._flatten(f"state '{OUT_OF_PLANE_STRAIN}'", st[OUT_OF_PLANE_STRAIN], batch, (3,))
        inner = {k: st[k] for k in mp.state_names}
        old = None
        if strain_old is not None:
            so = mp._flatten("strain_old", strain_old, batch, (3,))
            old = _full(so, z_old).reshape((*batch, 6))
        flat, st_flat = mp._flat_inputs(
            _full(e, z_old).reshape((*batch, 6)), inner, time, time_old, old, extra, batch
        )
        z = z_old.clone()
        outs_all: dict[str, torch.Tensor] = {}
        tan_all = e.new_zeros((n, 6, 6))
        ok_all = torch.zeros(n, dtype=torch.bool, device=e.device)
        active = torch.arange(n, device=e.device)
        zi = list(_OUT_OF_PLANE)
        its = 0
        for it in range(self.max_iter + 1):
            its = it
            sub = {k: v[active] for k, v in flat.items()}
            sub[mp.strain] = _full(e[active], z[active])
            outs, tan, ok = mp._evaluate(sub)
            for o, y in outs.items():
                if o not in outs_all or outs_all[o].shape[1:] != y.shape[1:]:
                    outs_all[o] = y.new_zeros((n, *y.shape[1:]))
                outs_all[o][active] = y
            tan_all[active] = tan
            s = outs[mp.stress]
            sz = s[:, zi]
            thr = torch.clamp(self.rel_tol * torch.linalg.vector_norm(s, dim=-1), min=self.tol)
            conv = ok & (torch.linalg.vector_norm(sz, dim=-1) <= thr)
            ok_all[active] = conv
            go = ~conv & ok
            if it == self.max_iter or not bool(go.any()):
                break
            czz = tan[go][:, zi][:, :, zi]
            dz, info = torch.linalg.solve_ex(czz, -sz[go])
            good = info == 0
            idx = active[go]
            z[idx[good]] += dz[good]
            active = idx[good]  # a singular C_zz ends that point (not converged)
            if active.numel() == 0:
                break
        res = mp._result(outs_all, tan_all, ok_all, st_flat, batch, False, on_failure)
        # the condensed tangent where converged (C_zz is regular there), zero elsewhere
        ai = list(_IN_PLANE)
        C = res.tangent.reshape(n, 6, 6)
        red = e.new_zeros((n, 3, 3))
        if bool(ok_all.any()):
            Cc = C[ok_all]
            czz = Cc[:, zi][:, :, zi]
            red[ok_all] = Cc[:, ai][:, :, ai] - Cc[:, ai][:, :, zi] @ torch.linalg.solve(
                czz, Cc[:, zi][:, :, ai]
            )
        state_new = dict(res.state)
        zn = torch.where(ok_all.unsqueeze(-1), z, z_old)
        state_new[OUT_OF_PLANE_STRAIN] = zn.reshape((*batch, 3))
        return MaterialPointResult(
            stress=res.stress[..., ai],
            tangent=red.reshape((*batch, 3, 3)),
            state=self.pack(state_new) if packed else state_new,
            converged=res.converged,
            outputs=res.outputs,
            iterations=its,
        )


def _full(e: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The 3-D Mandel strain ``(N, 6)`` of in-plane *e* ``(N, 3)`` and out-of-plane *z*
    ``(N, 3)``."""
    full = e.new_zeros((e.shape[0], 6))
    full[:, list(_IN_PLANE)] = e
    full[:, list(_OUT_OF_PLANE)] = z
    return full
