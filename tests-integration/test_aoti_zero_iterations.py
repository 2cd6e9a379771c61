"""A compiled Newton solve that needs no iteration returns the right answer.

In a transient run a good predictor often lands on the solution: the Newton loop
then runs zero times. Inductor (torch 2.13) reused such a loop's initial buffer for a
later kernel's output while the loop's result still pointed at it, so py-aoti gave
wrong stresses (18 % off in gamma) on exactly those steps, with no error. This checks
the case that exposed it: J2 radial return (the reference library's
``benchmark/radret`` model, one unknown, linear-extrapolation predictor), fed a step
whose predictor is already converged, and one that is not, at batch 1 and 7.

One forward graph compiles in about a minute cold (build/aoti-cache keeps it), and its
``forward_into`` twin (``--write-into``) about as long: the artifact has both, and
:func:`test_write_into_an_implicit_model` checks the second.
"""

from __future__ import annotations

import pytest
import torch
from _radret import F64, RADRET, ROOT, virgin_step

import neml2
from neml2.aoti import Model as AOTIRuntime
from neml2.compiler import CompileOptions, compile_file
from neml2.solvers import newton

CACHE = ROOT / "build" / "aoti-cache"


@pytest.fixture(scope="session")
def radret(tmp_path_factory):
    d = tmp_path_factory.mktemp("radret")
    opts = CompileOptions.from_strings("model", write_into=True)
    res = compile_file(RADRET, opts, d, cache_dir=CACHE)
    return AOTIRuntime(res.artifact_dir)


@pytest.fixture(scope="module")
def eager():
    return neml2.load_model(RADRET, "model")


def _step(n: int) -> dict:
    """A plastic step from a virgin state: strain ramps to 1-3 % uniaxially."""
    return virgin_step(torch.linspace(0.01, 0.03, n, dtype=F64))


def _iterations(eager, x) -> tuple[dict, int]:
    """Eager outputs and the Newton iteration count of the call."""
    counts = []
    solve = newton.Newton.solve

    def counting(self, *a, **k):
        res = solve(self, *a, **k)
        counts.append(int(res.iterations))
        return res

    newton.Newton.solve = counting
    try:
        with torch.no_grad():
            out = eager.forward(x)
    finally:
        newton.Newton.solve = solve
    assert len(counts) == 1
    return out, counts[0]


def _assert_matches(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for k, w in want.items():
        scale = float(w.abs().max()) + 1e-300
        torch.testing.assert_close(got[k], w, rtol=1e-10, atol=1e-10 * scale, msg=k)


@pytest.mark.parametrize("n", [1, 7])
def test_converged_predictor(radret, eager, n):
    x = _step(n)
    first, its = _iterations(eager, x)
    assert its > 0
    _assert_matches(radret.forward(x), first)
    # the same step again with gamma~2 = -gamma: the linear extrapolation from
    # (t~2, gamma~2) through (t~1, 0) to t lands on gamma (equal time steps). The
    # first solve stopped on the relative tolerance, so one more pass polishes gamma
    # below abs_tol; from there on Newton runs zero iterations.
    again = dict(x)
    sol, its = first, -1
    for _ in range(3):
        again["gamma~2"] = -sol["gamma"]
        sol, its = _iterations(eager, again)
        if its == 0:
            break
    assert its == 0
    _assert_matches(radret.forward(again), sol)


def test_write_into_an_implicit_model(radret):
    """``--write-into`` compiles an implicit model (its export once failed: the example
    outputs came from an eager call that left the model's parameters plain tensors), and
    ``forward_into`` stores what ``forward`` returns."""
    assert radret.writes_into
    x = _step(7)
    want = radret.forward(x)
    outs = {k: torch.full_like(v, float("nan")) for k, v in want.items()}
    radret.forward_into(x, outs)
    for k, v in want.items():
        torch.testing.assert_close(outs[k], v, rtol=0.0, atol=0.0, msg=k)


def test_points_per_call_slices_an_implicit_solve(radret):
    """A batch larger than ``points_per_call`` is solved in slices, through ``forward``
    and ``forward_into``: one call's results, in the batch's order. Each slice's Newton
    loop stops when its own points have converged, so a point may take fewer steps than
    in the whole batch: the results agree to the solver's tolerance, not bitwise."""
    x = _step(7)
    default = radret.points_per_call
    radret.points_per_call = 0
    try:
        want = radret.forward(x)
        radret.points_per_call = 3  # slices of 3, 3 and 1 point
        got = radret.forward(x)
        into = {k: torch.full_like(v, float("nan")) for k, v in want.items()}
        radret.forward_into(x, into)
    finally:
        radret.points_per_call = default
    for out in (got, into):
        assert set(out) == set(want)
        for k, w in want.items():
            scale = float(w.abs().max()) + 1e-300
            torch.testing.assert_close(out[k], w, rtol=1e-7, atol=1e-7 * scale, msg=k)
    # the slices are in the batch's order: the points differ (strains 1-3 %)
    assert not torch.allclose(got["stress"][0], got["stress"][6])


def test_thread_chunks_solve_a_batch_one_chunk_per_thread(radret):
    """With two threads a batch of at most ``points_per_call`` points is solved in one
    chunk per thread (``thread_chunks``, the default), through ``forward`` and
    ``forward_into``: one call's results to the solver's tolerance, in the batch's
    order; ``thread_chunks = False`` gives the one call on all threads, bitwise the
    results of one thread. The thread count is the caller's again afterwards."""
    before = torch.get_num_threads()
    n = 1000  # two chunks of 512 and 488 points; strains 0.1-3 %
    x = virgin_step(torch.linspace(0.001, 0.03, n, dtype=F64))
    assert radret.thread_chunks and n <= radret.points_per_call
    try:
        torch.set_num_threads(1)
        one_thread = radret.forward(x)
        torch.set_num_threads(2)
        radret.thread_chunks = False
        one_call = radret.forward(x)
        radret.thread_chunks = True
        chunked = radret.forward(x)
        into = {k: torch.full_like(v, float("nan")) for k, v in one_call.items()}
        radret.forward_into(x, into)
        assert torch.get_num_threads() == 2
    finally:
        radret.thread_chunks = True
        torch.set_num_threads(before)
    for k, w in one_thread.items():
        assert torch.equal(one_call[k], w), k
    for out in (chunked, into):
        assert set(out) == set(one_call)
        for k, w in one_call.items():
            scale = float(w.abs().max()) + 1e-300
            torch.testing.assert_close(out[k], w, rtol=1e-7, atol=1e-7 * scale, msg=k)
    # the points differ (so the agreement above is point by point, in the batch's
    # order), and the step is plastic: the Newton loop ran in both chunks
    assert float(chunked["equivalent_plastic_strain"].min()) > 0
    assert not torch.allclose(chunked["stress"][0], chunked["stress"][999])
