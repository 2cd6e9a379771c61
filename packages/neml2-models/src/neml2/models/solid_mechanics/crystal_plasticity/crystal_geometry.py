"""Crystal geometry: slip systems generated from Miller indices by crystal symmetry.

A ``[Data]`` block such as::

    [Data]
      [crystal_geometry]
        type = CubicCrystal
        lattice_parameter = 1.0
        slip_directions = 'sdirs'   # MillerIndex, e.g. <110>
        slip_planes = 'splanes'     # MillerIndex, e.g. {111}
      []
    []

expands each (direction, plane) family into every symmetry-equivalent slip system
whose direction lies in its plane (FCC <110>{111}: 12 systems). Per-slip arrays are
stored with one sub-batch axis of length ``nslip``, so they broadcast against the
per-slip variables (``Scalar(..., sub_batch_ndim=1)``) of the crystal-plasticity models.

Models read a geometry through the option ``crystal_geometry`` (or its older spelling
``crystal_geometry_name``); when neither is given they use the ``[Data]`` block named
``crystal_geometry``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, TypeVar

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import Field, Schema, data_ref, option, parameter
from neml2.tensors import FatalError, MillerIndex, Quaternion, Scalar, TensorWrapper, Vec
from neml2.tensors._broadcast import _tracing

_W = TypeVar("_W", bound=TensorWrapper)

#: Name of the [Data] block a model uses when it names none.
DEFAULT_GEOMETRY = "crystal_geometry"


def _cubic_quaternions() -> torch.Tensor:
    """The 24 proper rotations of the cubic point group 432, as unit quaternions
    ``(s, x, y, z)``, in the reference library's order (the order fixes the order
    of the generated slip systems)."""
    o, z, h, a = 1.0, 0.0, 0.5, math.sqrt(0.5)
    rows = [
        (o, z, z, z),
        (h, h, h, h),
        (-h, h, h, h),
        (h, -h, h, h),
        (h, h, -h, h),
        (-h, -h, -h, h),
        (h, -h, -h, h),
        (-h, -h, h, h),
        (-h, h, -h, h),
        (z, z, o, z),
        (z, z, z, o),
        (z, o, z, z),
        (z, -a, z, a),
        (z, a, z, a),
        (a, z, a, z),
        (a, z, -a, z),
        (z, z, -a, a),
        (a, a, z, z),
        (a, -a, z, z),
        (z, z, a, a),
        (z, -a, a, z),
        (a, z, z, -a),
        (z, a, a, z),
        (a, z, z, a),
    ]
    return torch.tensor(rows, dtype=torch.float64)


def quaternion_to_matrix(q: torch.Tensor) -> torch.Tensor:
    """Active rotation matrices ``(..., 3, 3)`` of unit quaternions ``(..., 4)`` (scalar first)."""
    return Quaternion(q).to_R2().data


def cubic_symmetry_operations() -> torch.Tensor:
    """The 24 rotation matrices of the cubic class 432, ``(24, 3, 3)`` float64."""
    return quaternion_to_matrix(_cubic_quaternions())


def reduce_miller(m: torch.Tensor) -> torch.Tensor:
    """Divide integer Miller indices ``(..., 3)`` by the gcd of their components."""
    g = torch.gcd(torch.gcd(m[..., 0], m[..., 1]), m[..., 2]).abs()
    g = torch.where(g == 0, torch.ones_like(g), g)
    return m // g.unsqueeze(-1)


def reciprocal_lattice(a: torch.Tensor) -> torch.Tensor:
    """Reciprocal lattice (rows) of the lattice vectors ``a`` (rows): ``a_i . b_j = δ_ij``."""
    a1, a2, a3 = a.unbind(0)
    return torch.stack(
        [
            torch.linalg.cross(a2, a3) / torch.dot(a1, torch.linalg.cross(a2, a3)),
            torch.linalg.cross(a3, a1) / torch.dot(a2, torch.linalg.cross(a3, a1)),
            torch.linalg.cross(a1, a2) / torch.dot(a3, torch.linalg.cross(a1, a2)),
        ]
    )


def unique_up_to_sign(ops: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The distinct images ``op v`` (``v`` and ``-v`` count as one), in the order of ``ops``."""
    images = ops @ v
    kept = [images[0]]
    for w in images[1:]:
        known = torch.stack(kept)
        dup = torch.isclose(known, w).all(-1).any() or torch.isclose(known, -w).all(-1).any()
        if not bool(dup):
            kept.append(w)
    return torch.stack(kept)


