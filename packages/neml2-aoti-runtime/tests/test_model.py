"""neml2.aoti.Model on a tiny hand-built artifact: calls, broadcasting, parameters, errors."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import reference

from neml2.aoti import Model
from neml2.tensors import FatalError

F64 = torch.float64


def _inputs(*batch):
    g = torch.Generator().manual_seed(len(batch) + sum(batch))
    return {
        "x": torch.rand(batch, generator=g, dtype=F64),
        "strain": torch.rand((*batch, 6), generator=g, dtype=F64),
    }


def test_surface(artifact):
    m = Model(artifact)
    assert m.input_names == ["x", "strain"]
    assert m.output_names == ["y", "s"]
    assert m.input_base_shapes == [(), (6,)]
    assert m.output_base_shapes == [(), (6,)]
    assert m.device == torch.device("cpu") and m.dtype == F64
    assert set(m.named_parameters()) == {"k"}
    assert Model(artifact / "metadata.json").output_names == ["y", "s"]


@pytest.mark.parametrize("batch", [(1,), (7,), (1000,), (), (2, 3)])
def test_forward_jacobian_jvp(artifact, batch):
    m = Model(artifact)
    x = _inputs(*batch)
    y, s, dy_de, ds_dx = reference(x["x"], x["strain"], 2.0)
    out = m.forward(x)
    torch.testing.assert_close(out["y"], y, rtol=1e-12, atol=0)
    torch.testing.assert_close(out["s"], s, rtol=1e-12, atol=0)
    out, J = m.jacobian(x)
    torch.testing.assert_close(J["y"]["strain"], dy_de)
    torch.testing.assert_close(J["s"]["x"], ds_dx)
    t = {"strain": torch.ones((*batch, 6), dtype=F64)}
    _, jv = m.jvp(x, t)
    assert set(jv) == {"y"}  # ds/dstrain was not compiled
    torch.testing.assert_close(jv["y"], (dy_de * t["strain"]).sum(-1))


def test_one_point_runs_serial_and_restores_the_thread_count(artifact):
    """A batch of one runs its kernels on the calling thread alone; the caller's OpenMP
    thread count is the same afterwards, on success and on a failed call."""
    m = Model(artifact)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        x = _inputs(1)
        y, s, _, _ = reference(x["x"], x["strain"], 2.0)
        out = m.forward(x)
        torch.testing.assert_close(out["y"], y, rtol=1e-12, atol=0)
        torch.testing.assert_close(out["s"], s, rtol=1e-12, atol=0)
        assert torch.get_num_threads() == 2
        with pytest.raises(FatalError):
            m.forward({"x": x["x"], "strain": torch.rand(1, 5, dtype=F64)})
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_dense_inputs_are_read_not_written(artifact):
    """Inputs already (n, *base) and contiguous go to the graph without a copy; the
    outputs are new tensors and the inputs keep their values."""
    m = Model(artifact)
    x = _inputs(6)
    kept = {k: v.clone() for k, v in x.items()}
    out = m.forward(x)
    for k in x:
        assert torch.equal(x[k], kept[k])
    for o in out.values():
        assert all(o.data_ptr() != v.data_ptr() for v in x.values())


def test_broadcasting(artifact):
    m = Model(artifact)
    x = {"x": torch.tensor(3.0, dtype=F64), "strain": torch.rand(4, 1, 6, dtype=F64)}
    out = m.forward(x)
    assert out["s"].shape == (4, 1, 6) and out["y"].shape == (4, 1)
    x = {"x": torch.rand(5, dtype=F64), "strain": torch.rand(4, 1, 6, dtype=F64)}
    assert m.forward(x)["s"].shape == (4, 5, 6)


def test_parameters_are_mutable(artifact):
    m = Model(artifact)
    x = _inputs(3)
    m.named_parameters()["k"].fill_(5.0)
    torch.testing.assert_close(m.forward(x)["y"], reference(x["x"], x["strain"], 5.0)[0])
    m.set_parameter("k", torch.tensor(-1.0, dtype=F64))
    torch.testing.assert_close(m.forward(x)["y"], reference(x["x"], x["strain"], -1.0)[0])
    with pytest.raises(FatalError, match="no promoted parameter 'E'; promoted: k"):
        m.set_parameter("E", 1.0)
    with pytest.raises(FatalError, match=r"parameter 'k' has shape \(2,\)"):
        m.set_parameter("k", torch.ones(2, dtype=F64))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), r"^parameter 'k' has the non-finite value nan: a parameter must be finite$"),
        (torch.tensor(float("-inf"), dtype=F64), r"^parameter 'k' has the non-finite value -inf"),
        (
            torch.tensor(2),
            r"^parameter 'k' is torch\.float64: the value has dtype torch\.int64, which is not "
            r"floating-point",
        ),
        (torch.tensor(2 + 1j), r"the value has dtype torch\.complex64, which is not floating"),
        (torch.tensor(True), r"the value has dtype torch\.bool, which is not floating"),
        ("2", r"^parameter 'k': a str is not a number or tensor$"),
    ],
)
def test_set_parameter_refuses(artifact, value, message):
    """py-aoti: one line naming the parameter; the model keeps its value."""
    m = Model(artifact)
    x = _inputs(3)
    with pytest.raises(FatalError, match=message):
        m.set_parameter("k", value)
    torch.testing.assert_close(m.forward(x)["y"], reference(x["x"], x["strain"], 2.0)[0])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (torch.tensor(float("nan"), dtype=F64), r"^parameter 'k' has the non-finite value nan: a"),
        (torch.tensor(float("inf"), dtype=F64), r"^parameter 'k' has the non-finite value inf: a"),
        (
            torch.tensor(2),
            r"^parameter 'k' is float64: the value has dtype int64, which is not floating-point",
        ),
    ],
)
def test_runtime_set_parameter_refuses(artifact, value, message):
    """The C++ runtime (cpp-aoti, cpp-dispatch) checks the same past the Python checks."""
    m = Model(artifact)
    with pytest.raises(FatalError, match=message):
        m._cpp.set_parameter("k", value)
    m._cpp.set_parameter("k", 3)  # a number has no dtype of its own: the model's
    assert float(m.named_parameters()["k"]) == 3.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda x: x.pop("x"), "missing input 'x'"),
        (lambda x: x.update(strian=x.pop("strain")), "unknown input 'strian'"),
        (
            lambda x: x.update(strain=torch.zeros(3, 5, dtype=F64)),
            r"input 'strain' has shape \(3, 5\) but must end in its base shape \(6,\)",
        ),
        (
            lambda x: x.update(x=x["x"].float()),
            "input 'x' has dtype torch.float32 but the model was compiled for torch.float64",
        ),
        (lambda x: x.update(x=[1.0, 2.0, 3.0]), "input 'x' is a list, not a torch.Tensor"),
        (
            lambda x: x.update(x=torch.zeros(4, dtype=F64)),
            r"^input 'x' has batch shape \(4,\) and input 'strain' \(3,\): they do not broadcast$",
        ),
    ],
)
def test_bad_inputs(artifact, change, message):
    m = Model(artifact)
    x = _inputs(3)
    change(x)
    with pytest.raises(FatalError, match=message):
        m.forward(x)


def test_missing_pair(artifact):
    m = Model(artifact)
    _, J = m.jacobian(_inputs(2))
    with pytest.raises(FatalError, match=r"block s:strain was not compiled.*-d s:strain"):
        J["s"]["strain"]
    _, jv = m.jvp(_inputs(2), {"x": torch.ones(2, dtype=F64)})
    assert set(jv) == {"s"}
    t = {"x": torch.ones(2, dtype=F64), "strain": torch.ones(2, 6, dtype=F64)}
    with pytest.raises(FatalError, match=r"no output has compiled derivatives w\.r\.t\. all of x"):
        m.jvp(_inputs(2), t)
    with pytest.raises(FatalError, match="tangent for unknown input"):
        m.jvp(_inputs(2), {"T": torch.ones(2, dtype=F64)})


def test_no_derivatives_compiled(edited):
    def edit(meta):
        meta["derivatives"] = []
        del meta["targets"][0]["graphs"]["jacobian"]

    m = Model(edited(edit))
    assert m.forward(_inputs(2))["y"].shape == (2,)
    with pytest.raises(FatalError, match="compiled without derivatives; recompile with"):
        m.jacobian(_inputs(2))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda meta: "{ not json", "corrupt metadata \\(invalid JSON at byte 2"),
        (lambda meta: "[1, 2]", "corrupt metadata \\(not a JSON object\\)"),
        (lambda meta: meta.pop("inputs"), "corrupt metadata \\(missing key 'inputs'\\)"),
        (
            lambda meta: meta["inputs"][0].pop("base_shape"),
            "corrupt metadata \\(missing key 'base_shape' in inputs\\[0\\]\\)",
        ),
        (
            lambda meta: meta["targets"][0].pop("graphs"),
            "corrupt metadata \\(missing key 'graphs' in targets\\[0\\]\\)",
        ),
        (lambda meta: meta.update(inputs={}), "corrupt metadata \\(.*inputs must be an array"),
        (lambda meta: meta.update(schema_version=99), "schema_version 99 is not the 1"),
        (
            lambda meta: meta.update(torch_version="2.99.0"),
            "was built with torch 2.99.0 but this libneml2 runs torch",
        ),
        (
            lambda meta: meta["targets"][0]["graphs"].update(forward="cpu/float64/gone.pt2"),
            "graph file .*gone.pt2 is missing",
        ),
    ],
)
def test_bad_artifacts(edited, edit, message):
    with pytest.raises(FatalError, match=message):
        Model(edited(edit))


def test_target_selection(artifact, tmp_path):
    with pytest.raises(FatalError, match="no target for device any and dtype float32"):
        Model(artifact, dtype=torch.float32)
    with pytest.raises(FatalError, match=r"metadata\.json not found"):
        Model(tmp_path)


def test_bad_tangents(artifact):
    m = Model(artifact)
    with pytest.raises(FatalError, match=r"input 'tangent of strain' has shape \(2, 5\)"):
        m.jvp(_inputs(2), {"strain": torch.ones(2, 5, dtype=F64)})
    with pytest.raises(FatalError, match=r"tangent of 'strain' has batch shape \(3,\)"):
        m.jvp(_inputs(2), {"strain": torch.ones(3, 6, dtype=F64)})


def _nan_outputs(m, *batch):
    return {
        n: torch.full((*batch, *s), float("nan"), dtype=F64)
        for n, s in zip(m.output_names, m.output_base_shapes, strict=True)
    }


def _without_into(meta):
    del meta["graphs"]["forward_into"]
    del meta["targets"][0]["graphs"]["forward_into"]


@pytest.mark.parametrize("batch", [(1,), (7,), (1000,), (2, 3)])
@pytest.mark.parametrize("compiled", [True, False])
def test_forward_into(artifact, edited, batch, compiled):
    """forward_into stores forward's results into the given tensors: in place by the
    forward_into graph, else copied in (an artifact compiled without --write-into)."""
    m = Model(artifact if compiled else edited(_without_into))
    assert m.writes_into is compiled
    x = _inputs(*batch)
    want = m.forward(x)
    dest = _nan_outputs(m, *batch)
    ptrs = {k: v.data_ptr() for k, v in dest.items()}
    assert m.forward_into(x, dest) is None
    for k, v in dest.items():
        assert v.data_ptr() == ptrs[k]
        torch.testing.assert_close(v, want[k], rtol=0, atol=0)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(s=torch.empty(6, 6, dtype=F64)), "output 's' has shape (6, 6) but"),
        (lambda d: d.pop("y"), "no tensor for output 'y'"),
        (lambda d: d.update(z=d["y"]), "unknown output 'z'"),
        (lambda d: d.update(s=d["s"].float()), "output 's' is float32 on cpu"),
        (lambda d: d.update(s=torch.empty(6, 5, dtype=F64).t()), "output 's' is not contiguous"),
    ],
)
def test_forward_into_rejects_bad_outputs(artifact, change, message):
    """A tensor that does not fit is named before anything is computed: the others keep
    their contents."""
    m = Model(artifact)
    dest = _nan_outputs(m, 5)
    kept = list(dest.values())
    change(dest)
    with pytest.raises(FatalError, match=re.escape(message)):
        m.forward_into(_inputs(5), dest)
    assert all(torch.isnan(v).all() for v in kept)
