"""neml2.aoti.DispatchedModel (cpp-dispatch from Python) on the "wobble" artifact.

The artifact comes from cpp/tests/make_dispatch_artifact.py (plain torch, cached
.pt2 files under build/aoti-cache). With two CPU workers and every scheduler the
results are bitwise those of one neml2.aoti.Model, for batch sizes that do not
divide evenly; a failing chunk raises its own error class naming its range.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neml2.aoti import DispatchedModel, Model, available_devices
from neml2.tensors import ConvergenceError, FatalError

F64 = torch.float64
SCHEDULERS = ["round-robin", "hybrid", "queue"]


@pytest.fixture(scope="module")
def reference(wobble) -> Model:
    return Model(wobble)


def _inputs(*batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {
        "x": torch.rand(batch, generator=g, dtype=F64),
        "strain": torch.rand((*batch, 6), generator=g, dtype=F64) - 0.5,
        "slip": torch.rand((*batch, 3), generator=g, dtype=F64),  # sub-batch axis of 3
    }


def _assert_identical(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for k in b:
        if isinstance(b[k], dict):
            _assert_identical(a[k], b[k])
        else:
            assert a[k].shape == b[k].shape, k
            assert torch.equal(a[k], b[k]), k


def test_surface(wobble, reference):
    d = DispatchedModel(wobble)
    assert d.input_names == reference.input_names == ["x", "strain", "slip"]
    assert d.output_names == reference.output_names
    assert d.input_base_shapes == reference.input_base_shapes == [(), (6,), ()]
    assert d.output_base_shapes == reference.output_base_shapes
    assert d.input_types == reference.input_types
    assert d.derivatives == reference.derivatives
    assert d.device == torch.device("cpu") and d.dtype == F64
    assert d.path == Path(wobble)
    assert [w[0] for w in d.workers] == ["cpu", "cpu"] and all(w[1] >= 1 for w in d.workers)
    assert d.scheduler == "round-robin"
    assert set(d.named_parameters()) == {"k"}
    assert available_devices()[0] == "cpu"
    assert "DispatchedModel" in repr(d)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("batch", [(1,), (7,), (1001,), (3, 5), ()])
def test_identical_to_one_model(wobble, reference, scheduler, batch):
    d = DispatchedModel(wobble, workers=["cpu", "cpu"], scheduler=scheduler, dtype=F64)
    x = _inputs(*batch, seed=sum(batch) + 1)
    _assert_identical(d.forward(x), reference.forward(x))
    _assert_identical(d(x), reference.forward(x))
    out, J = d.jacobian(x)
    rout, rJ = reference.jacobian(x)
    _assert_identical(out, rout)
    _assert_identical(J, dict(rJ))
    t = {"strain": torch.ones((*batch, 6), dtype=F64), "x": torch.ones(batch, dtype=F64)}
    _assert_identical(d.jvp(x, t)[1], reference.jvp(x, t)[1])
    ts = {"slip": torch.ones((*batch, 3), dtype=F64)}
    _assert_identical(d.jvp(x, ts)[1], reference.jvp(x, ts)[1])


@pytest.fixture(scope="session")
def scale(artifact) -> Path:
    """The "scale" artifact of test_model.py (conftest.py): it has a forward_into graph."""
    return artifact


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("batch", [(1,), (7,), (1001,), (3, 5)])
def test_chunks_stored_in_place(scale, scheduler, batch):
    """With a forward_into graph, CPU workers store their chunks straight into the
    gathered result; it is bitwise one Model's."""
    ref = Model(scale)
    assert ref.writes_into
    d = DispatchedModel(scale, workers=["cpu", "cpu"], scheduler=scheduler, chunk_size=64)
    g = torch.Generator().manual_seed(sum(batch))
    x = {
        "x": torch.rand(batch, generator=g, dtype=F64),
        "strain": torch.rand((*batch, 6), generator=g, dtype=F64),
    }
    out = d.forward(x)
    assert out["s"].shape == (*batch, 6) and out["y"].shape == batch
    _assert_identical(out, ref.forward(x))


def test_options(wobble, reference):
    x = _inputs(1001, seed=3)
    ref = reference.forward(x)
    q = DispatchedModel(wobble, workers=["cpu"] * 3, scheduler="queue", chunk_size=64)
    _assert_identical(q.forward(x), ref)
    host_threads = torch.get_num_threads()
    h = DispatchedModel(wobble, scheduler="hybrid", weights=[1.0, 3.0], threads_per_worker=1)
    assert [w[1] for w in h.workers] == [1, 1]
    _assert_identical(h.forward(x), ref)
    assert torch.get_num_threads() == host_threads  # set per worker thread, not process-wide


def test_parameters_reach_every_worker(wobble):
    d = DispatchedModel(wobble)
    one = Model(wobble)
    x = _inputs(1001, seed=4)
    d.set_parameter("k", 3.0)
    one.set_parameter("k", 3.0)
    _assert_identical(d.forward(x), one.forward(x))
    d.named_parameters()["k"].fill_(-1.0)  # in place, as neml2.aoti.Model
    one.named_parameters()["k"].fill_(-1.0)
    _assert_identical(d.forward(x), one.forward(x))
    with pytest.raises(FatalError, match="no promoted parameter 'nu'"):
        d.set_parameter("nu", 1.0)


