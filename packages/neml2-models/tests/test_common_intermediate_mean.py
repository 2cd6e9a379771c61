"""SR2IntermediateMean (and siblings): mean over the last sub-batch axis."""

from __future__ import annotations

import pytest
import torch

from neml2.models.common.intermediate_mean import ScalarIntermediateMean, SR2IntermediateMean
from neml2.tensors import SR2, FatalError, Scalar


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_mean_over_grains_matches_hand_formula():
    m = SR2IntermediateMean(**{"from": "cauchy_stress", "to": "mean_cauchy_stress"})
    x = SR2(_rand(4, 5, 6, seed=1), 1)
    y = m(x)
    assert y.sub_batch_ndim == 0 and y.shape == (4, 6)
    torch.testing.assert_close(y.data, x.data.mean(1))


def test_only_the_last_sub_batch_axis_is_reduced():
    m = ScalarIntermediateMean(**{"from": "a", "to": "b", "reduces": "slip"})
    x = Scalar(_rand(2, 3, 4, seed=2), 2)
    y = m(x)
    assert y.sub_batch_ndim == 1 and y.shape == (2, 3)
    torch.testing.assert_close(y.data, x.data.mean(-1))


def test_tangents_are_averaged():
    m = SR2IntermediateMean(**{"from": "S", "to": "S_mean"})
    x = SR2(_rand(2, 3, 6, seed=3), 1)
    d = SR2(_rand(1, 2, 3, 6, seed=4), 1)  # one direction, different per grain
    _, v = m(x, v={"S": {"S": d}})
    torch.testing.assert_close(v["S_mean"]["S"].data, d.data.mean(2))


def test_no_sub_batch_is_an_error():
    m = SR2IntermediateMean(**{"from": "S", "to": "S_mean"})
    with pytest.raises(FatalError, match="'S' has no sub-batch axis"):
        m(SR2(_rand(4, 6)))
