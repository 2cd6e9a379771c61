"""An eager ImplicitUpdate solves a large batch in chunks (``max_points_per_solve``).

Each chunk is solved to the solver's tolerances on its own, so the results equal the
one-solve results to those tolerances (not bitwise: a chunk stops iterating when its
own points have converged). Inputs without a batch broadcast to every chunk; a
multi-axis batch is flattened and restored; a failed chunk names its points.
"""

from __future__ import annotations

import textwrap

import pytest
import torch
from test_block_seeds import MEAN, SYSTEM, G, _given

from neml2.models import implicit_update, load_model
from neml2.tensors import ConvergenceError, FatalError, seed


def _model(tmp_path, options: str = "", solver: str = ""):
    text = textwrap.dedent(SYSTEM).lstrip().format(**MEAN)
    text = text.replace("predictor = 'guess'", f"predictor = 'guess'\n    {options}")
    text = text.replace("abs_tol = 1e-12", f"abs_tol = 1e-12\n    {solver}")
    p = tmp_path / "chunks.i"
    p.write_text(text)
    return load_model(p, "model"), p, text


def _solve(model, batch):
    given = _given(batch)
    return model(*[given[n] for n in model.input_spec])


@pytest.mark.parametrize("batch", [(20,), (4, 5)])
def test_chunks_match_one_solve(tmp_path, batch):
    whole, _, _ = _model(tmp_path)
    chunked, _, _ = _model(tmp_path, "max_points_per_solve = 7")
    assert chunked._chunk_size({n: v for n, v in _given(batch).items()}, 20) == 7
    x0, y0 = _solve(whole, batch)
    x1, y1 = _solve(chunked, batch)
    assert x1.data.shape == (*batch, G) and x1.sub_batch_ndim == 1
    assert y1.data.shape == batch
    torch.testing.assert_close(x1.data, x0.data, rtol=0, atol=1e-11)
    torch.testing.assert_close(y1.data, y0.data, rtol=0, atol=1e-11)


def test_automatic_chunks_keep_the_jacobian_under_the_budget(tmp_path, monkeypatch):
    """Automatic: as many points as keep one (n, n_u, n_u) Jacobian under the budget
    (n_u = G + 1 here), never fewer than the minimum chunk, never more than the cap (or,
    where more, than MAX_POINT_DIRECTIONS / (n_u + 1))."""
    model, _, _ = _model(tmp_path)
    values = _given((20,))
    assert model._chunk_size(values, 20) is None  # small batches: one solve
    monkeypatch.setattr(implicit_update, "_MIN_CHUNK", 4)
    per_point = (G + 1) ** 2 * 8
    monkeypatch.setattr(implicit_update, "JACOBIAN_BUDGET", 6 * per_point)
    assert model._chunk_size(values, 20) == 6
    monkeypatch.setattr(implicit_update, "MAX_POINT_DIRECTIONS", 0)
    monkeypatch.setattr(implicit_update, "MAX_POINTS_PER_SOLVE", 4)  # fewer than the budget's
    assert model._chunk_size(values, 20) == 4
    # few unknowns: points x (n_u + 1) under MAX_POINT_DIRECTIONS lifts the cap ...
    monkeypatch.setattr(implicit_update, "MAX_POINT_DIRECTIONS", 5 * (G + 2))
    assert model._chunk_size(values, 20) == 5
    # ... and the Jacobian's budget still holds
    monkeypatch.setattr(implicit_update, "MAX_POINT_DIRECTIONS", 9 * (G + 2))
    assert model._chunk_size(values, 20) == 6
    monkeypatch.setattr(implicit_update, "MAX_POINTS_PER_SOLVE", 20_000)
    whole, _, _ = _model(tmp_path, "max_points_per_solve = 1000")
    x0, _ = _solve(whole, (20,))
    x1, _ = _solve(model, (20,))
    torch.testing.assert_close(x1.data, x0.data, rtol=0, atol=1e-11)


def test_tangents_are_not_chunked(tmp_path):
    """Derivatives (v= tangents) go through one solve: the IFT needs the whole system."""
    model, _, _ = _model(tmp_path, "max_points_per_solve = 7")
    values = _given((20,))
    values["f"] = seed(values["f"], "f")
    assert model._chunk_size(values, 20) is None
    x = model(*[values[n] for n in model.input_spec])[0]
    assert x.tangents["f"].shape[0] == 1  # d x / d f, one seed direction


def test_failed_chunk_names_its_points(tmp_path):
    model, _, _ = _model(tmp_path, "max_points_per_solve = 7", "max_its = 1")
    with pytest.raises(ConvergenceError, match=r"points \[0, 7\) of 20: solved 7 at a time"):
        _solve(model, (20,))


def test_chunks_are_as_equal_as_can_be(tmp_path):
    """20 points at most 15 a time: two chunks of 10 (not 15 and 5); the error of a
    failed chunk names its points and the chunk size."""
    model, _, _ = _model(tmp_path, "max_points_per_solve = 15", "max_its = 1")
    with pytest.raises(ConvergenceError, match=r"points \[0, 10\) of 20: solved 10 at a time"):
        _solve(model, (20,))
    ok, _, _ = _model(tmp_path, "max_points_per_solve = 15")
    whole, _, _ = _model(tmp_path)
    torch.testing.assert_close(
        _solve(ok, (20,))[0].data, _solve(whole, (20,))[0].data, rtol=0, atol=1e-11
    )


def test_negative_option_names_its_line(tmp_path):
    with pytest.raises(FatalError) as e:
        _model(tmp_path, "max_points_per_solve = -3")
    text = (tmp_path / "chunks.i").read_text()
    line = 1 + text.splitlines().index("    max_points_per_solve = -3")
    assert f"chunks.i:{line}" in str(e.value)
    assert "must be >= 0" in str(e.value)