def generate_slip_systems(
    lattice_vectors: torch.Tensor,
    symmetry_ops: torch.Tensor,
    slip_directions: torch.Tensor,
    slip_planes: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """Expand slip families into slip systems.

    ``slip_directions`` / ``slip_planes``: integer Miller indices ``(n_families, 3)``.
    Directions are ``sum_i d_i a_i`` (lattice vectors), plane normals ``sum_i p_i b_i``
    (reciprocal lattice). For each family, every symmetry-distinct direction is paired
    with every symmetry-distinct plane normal orthogonal to it.

    Returns unit directions ``(n, 3)``, unit normals ``(n, 3)``, Burgers vector lengths
    ``(n,)`` and the family offsets ``[0, n_1, n_1 + n_2, ...]``.
    """
    recip = reciprocal_lattice(lattice_vectors)
    dirs, normals, burgers, offsets = [], [], [], [0]
    for d_m, p_m in zip(slip_directions, slip_planes, strict=True):
        d = reduce_miller(d_m).to(torch.float64) @ lattice_vectors
        p = reduce_miller(p_m).to(torch.float64) @ recip
        d_options = unique_up_to_sign(symmetry_ops, d)
        p_options = unique_up_to_sign(symmetry_ops, p)
        count = 0
        for di in d_options:
            dots = (p_options @ di).abs()
            for k in torch.nonzero(torch.isclose(dots, torch.zeros_like(dots))).flatten():
                pk = p_options[int(k)]
                dirs.append(di / torch.linalg.vector_norm(di))
                normals.append(pk / torch.linalg.vector_norm(pk))
                burgers.append(torch.linalg.vector_norm(di))
                count += 1
        offsets.append(offsets[-1] + count)
    if not dirs:
        raise ValueError("the slip directions and planes define no slip system")
    return torch.stack(dirs), torch.stack(normals), torch.stack(burgers), offsets


class CrystalGeometry:
    """Slip systems of a crystal, given its symmetry operations and lattice vectors.

    Per-slip arrays carry one sub-batch axis of length :attr:`nslip`:

    * ``slip_directions_cartesian`` / ``slip_normals_cartesian``: unit ``Vec`` d_i, n_i
    * ``burgers``: ``Scalar`` |b_i| (the length of the lattice direction)
    * ``schmid``: ``R2`` A_i = d_i ⊗ n_i; ``M``: its symmetric part (``SR2``);
      ``W``: its skew part (``WR2``)

    ``slip_offsets[g]:slip_offsets[g + 1]`` are the systems of the g-th input family.
    """

    SECTION: ClassVar[str] = "Data"
    fields: ClassVar[tuple[Field, ...]] = ()
    hit_name: str | None = None

    def __init__(
        self,
        symmetry_ops: torch.Tensor,
        lattice_vectors: torch.Tensor,
        slip_directions: Any,
        slip_planes: Any,
        *,
        _where: str | None = None,
    ):
        self._where = _where or type(self).__name__
        sd = _miller(slip_directions)
        sp = _miller(slip_planes)
        if tuple(sd.batch_shape) != tuple(sp.batch_shape):
            raise FatalError(
                f"{self._where}: slip_directions (batch shape {tuple(sd.batch_shape)}) and "
                f"slip_planes (batch shape {tuple(sp.batch_shape)}) must list the same number "
                "of families"
            )
        self.slip_directions = sd
        self.slip_planes = sp
        ops = torch.as_tensor(symmetry_ops, dtype=torch.float64).cpu()
        lv = torch.as_tensor(lattice_vectors, dtype=torch.float64).cpu()
        self.symmetry_ops = ops
        self.lattice_vectors = lv
        self.reciprocal_lattice_vectors = reciprocal_lattice(lv)
        for name, m in (("slip_directions", sd), ("slip_planes", sp)):
            if bool((m.data.reshape(-1, 3) == 0).all(-1).any()):
                raise FatalError(f"{self._where}: {name} contains the null index (0 0 0)")
        try:
            d, n, b, offsets = generate_slip_systems(
                lv, ops, sd.data.reshape(-1, 3).cpu(), sp.data.reshape(-1, 3).cpu()
            )
        except ValueError as e:
            raise FatalError(f"{self._where}: {e}") from e
        self.slip_offsets = offsets
        self.slip_directions_cartesian = Vec(d, 1)
        self.slip_normals_cartesian = Vec(n, 1)
        self.burgers = Scalar(b, 1)
        self.schmid = self.slip_directions_cartesian.outer(self.slip_normals_cartesian)
        self.M = self.schmid.sym()
        self.W = self.schmid.skew()

    @property
    def nslip(self) -> int:
        """Number of slip systems."""
        return self.slip_offsets[-1]

    @property
    def nslip_groups(self) -> int:
        """Number of slip families given."""
        return len(self.slip_offsets) - 1

    def nslip_in_group(self, i: int) -> int:
        return self.slip_offsets[i + 1] - self.slip_offsets[i]

    def __repr__(self) -> str:
        name = f" '{self.hit_name}'" if self.hit_name else ""
        return f"{type(self).__name__}{name}(nslip={self.nslip}, groups={self.slip_offsets})"


def _miller(x: Any) -> MillerIndex:
    if isinstance(x, MillerIndex):
        return x
    if isinstance(x, TensorWrapper):
        return MillerIndex(x.data)
    return MillerIndex(torch.as_tensor(x))


@register()
class CubicCrystal(CrystalGeometry):
    """Cubic crystal (point group 432, lattice vectors ``a e_1, a e_2, a e_3``).

    Each pair (``slip_directions[g]``, ``slip_planes[g]``) of Miller indices is
    expanded by the 24 cubic rotations into its slip systems: every distinct
    direction ``±d`` paired with every distinct plane normal ``±n`` with ``d · n = 0``.
    FCC ``<110>{111}`` gives 12 systems, BCC ``<111>{110}`` 12, ``<111>{112}`` 12.
    """

    fields = (
        parameter(
            "lattice_parameter", Scalar, allow_nonlinear=False, doc="the lattice parameter a"
        ),
        parameter(
            "slip_directions",
            MillerIndex,
            allow_nonlinear=False,
            doc="Miller indices of the slip directions, one per family (batch axis)",
        ),
        parameter(
            "slip_planes",
            MillerIndex,
            allow_nonlinear=False,
            doc="Miller indices of the slip planes, one per family (batch axis)",
        ),
    )

    def __init__(
        self,
        lattice_parameter: Any,
        slip_directions: Any,
        slip_planes: Any,
        *,
        _where: str | None = None,
        _locations: dict[str, str] | None = None,
    ):
        where = _where or type(self).__name__
        locs = dict(_locations or {})
        a = lattice_parameter
        a = torch.as_tensor(a.data if isinstance(a, TensorWrapper) else a, dtype=torch.float64)
        if a.numel() != 1:
            raise FatalError(
                f"{locs.get('lattice_parameter', where)}: lattice_parameter must be one number, "
                f"got shape {tuple(a.shape)}"
            )
        if not float(a.reshape(())) > 0.0:
            raise FatalError(
                f"{locs.get('lattice_parameter', where)}: lattice_parameter must be positive, "
                f"got {float(a.reshape(()))}"
            )
        self.lattice_parameter = float(a.reshape(()))
        super().__init__(
            cubic_symmetry_operations(),
            self.lattice_parameter * torch.eye(3, dtype=torch.float64),
            slip_directions,
            slip_planes,
            _where=where,
        )

    @classmethod
    def from_hit(cls, node, ctx) -> CubicCrystal:
        """Build from a ``[Data]`` block."""
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(**values, _where=f"{node.location}: [{node.fullpath}]", _locations=locations)


#: For models that take the slip count from their inputs' sub-batch axis: the reference
#: inputs may still name a geometry, which is accepted and not read.
GEOMETRY_NAME_COMPAT = option(
    "crystal_geometry_name",
    str,
    "crystal_geometry",
    doc="accepted for compatibility with the reference inputs; the slip count "
    "comes from the input's sub-batch axis",
)


class CrystalModel(Model):
    """Base of the models that read a :class:`CrystalGeometry`.

    ``crystal_geometry`` (or its older spelling ``crystal_geometry_name``) names the
    ``[Data]`` block; without either, the block named ``crystal_geometry`` is used.
    After ``setup()``, ``self.crystal`` is the geometry and ``self.nslip`` its slip count.
    """

    fields = (
        data_ref(
            "crystal_geometry",
            None,
            doc=f"the [Data] crystal geometry (default: the block '{DEFAULT_GEOMETRY}')",
        ),
        data_ref(
            "crystal_geometry_name",
            None,
            doc="older spelling of crystal_geometry (give at most one of the two)",
        ),
    )

    @classmethod
    def from_hit(cls, node, ctx) -> Model:
        values = Schema.of(cls).read_hit(node, ctx)
        if values.get("crystal_geometry") is None and values.get("crystal_geometry_name") is None:
            try:
                values["crystal_geometry"] = ctx.data(DEFAULT_GEOMETRY, node.location)
            except FatalError as e:
                raise FatalError(
                    f"{node.location}: [{node.fullpath}] ({cls.__name__}) needs a crystal "
                    f"geometry: set crystal_geometry = '<[Data] block>' or define "
                    f"[Data/{DEFAULT_GEOMETRY}] ({e})"
                ) from e
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)

    def setup(self) -> None:
        geo = self.opts["crystal_geometry"]
        alt = self.opts["crystal_geometry_name"]
        if geo is not None and alt is not None and geo is not alt:
            raise self.error(
                "give crystal_geometry or crystal_geometry_name, not both", "crystal_geometry_name"
            )
        geo = geo if geo is not None else alt
        opt = "crystal_geometry"
        if self.opts["crystal_geometry"] is None:
            opt = "crystal_geometry_name"
        if geo is None:
            raise self.error("needs a crystal geometry (option crystal_geometry)", opt)
        if not isinstance(geo, CrystalGeometry):
            raise self.error(
                f"crystal geometry must be a crystal [Data] block (e.g. CubicCrystal), "
                f"got a {type(geo).__name__}",
                opt,
            )
        self.crystal = geo
        self.nslip = geo.nslip

    def register_slip_buffer(self, name: str, value: TensorWrapper) -> None:
        """Keep a per-slip constant of the geometry as a buffer (follows ``.to()``)."""
        self.register_buffer(name, value.data.clone())

    @staticmethod
    def slip_sum(weights: Scalar, basis: torch.Tensor, out: type[_W]) -> _W:
        """``Σ_i w_i B_i`` over the slip systems.

        Args:
            weights: per-slip ``Scalar`` ``(..., nslip)``, the slip axis its last
                sub-batch axis (slip rates).
            basis: a slip buffer ``(nslip, *base)`` of *out*'s base (Schmid tensors).
            out: the result's type.

        Returns:
            ``out`` ``(...)``, one sub-batch axis fewer; tangents follow (linear in *w*).

        Eagerly one matrix product ``(..., nslip) @ (nslip, base size)`` per value and
        tangent (a broadcast product summed over the slip axis writes out ``nslip`` times
        the result first: 2.5 ms of a 1000-point crystal's plastic deformation rate went
        there per evaluation). Traced, that broadcast product, which Inductor fuses.
        """
        if _tracing() or basis.dtype != weights.data.dtype:
            return (weights * out(basis, 1)).sub_batch.sum(-1)
        nslip, base = basis.shape[0], basis.shape[1:]
        flat = basis.reshape(nslip, -1)

        def fn(x: torch.Tensor) -> torch.Tensor:
            if x.shape[-1] != nslip:  # a tangent broadcast along the slip axis
                x = x.expand(*x.shape[:-1], nslip)
            return (x @ flat).unflatten(-1, base)

        d = weights._dual().lin(fn)
        return out._make(d.p, weights.sub_batch_ndim - 1, d.t1, d.t2, len(base))

    @staticmethod
    def slip_project(x: _W, basis: torch.Tensor) -> Scalar:
        """``x : B_i`` on every slip system (the full contraction over the base).

        Args:
            x: the tensor ``(..., *base)`` (the stress in the crystal frame).
            basis: a slip buffer ``(nslip, *base)`` of *x*'s type (Schmid tensors).

        Returns:
            per-slip ``Scalar`` ``(..., nslip)``, the slip axis a new last sub-batch axis;
            tangents follow (linear in *x*). Eagerly one matrix product per value and
            tangent, traced the broadcast product summed (see :meth:`slip_sum`).
        """
        base_ndim = basis.dim() - 1
        if _tracing() or basis.dtype != x.data.dtype:
            return x.sub_batch.unsqueeze(-1).inner(type(x)(basis, 1))
        flat_t = basis.reshape(basis.shape[0], -1).transpose(0, 1)

        def fn(t: torch.Tensor) -> torch.Tensor:
            return t.flatten(-base_ndim) @ flat_t if base_ndim else t.unsqueeze(-1) @ flat_t

        d = x._dual().lin(fn)
        return Scalar._make(d.p, x.sub_batch_ndim + 1, d.t1, d.t2, 0)


__all__ = [
    "DEFAULT_GEOMETRY",
    "CrystalGeometry",
    "CrystalModel",
    "CubicCrystal",
    "cubic_symmetry_operations",
    "generate_slip_systems",
]
