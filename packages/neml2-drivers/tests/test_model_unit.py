"""ModelUnitTest's derivative check: whole Jacobian blocks against autograd, and an
error measure that is the error of the block (not of one random direction through it)."""

from __future__ import annotations

import pytest
import torch

import neml2
import neml2.drivers  # registers ModelUnitTest
from neml2.drivers.model_unit import _unit_seeds
from neml2.models import register_neml2_object
from neml2.models.model import HitSchema, Model, input, option, output
from neml2.tensors import SR2, FatalError, Scalar


@register_neml2_object("_TestOffsetTangent")
class _OffsetTangent(Model):
    """``y = c x`` (SR2), with a hand-written tangent whose ``(0, 0)`` entry is off by
    ``offset``: ``dy/dx = c I + offset e0 e0``."""

    hit = HitSchema(
        input("x", SR2, "the input"),
        output("y", SR2, "the output"),
        option("c", float, "the slope", default=1e5),
        option("offset", float, "the error of the tangent's (0, 0) entry", default=0.0),
    )

    def forward(self, x, *, v=None):
        c, offset = self.opts["c"], self.opts["offset"]
        y = SR2(c * x.data, x.sub_batch_ndim)
        if v is None:
            return y
        e0 = torch.zeros(6, dtype=x.data.dtype, device=x.data.device)
        e0[0] = 1.0

        def action(d):
            return type(d)(c * d.data + offset * d.data[..., :1] * e0, d.sub_batch_ndim)

        return y, *self.propagate_tangents(v, "y", {"x": action}, output=y)


INPUT = """
[Tensors]
  [x]
    type = Python
    expr = 'SR2(torch.tensor([[1e-3, 2e-3, -1e-3, 0.0, 5e-4, 0.0],
                              [2e-3, 0.0, 0.0, 1e-3, 0.0, -1e-3]], dtype=torch.float64))'
  []
  [y]
    type = Python
    expr = 'SR2(1e5 * x.data)'
  []
[]
[Models]
  [m]
    type = _TestOffsetTangent
    offset = {offset}
  []
[]
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'm'
    input_SR2_names = 'x'
    input_SR2_values = 'x'
    output_SR2_names = 'y'
    output_SR2_values = 'y'
    derivative_rel_tol = {rtol}
  []
[]
"""


def _unit(tmp_path, offset: float, rtol: float = 1e-5):
    path = tmp_path / "unit.i"
    path.write_text(INPUT.format(offset=offset, rtol=rtol))
    driver = neml2.load_input(str(path)).object("Drivers", "unit")
    ok = driver.run()
    (derivative,) = [c for c in driver.results if c.what == "dy/dx"]
    return ok, derivative


def test_the_reported_error_is_the_error_of_the_jacobian_block(tmp_path, capsys):
    # J = 1e5 I, ours off by 1e3 in one entry (at both batch points): the line says
    # 1e3, and 1e-2 of the block's largest entry, whatever direction a seed takes
    ok, c = _unit(tmp_path, offset=1e3)
    assert not ok and not c.ok
    assert c.worst == pytest.approx(1e3, rel=1e-12)
    assert c.scale == pytest.approx(1e5, rel=1e-12)
    assert c.relative == pytest.approx(1e-2, rel=1e-12)
    assert c.bad == 2 and c.total == 2 * 6 * 6  # (seeds, *B, 6) = (6, 2, 6)
    out = capsys.readouterr().out
    assert "FAIL dy/dx: max |error| 1.000e+03, relative 1.000e-02 (max |J_ref| 1.000e+05)" in out
    assert "worst max |error| 1.000e+03 at dy/dx, 1 FAILED" in out


def test_a_block_passes_within_its_relative_tolerance(tmp_path):
    # 1e3 <= atol + 2e-2 * 1e5: the tolerance is relative to the block's largest entry
    ok, c = _unit(tmp_path, offset=1e3, rtol=2e-2)
    assert ok and c.ok and c.worst == pytest.approx(1e3)


def test_a_right_tangent_passes_with_no_error(tmp_path, capsys):
    ok, c = _unit(tmp_path, offset=0.0)
    assert ok and c.ok and c.worst == 0.0 and c.relative == 0.0
    assert "all passed" in capsys.readouterr().out


def test_a_small_error_is_not_hidden_by_a_random_direction(tmp_path):
    # an error of 1e-5 relative sits at the tolerance's edge: twice it fails
    assert _unit(tmp_path, offset=0.5)[1].ok  # 0.5 <= 1e-8 + 1e-5 * 1e5 = 1
    assert not _unit(tmp_path, offset=2.0)[1].ok


def test_unit_seeds_cover_every_component_of_one_point():
    # dynamic batch (2,), sub-batch (3,), base (6,): 18 seeds, each 1 at one entry of
    # every batch point, the same entry at both
    x = SR2(torch.zeros(2, 3, 6, dtype=torch.float64), 1)
    seeds = _unit_seeds(x)
    assert seeds.shape == (18, 2, 3, 6)
    flat = seeds.reshape(18, 2, 18)
    for b in range(2):
        torch.testing.assert_close(flat[:, b], torch.eye(18, dtype=torch.float64))
    assert _unit_seeds(Scalar(torch.zeros(4, dtype=torch.float64))).shape == (1, 4)


def test_a_misspelled_input_is_named_not_the_input_it_missed(tmp_path):
    path = tmp_path / "unit.i"
    path.write_text(
        INPUT.format(offset=0.0, rtol=1e-5).replace(
            "input_SR2_names = 'x'", "input_SR2_names = 'xx'"
        )
    )
    with pytest.raises(FatalError) as e:
        neml2.load_input(str(path)).object("Drivers", "unit").run()
    assert "input(s) xx are not inputs of model 'm' (did you mean 'x'?)" in str(e.value)
    assert "needs input(s)" not in str(e.value)
