"""An eager ImplicitUpdate lets its solver drop the points that have settled.

The batch is flattened to one axis of points (a multi-axis batch is restored after), the
givens that differ per point are flagged ``per_point``, and the answer equals the traced
solve (py-jit, whose loop runs over every point) to the last bits. A model with a
parameter per point solves every point to the end instead: the parameter's axis could not
follow the points.
"""

from __future__ import annotations

import pytest
import torch
from test_implicit_chunks import _model, _solve

import neml2
from neml2.solvers import Newton


class _Flags:
    """Record the ``per_point`` flags the solver is given (``None``: not given)."""

    def __init__(self, monkeypatch):
        self.seen: list = []
        solve = Newton.solve

        def spy(solver, *args, per_point=None, **kwargs):
            self.seen.append(per_point)
            return solve(solver, *args, per_point=per_point, **kwargs)

        monkeypatch.setattr(Newton, "solve", spy)


@pytest.mark.parametrize("batch", [(20,), (4, 5), (1,)])
def test_eager_solve_drops_settled_points_and_equals_the_traced_one(tmp_path, monkeypatch, batch):
    model, _, _ = _model(tmp_path)
    traced = neml2.compile(_model(tmp_path)[0], backend="eager")
    flags = _Flags(monkeypatch)
    with torch.no_grad():
        x, y = _solve(model, batch)
        # the system's givens: s (one value for all points), f (one per point)
        assert flags.seen == [(False, batch != (1,))]
        xt, yt = _solve(traced, batch)
    assert x.data.shape == xt.data.shape and y.data.shape == batch
    torch.testing.assert_close(x.data, xt.data, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(y.data, yt.data, rtol=1e-14, atol=1e-15)


def test_a_parameter_per_point_keeps_every_point(tmp_path, monkeypatch):
    model, _, _ = _model(tmp_path)
    rule = next(m for m in model.modules() if "gamma0" in getattr(m, "_param_meta", {}))
    gamma0 = torch.linspace(0.05, 0.2, 20, dtype=torch.float64)
    rule.gamma0 = torch.nn.Parameter(gamma0)
    flags = _Flags(monkeypatch)
    with torch.no_grad():
        x, _ = _solve(model, (20,))
    assert flags.seen == [None]
    # each point solved with its own gamma0: the same as one point at a time
    for i in (0, 7, 19):
        rule.gamma0 = torch.nn.Parameter(gamma0[i : i + 1])
        with torch.no_grad():
            xi, _ = _solve(model, (20,))
        torch.testing.assert_close(x.data[i], xi.data[i], rtol=1e-12, atol=1e-14)
