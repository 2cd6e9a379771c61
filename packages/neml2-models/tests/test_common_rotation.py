"""RotationMatrix: Euler-Rodrigues from MRPs, against an axis-angle construction."""

from __future__ import annotations

import pytest
import torch

from neml2.models.common.rotation import RotationMatrix
from neml2.tensors import MRP, FatalError


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def _axis_angle_matrix(n, theta):
    """Rodrigues' formula R = I + sin(θ) K + (1 - cos(θ)) K² for the unit axis n."""
    K = torch.zeros(*n.shape[:-1], 3, 3, dtype=n.dtype)
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -n[..., 2], n[..., 1], -n[..., 0]
    K = K - K.transpose(-1, -2)
    s, c = torch.sin(theta)[..., None, None], torch.cos(theta)[..., None, None]
    return torch.eye(3, dtype=n.dtype) + s * K + (1 - c) * K @ K


def test_matches_axis_angle_on_random_batch():
    m = RotationMatrix(**{"from": "orientation", "to": "orientation_matrix"})
    n = _rand(4, 5, 3, seed=1)
    n = n / n.norm(dim=-1, keepdim=True)
    theta = 3.0 * torch.rand(4, 5, generator=torch.Generator().manual_seed(2), dtype=n.dtype)
    r = n * torch.tan(theta / 4)[..., None]
    R = m.forward({"orientation": r})["orientation_matrix"]
    assert R.shape == (4, 5, 3, 3)
    torch.testing.assert_close(R, _axis_angle_matrix(n, theta))
    # orthogonal with det 1
    torch.testing.assert_close(R @ R.transpose(-1, -2), torch.eye(3, dtype=R.dtype).expand_as(R))


def test_jacobian_matches_autograd_and_sub_batch_is_kept():
    m = RotationMatrix(**{"from": "q", "to": "R"})
    x = 0.3 * _rand(3, seed=3)
    _, jac = m.jacobian({"q": x})
    auto = torch.autograd.functional.jacobian(lambda y: m.forward({"q": y})["R"], x)
    torch.testing.assert_close(jac["R"]["q"], auto)
    per_grain = MRP(0.3 * _rand(2, 7, 3, seed=4), 1)
    out = m(per_grain)
    assert out.sub_batch_ndim == 1 and out.shape == (2, 7, 3, 3)


def test_from_and_to_are_required():
    with pytest.raises(FatalError, match="missing required option 'to'"):
        RotationMatrix(**{"from": "q"})