def test_set_parameter_is_checked(wobble):
    """cpp-dispatch runs cpp-aoti's checks: a non-finite value and an integer tensor are
    refused, naming the parameter, and every worker keeps the value."""
    d = DispatchedModel(wobble)
    x = _inputs(101, seed=6)
    ref = d.forward(x)
    with pytest.raises(FatalError, match=r"parameter 'k' has the non-finite value nan"):
        d.set_parameter("k", float("nan"))
    with pytest.raises(FatalError, match=r"the value has dtype int64, which is not floating"):
        d.set_parameter("k", torch.tensor(3))
    _assert_identical(d.forward(x), ref)


def test_failing_chunk_names_its_range(wobble):
    x = _inputs(1001, seed=5)
    x["x"][600] = -1.0  # the artifact reports x < 0 as a failed solve
    d = DispatchedModel(wobble, scheduler="queue", chunk_size=100)
    with pytest.raises(ConvergenceError, match=r"points \[600, 700\) of 1001 \(worker \d, cpu\)"):
        d.forward(x)
    with pytest.raises(ConvergenceError, match="did not converge at 1 of 100 points"):
        d.jacobian(x)


def test_bad_options(wobble):
    with pytest.raises(FatalError, match="unknown scheduler 'fastest'"):
        DispatchedModel(wobble, scheduler="fastest")
    with pytest.raises(FatalError, match="worker 'gpu' is not a device"):
        DispatchedModel(wobble, workers=["gpu"])
    with pytest.raises(FatalError, match="at least one worker"):
        DispatchedModel(wobble, workers=[])
    with pytest.raises(FatalError, match=r"metadata\.json not found"):
        DispatchedModel(Path(wobble) / "missing")
    d = DispatchedModel(wobble)
    x = _inputs(7)
    with pytest.raises(FatalError, match="unknown input 'strian'"):
        d.forward({**x, "strian": x["strain"]})
    with pytest.raises(FatalError, match="dtype float32"):
        d.forward({k: v.float() for k, v in x.items()})


def _assert_equal(a: dict, b: dict) -> None:
    """As :func:`_assert_identical`, to 1e-14 relative (a slice may take a vectorized
    kernel's scalar tail where the whole batch took its vector body)."""
    assert set(a) == set(b)
    for k in b:
        if isinstance(b[k], dict):
            _assert_equal(a[k], b[k])
        else:
            torch.testing.assert_close(a[k], b[k], rtol=1e-14, atol=1e-14, msg=k)


@pytest.mark.parametrize("batch", [(1,), (100,), (1001,), (3, 5)])
def test_points_per_call(wobble, batch):
    """One Model solving its batch in slices (a graph that returns a solve status, as the
    wobble graphs do) gives one call's results, in the batch's shape."""
    one, sliced = Model(wobble), Model(wobble)
    one.points_per_call = 0
    sliced.points_per_call = 4 if len(batch) > 1 else 100
    x = _inputs(*batch, seed=40 + sum(batch))
    out = sliced.forward(x)
    assert out["g"].shape == (*batch, 3)
    _assert_equal(out, one.forward(x))
    out, J = sliced.jacobian(x)
    rout, rJ = one.jacobian(x)
    _assert_equal(out, rout)
    _assert_equal(dict(J), dict(rJ))


def test_thread_chunks(wobble):
    """With two threads a batch of at most points_per_call points is cut into one chunk
    per thread (thread_chunks, the default): one call's results, in the batch's shape,
    through forward and jacobian; a failed solve counts the failed points of every chunk;
    the caller's thread count is kept."""
    before = torch.get_num_threads()
    one, chunked = Model(wobble), Model(wobble)
    one.thread_chunks = False
    assert chunked.thread_chunks and not one.thread_chunks
    x = _inputs(1001, seed=47)
    try:
        torch.set_num_threads(2)
        _assert_equal(chunked.forward(x), one.forward(x))
        out, J = chunked.jacobian(x)
        rout, rJ = one.jacobian(x)
        _assert_equal(out, rout)
        _assert_equal(dict(J), dict(rJ))
        x["x"][5] = -1.0  # one failed point in each chunk (0-511, 512-1000)
        x["x"][950] = -1.0
        for m in (chunked, one):
            with pytest.raises(ConvergenceError, match=r"at 2 of 1001 points \(the solver"):
                m.forward(x)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_points_per_call_counts_every_slice(wobble):
    m = Model(wobble)
    assert m.points_per_call > 0  # the default slices large batches
    m.points_per_call = 100
    x = _inputs(1001, seed=45)
    x["x"][5] = -1.0  # the artifact reports x < 0 as a failed solve: two slices fail
    x["x"][950] = -1.0
    with pytest.raises(ConvergenceError, match=r"at 2 of 1001 points \(solved 100 points per call"):
        m.forward(x)
    with pytest.raises(FatalError, match="points_per_call must be 0"):
        m.points_per_call = -1
    assert m.points_per_call == 100
