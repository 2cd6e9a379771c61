"""MixedControlSetup: per-component selection between two SR2s."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.common.mixed_control import MixedControlSetup
from neml2.tensors import SR2, FatalError


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_selection_matches_hand_formula_and_derivatives_pass_through():
    m = MixedControlSetup()
    assert m.input_names == ["control", "x_above", "x_below"] and m.output_names == ["y", "z"]
    g = torch.Generator().manual_seed(0)
    control = torch.randint(0, 2, (5, 6), generator=g).to(torch.float64)
    xa, xb = _rand(5, 6, seed=1), _rand(5, 6, seed=2)
    out, jac = m.jacobian({"control": control, "x_above": xa, "x_below": xb})
    above = control > 0.5
    torch.testing.assert_close(out["y"], torch.where(above, xa, xb))
    torch.testing.assert_close(out["z"], torch.where(above, xb, xa))
    torch.testing.assert_close(jac["y"]["x_above"], torch.diag_embed(above.to(xa.dtype)))
    torch.testing.assert_close(jac["z"]["x_above"], torch.diag_embed((~above).to(xa.dtype)))
    assert not jac["y"]["control"].any()


def test_threshold_option(tmp_path):
    p = tmp_path / "input.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = MixedControlSetup
                threshold = 2.0
                x_above = 'deformation_rate'
                x_below = 'target_cauchy_stress'
                y = 'mixed_state'
              []
            []
            """
        ).lstrip()
    )
    m = load_model(p, "m")
    assert m.output_names == ["mixed_state", "z"]
    control = torch.tensor([1.0, 3.0, 1.0, 3.0, 1.0, 3.0], dtype=torch.float64)
    xa, xb = torch.ones(6, dtype=torch.float64), torch.zeros(6, dtype=torch.float64)
    y = m.forward({"control": control, "deformation_rate": xa, "target_cauchy_stress": xb})
    torch.testing.assert_close(y["mixed_state"], (control > 2).to(xa.dtype))


def test_global_control_with_per_grain_values():
    """A global control signal applied to per-grain (sub-batch) values."""
    m = MixedControlSetup()
    control = SR2(torch.tensor([1.0, 0, 0, 1.0, 0, 0], dtype=torch.float64).expand(3, 6))
    xa, xb = SR2(_rand(3, 4, 6, seed=3), 1), SR2(_rand(3, 6, seed=4))
    y, z = m(control, xa, xb)
    assert y.sub_batch_ndim == 1 and y.shape == (3, 4, 6)
    mask = control.data[:, None, :] > 0.5
    torch.testing.assert_close(y.data, torch.where(mask, xa.data, xb.data[:, None, :]))
    torch.testing.assert_close(z.data, torch.where(mask, xb.data[:, None, :], xa.data))


def test_bad_threshold_is_reported(tmp_path):
    p = tmp_path / "input.i"
    p.write_text("[Models]\n  [m]\n    type = MixedControlSetup\n    threshold = high\n  []\n[]\n")
    with pytest.raises(FatalError, match=r"input\.i:4.*threshold"):
        load_model(p, "m")
