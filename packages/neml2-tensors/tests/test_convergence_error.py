"""ConvergenceError carries the failed points, the iterations and the worst residual."""

from __future__ import annotations

import copy
import math
import pickle

import torch

from neml2.tensors import ConvergenceError, NEML2Error


def test_a_message_alone_still_works():
    """The C++ runtimes map their errors by message: every field stays optional."""
    e = ConvergenceError("Newton failed at 2 of 10 points")
    assert str(e) == "Newton failed at 2 of 10 points"
    assert e.recoverable and isinstance(e, NEML2Error)
    assert e.failed_indices == ()
    assert e.failed_mask is None and e.n_points is None
    assert e.iterations is None and e.worst_residual is None
    assert str(ConvergenceError()) == ""


def test_at_points_states_the_fields():
    mask = torch.zeros(100, dtype=torch.bool)
    mask[[4, 17, 55]] = True
    norms = torch.full((100,), 1e-12, dtype=torch.float64)
    norms[4], norms[17], norms[55] = 3.0, math.nan, 2.0
    e = ConvergenceError.at_points("m", mask, 20, norms, detail="max_its 20")
    assert str(e) == (
        "m: Newton did not converge at 3 of 100 points after 20 iterations; "
        "worst residual norm nan (failed points 4, 17, 55; max_its 20)"
    )
    assert e.failed_indices == (4, 17, 55)
    assert e.n_points == 100 and e.iterations == 20
    assert math.isnan(e.worst_residual)  # not inf: NaN is reported as NaN
    assert torch.equal(e.failed_mask, mask)


def test_worst_residual_is_the_largest_failed_norm():
    mask = torch.tensor([[True, False], [False, True]])
    norms = torch.tensor([[0.5, 99.0], [1e-14, 2.5]], dtype=torch.float64)
    e = ConvergenceError.at_points("m", mask, 3, norms)
    assert e.worst_residual == 2.5  # 99 is at a converged point
    assert e.failed_indices == (0, 3)  # flat, C order
    assert "worst residual norm 2.500e+00" in str(e)


def test_many_failed_points_are_abbreviated():
    e = ConvergenceError.at_points("m", torch.ones(12, dtype=torch.bool), 1)
    assert "(failed points 0, 1, 2, 3, 4, ... (7 more))" in str(e)
    assert len(e.failed_indices) == 12


def test_pickle_and_copy_keep_the_fields():
    mask = torch.tensor([False, True, False])
    e = ConvergenceError.at_points("m", mask, 7, torch.tensor([0.0, math.inf, 0.0]))
    for back in (pickle.loads(pickle.dumps(e)), copy.copy(e)):
        assert type(back) is ConvergenceError
        assert str(back) == str(e)
        assert back.failed_indices == (1,)
        assert back.iterations == 7 and back.n_points == 3
        assert back.worst_residual == math.inf
        assert torch.equal(back.failed_mask, mask)
    plain = pickle.loads(pickle.dumps(ConvergenceError("x", iterations=3)))
    assert str(plain) == "x" and plain.iterations == 3


def test_with_context_keeps_the_fields():
    e = ConvergenceError.at_points("m", torch.tensor([True, False]), 2)
    e2 = e.with_context("step 3 of 9 (t = 0.3)")
    assert str(e2).startswith("step 3 of 9 (t = 0.3): m: Newton did not converge at 1 of 2")
    assert e2.failed_indices == (0,) and e2.iterations == 2 and e2.n_points == 2


def test_within_restates_a_chunk_in_the_whole_batch():
    chunk = ConvergenceError.at_points(
        "m", torch.tensor([False, True, True]), 4, torch.tensor([0.0, 1.0, 2.0])
    )
    e = chunk.within(6, (3, 4), " (points [6, 9) of 12)")
    assert e.failed_indices == (7, 8)
    assert tuple(e.failed_mask.shape) == (3, 4)
    assert e.n_points == 12 and e.iterations == 4 and e.worst_residual == 2.0
    assert str(e).endswith("(failed points 7, 8) (points [6, 9) of 12)")
    assert "at 2 of 12 points" in str(e)
    # a message-only error just gets the note
    assert str(ConvergenceError("x").within(6, (12,), " (chunk)")) == "x (chunk)"
