"""CubicCrystal: generated slip systems, HIT construction, and how models find a geometry."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from neml2.models import load_input
from neml2.models.solid_mechanics.crystal_plasticity import (
    CubicCrystal,
    PlasticDeformationRate,
    ResolvedShear,
)
from neml2.models.solid_mechanics.crystal_plasticity.crystal_geometry import (
    cubic_symmetry_operations,
)
from neml2.tensors import FatalError, MillerIndex, Scalar

torch.set_default_dtype(torch.float64)


def _crystal(dirs, planes, a=1.0):
    return CubicCrystal(
        lattice_parameter=a,
        slip_directions=MillerIndex(torch.tensor(dirs)),
        slip_planes=MillerIndex(torch.tensor(planes)),
    )


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _assert_slip_systems_valid(c):
    d = c.slip_directions_cartesian.data
    n = c.slip_normals_cartesian.data
    ones = torch.ones(c.nslip)
    torch.testing.assert_close(torch.linalg.vector_norm(d, dim=-1), ones)
    torch.testing.assert_close(torch.linalg.vector_norm(n, dim=-1), ones)
    torch.testing.assert_close((d * n).sum(-1), torch.zeros(c.nslip), atol=1e-12, rtol=0)
    # every (direction, normal) pair appears once, also up to the sign of either
    key = {
        (
            tuple(torch.round(s1 * d[i], decimals=8).tolist()),
            tuple(torch.round(s2 * n[i], decimals=8).tolist()),
        )
        for i in range(c.nslip)
        for s1 in (1, -1)
        for s2 in (1, -1)
    }
    assert len(key) == 4 * c.nslip


def test_fcc_110_111_has_12_unit_orthogonal_systems():
    c = _crystal([1, 1, 0], [1, 1, 1])
    assert c.nslip == 12
    assert c.slip_offsets == [0, 12]
    assert c.slip_directions_cartesian.sub_batch_shape == (12,)
    assert c.M.sub_batch_ndim == 1 and tuple(c.M.shape) == (12, 6)
    assert tuple(c.W.shape) == (12, 3)
    _assert_slip_systems_valid(c)
    d = c.slip_directions_cartesian.data
    n = c.slip_normals_cartesian.data
    # directions are <110>/sqrt2, normals {111}/sqrt3
    torch.testing.assert_close(
        d.abs().sort(-1).values, torch.tensor([0, 1, 1.0]).expand(12, 3) / math.sqrt(2)
    )
    torch.testing.assert_close(n.abs(), torch.ones(12, 3) / math.sqrt(3))
    # 4 distinct planes, each holding 3 directions
    planes = {
        tuple(torch.round(torch.sign(n[i, 0]) * n[i], decimals=8).tolist()) for i in range(12)
    }
    assert len(planes) == 4
    # the Schmid tensors: M = sym(d n), tr M = d.n = 0, |M|^2 = 1/2
    torch.testing.assert_close(c.M.tr().data, torch.zeros(12), atol=1e-12, rtol=0)
    torch.testing.assert_close(c.M.norm_sq().data, torch.full((12,), 0.5))
    A = d[:, :, None] * n[:, None, :]
    torch.testing.assert_close(c.schmid.data, A)
    torch.testing.assert_close(c.M.to_R2().data + c.W.to_R2().data, A)


def test_slip_system_order_matches_the_reference_library():
    # the first systems of FCC in the reference order (direction, plane before normalisation)
    c = _crystal([1, 1, 0], [1, 1, 1])
    d = c.slip_directions_cartesian.data * math.sqrt(2)
    n = c.slip_normals_cartesian.data * math.sqrt(3)
    torch.testing.assert_close(d[:3], torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0, 1, 1]]))
    torch.testing.assert_close(n[:3], torch.tensor([[-1.0, 1, -1], [1, -1, -1], [-1, 1, -1]]))


def test_lattice_parameter_only_scales_the_burgers_vector():
    c1 = _crystal([1, 1, 0], [1, 1, 1], a=1.0)
    c2 = _crystal([1, 1, 0], [1, 1, 1], a=1.2)
    torch.testing.assert_close(c1.M.data, c2.M.data)
    torch.testing.assert_close(c2.burgers.data, torch.full((12,), 1.2 * math.sqrt(2)))
    # non-reduced indices give the same systems
    c3 = _crystal([2, 2, 0], [3, 3, 3])
    torch.testing.assert_close(c1.M.data, c3.M.data)


def test_bcc_families_and_several_families_at_once():
    assert _crystal([1, 1, 1], [1, 1, 0]).nslip == 12
    assert _crystal([1, 1, 1], [1, 1, 2]).nslip == 12
    assert _crystal([1, 1, 1], [1, 2, 3]).nslip == 24
    both = _crystal([[1, 1, 1], [1, 1, 1]], [[1, 1, 0], [1, 1, 2]])
    assert both.nslip == 24
    assert both.slip_offsets == [0, 12, 24]
    assert both.nslip_groups == 2 and both.nslip_in_group(1) == 12
    _assert_slip_systems_valid(both)


def test_cubic_symmetry_group():
    ops = cubic_symmetry_operations()
    assert ops.shape == (24, 3, 3)
    eye = torch.eye(3).expand(24, 3, 3)
    torch.testing.assert_close(ops @ ops.transpose(-1, -2), eye)
    torch.testing.assert_close(torch.linalg.det(ops), torch.ones(24))
    # closed under composition and all distinct
    prods = (ops[:, None] @ ops[None]).reshape(-1, 9)
    flat = ops.reshape(24, 9)
    dist = torch.cdist(prods, flat)
    assert bool((dist.min(-1).values < 1e-6).all())
    assert bool((torch.cdist(flat, flat) + torch.eye(24) > 1e-6).all())


def test_construction_errors():
    with pytest.raises(FatalError, match="same number of families"):
        _crystal([[1, 1, 0], [1, 1, 1]], [1, 1, 1])
    with pytest.raises(FatalError, match="null index"):
        _crystal([0, 0, 0], [1, 1, 1])
    with pytest.raises(FatalError, match="positive"):
        _crystal([1, 1, 0], [1, 1, 1], a=-1.0)
    with pytest.raises(FatalError, match="no slip system"):
        _crystal([1, 1, 1], [1, 1, 1])


GEOMETRY = """
[Tensors]
  [sdirs]
    type = Python
    expr = 'MillerIndex(torch.tensor([1.0, 1.0, 0.0]))'
  []
  [a]
    type = Python
    expr = 'Scalar(1.5)'
  []
