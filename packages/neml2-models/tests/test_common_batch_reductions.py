"""SR2DynamicSum / SR2DynamicMean / SR2IntermediateSum / SR2IntermediateDiff."""

from __future__ import annotations

import pytest
import torch

from neml2.models._block_seeds import BLOCK_SEED, SEED
from neml2.models.common.batch_reductions import (
    SR2DynamicMean,
    SR2DynamicSum,
    SR2IntermediateDiff,
    SR2IntermediateSum,
)
from neml2.tensors import SR2, FatalError

F64 = torch.float64


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64)


def test_dynamic_reductions_count_dims_within_the_dynamic_batch():
    x = SR2(_rand(4, 3, 2, 6, seed=1), 1)  # dynamic (4, 3), sub-batch (2,)
    s = SR2DynamicSum(**{"from": "S", "to": "T", "dim": 1})(x)
    assert s.sub_batch_ndim == 1 and s.shape == (4, 2, 6)
    torch.testing.assert_close(s.data, x.data.sum(1))
    m = SR2DynamicMean(**{"from": "S", "to": "T", "dim": -2})(x)
    assert m.sub_batch_ndim == 1 and m.shape == (3, 2, 6)
    torch.testing.assert_close(m.data, x.data.mean(0))


def test_dynamic_mean_tangent():
    x = SR2(_rand(4, 3, 6, seed=2))
    d = SR2(_rand(2, 4, 3, 6, seed=3))
    _, v = SR2DynamicMean(**{"from": "S", "to": "T", "dim": -1})(x, v={"S": {"k": d}})
    torch.testing.assert_close(v["T"]["k"].data, d.data.mean(2))


def test_dynamic_dim_out_of_range():
    m = SR2DynamicSum(**{"from": "S", "to": "T", "dim": 2})
    with pytest.raises(FatalError, match="dim 2 is out of range for the 2 dynamic batch axes"):
        m(SR2(_rand(4, 3, 6)))


def test_intermediate_sum_and_tangent():
    x = SR2(_rand(4, 3, 6, seed=4), 1)
    d = SR2(_rand(1, 4, 3, 6, seed=5), 1)
    y, v = SR2IntermediateSum(**{"from": "S", "to": "T"})(x, v={"S": {"k": d}})
    assert y.sub_batch_ndim == 0
    torch.testing.assert_close(y.data, x.data.sum(1))
    torch.testing.assert_close(v["T"]["k"].data, d.data.sum(2))


def test_intermediate_sum_expands_block_seeds_into_per_entry_columns():
    g, k = 3, 6
    x = SR2(_rand(2, g, k, seed=6), 1)
    eye = torch.eye(k, dtype=F64)
    shared = SR2(eye[:, None, None, :].expand(k, 2, g, k), 1)  # one seed per component
    # the ordinary seeds: direction g*K + k is e_k at entry g, zero at the others
    ordinary = torch.zeros(g * k, 2, g, k, dtype=F64)
    for i in range(g):
        ordinary[i * k : (i + 1) * k, :, i, :] = eye[:, None, :]
    m = SR2IntermediateSum(**{"from": "S", "to": "T"})
    _, vb = m(x, v={"S": {BLOCK_SEED + "u": shared}})
    _, vo = m(x, v={"S": {SEED + "u": SR2(ordinary, 1)}})
    torch.testing.assert_close(vb["T"][SEED + "u"].data, vo["T"][SEED + "u"].data)


@pytest.mark.parametrize("n", [1, 2])
def test_intermediate_diff_matches_torch_diff(n):
    x = SR2(_rand(4, 5, 3, 6, seed=7), 2)  # sub-batch (5, 3)
    d = SR2(_rand(1, 4, 5, 3, 6, seed=8), 2)
    m = SR2IntermediateDiff(**{"from": "S", "to": "T", "dim": 0, "n": n})
    y, v = m(x, v={"S": {"k": d}})
    assert y.sub_batch_ndim == 2 and y.shape == (4, 5 - n, 3, 6)
    torch.testing.assert_close(y.data, torch.diff(x.data, n=n, dim=1))
    torch.testing.assert_close(v["T"]["k"].data, torch.diff(d.data, n=n, dim=2))


def test_intermediate_errors():
    with pytest.raises(FatalError, match="has no sub-batch axis to sum"):
        SR2IntermediateSum(**{"from": "S", "to": "T"})(SR2(_rand(4, 6)))
    with pytest.raises(FatalError, match="option 'n' = 0 is out of range: it must be >= 1"):
        SR2IntermediateDiff(**{"from": "S", "to": "T", "n": 0})
    m = SR2IntermediateDiff(**{"from": "S", "to": "T", "n": 2})
    with pytest.raises(FatalError, match="2 entries, too few for a difference of order 2"):
        m(SR2(_rand(4, 2, 6), 1))
    with pytest.raises(FatalError, match="dim -2 is out of range for the 1 sub-batch axes"):
        SR2IntermediateDiff(**{"from": "S", "to": "T", "dim": -2})(SR2(_rand(4, 3, 6), 1))