[]
[Data]
  [{name}]
    type = CubicCrystal
    lattice_parameter = {a}
    slip_directions = 'sdirs'
    slip_planes = '1 1 1'
  []
[]
"""


def test_hit_default_block_name_and_literal_options(tmp_path):
    text = GEOMETRY.format(name="crystal_geometry", a="'a'") + textwrap.dedent(
        """
        [Models]
          [m]
            type = SingleSlipStrengthMap
            constant_strength = 50
          []
        []
        """
    )
    ctx = load_input(_write(tmp_path, text))
    m = ctx.model("m")
    c = ctx.data("crystal_geometry")
    assert m.crystal is c and m.nslip == 12
    assert c.lattice_parameter == 1.5
    out = m(Scalar(torch.tensor([1.0, 2.0])))
    assert tuple(out.shape) == (2, 12) and out.sub_batch_ndim == 1


@pytest.mark.parametrize("option", ["crystal_geometry", "crystal_geometry_name"])
def test_hit_named_geometry(tmp_path, option):
    text = GEOMETRY.format(name="crystal", a="1.2") + textwrap.dedent(
        f"""
        [Models]
          [m]
            type = ResolvedShear
            {option} = 'crystal'
          []
        []
        """
    )
    ctx = load_input(_write(tmp_path, text))
    assert ctx.model("m").crystal is ctx.data("crystal")


def test_hit_errors(tmp_path):
    # no [Data] block with the default name
    text = GEOMETRY.format(name="crystal", a="1.0") + textwrap.dedent(
        """
        [Models]
          [m]
            type = PlasticDeformationRate
          []
        []
        """
    )
    with pytest.raises(FatalError, match=r"input.i:\d+.*needs a crystal geometry"):
        load_input(_write(tmp_path, text)).model("m")
    # a misspelled block name
    text = GEOMETRY.format(name="crystal", a="1.0") + textwrap.dedent(
        """
        [Models]
          [m]
            type = PlasticDeformationRate
            crystal_geometry = 'crystl'
          []
        []
        """
    )
    with pytest.raises(FatalError, match=r"no block named 'crystl'.*did you mean 'crystal'"):
        load_input(_write(tmp_path, text)).model("m")
    # an unknown option of the [Data] block names the accepted ones
    text = GEOMETRY.format(name="crystal_geometry", a="1.0").replace(
        "slip_planes = '1 1 1'", "slip_planes = '1 1 1'\n    slip_plane = '1 1 1'"
    )
    with pytest.raises(FatalError, match=r"unknown option 'slip_plane'.*lattice_parameter"):
        load_input(_write(tmp_path, text)).data("crystal_geometry")
    # a bad literal
    text = GEOMETRY.format(name="crystal_geometry", a="'1 2'")
    with pytest.raises(FatalError, match="lattice_parameter"):
        load_input(_write(tmp_path, text)).data("crystal_geometry")


def test_python_construction_errors():
    c = _crystal([1, 1, 0], [1, 1, 1])
    with pytest.raises(FatalError, match="needs a crystal geometry"):
        ResolvedShear()
    with pytest.raises(FatalError, match="must be a crystal"):
        ResolvedShear(crystal_geometry="crystal_geometry")
    with pytest.raises(FatalError, match="not both"):
        PlasticDeformationRate(
            crystal_geometry=c, crystal_geometry_name=_crystal([1, 1, 1], [1, 1, 0])
        )
    assert PlasticDeformationRate(crystal_geometry=c, crystal_geometry_name=c).nslip == 12
