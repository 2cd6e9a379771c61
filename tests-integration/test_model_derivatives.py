"""Generic derivative check of every registered model against finite differences.

Each model is taken, configured, from the conformance unit-test inputs (the
inputs of its ``ModelUnitTest`` block give a valid operating point). For random
directions we compare

* the first-order tangents (``v=`` path) with central differences of ``forward``,
* the second-order tangents (``v2=`` path) with central differences of the
  first-order tangents,

on the original inputs and on a sub-batched copy (an extra sub-batch axis of
size 3 with perturbed entries), so per-grain / per-slip use is covered too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import neml2.drivers  # noqa: F401
from neml2.models import load_input, lookup, registered_types
from neml2.tensors import TensorWrapper

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT.parent / "shared" / "conformance" / "models"
FILES = sorted(FOLDER.rglob("*.i")) if FOLDER.is_dir() else []


def _operating_point(path: Path):
    ctx = load_input(path)
    driver = next(
        ctx.object("Drivers", b.name)
        for b in ctx.section("Drivers").children()
        if b.param("type").as_str() == "ModelUnitTest"
    )
    model = ctx.top_model(driver.opts["model"])
    inputs = driver._values("input")
    return model, [inputs[n] for n in model.input_spec]


def _sub_batched(xs: list[TensorWrapper], seed: int) -> list[TensorWrapper]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for x in xs:
        dyn = x.batch_ndim - x.sub_batch_ndim
        data = x.data.unsqueeze(dyn)
        shape = list(data.shape)
        shape[dyn] = 3
        data = data.expand(shape).clone()
        if data.is_floating_point():
            noise = torch.randn(data.shape, generator=g, dtype=data.dtype)
            data = data * (1 + 1e-2 * noise)
        out.append(type(x)(data, x.sub_batch_ndim + 1))
    return out


def _jvp(model, xs, dirs, second=False):
    v = {
        n: {"a": type(x)(d.unsqueeze(0), x.sub_batch_ndim)}
        for n, x, d in zip(model.input_spec, xs, dirs, strict=True)
        if d is not None
    }
    if not second:
        *outs, v_out = model(*xs, v=v)
        return outs, v_out
    *outs, v_out, v2_out = model(*xs, v=v, v2={n: {} for n in v})
    return outs, v_out, v2_out


def _shift(xs, dirs, h):
    return [
        type(x)(x.data + h * d, x.sub_batch_ndim) if d is not None else x
        for x, d in zip(xs, dirs, strict=True)
    ]


def _tangent(v_out, name, like, order=1):
    t = v_out[name].get("a")
    if order == 2:
        t = t.get("a") if t is not None else None
    if t is None:
        return torch.zeros_like(like)
    return t.data[(0,) * order].expand_as(like)


def _check(model, xs, seed):
    g = torch.Generator().manual_seed(seed)
    dirs = [
        torch.randn(x.data.shape, generator=g, dtype=x.dtype) * (x.data.abs().mean() + 1e-3)
        if x.data.is_floating_point()
        else None
        for x in xs
    ]
    h = 1e-6
    with torch.no_grad():
        outs, v_out, v2_out = _jvp(model, xs, dirs, second=True)
        plus = _jvp(model, _shift(xs, dirs, h), dirs)
        minus = _jvp(model, _shift(xs, dirs, -h), dirs)
    for k, name in enumerate(model.output_spec):
        o = outs[k].data
        fd1 = (plus[0][k].data - minus[0][k].data) / (2 * h)
        got1 = _tangent(v_out, name, o)
        scale1 = fd1.abs().max().item() + 1e-8
        torch.testing.assert_close(
            got1, fd1.expand_as(got1), rtol=1e-4, atol=1e-5 * scale1, msg=f"d{name}"
        )
        fd2 = (_tangent(plus[1], name, o) - _tangent(minus[1], name, o)) / (2 * h)
        got2 = _tangent(v2_out, name, o, order=2)
        scale2 = fd2.abs().max().item() + 1e-8
        torch.testing.assert_close(
            got2, fd2.expand_as(got2), rtol=1e-3, atol=1e-4 * scale2, msg=f"d2{name}"
        )


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FOLDER)) for p in FILES])
@pytest.mark.parametrize("variant", ["plain", "sub_batched"])
def test_derivatives_match_finite_differences(path, variant):
    from neml2 import hit

    root = hit.parse_file(path).merged()
    types = {b.param("type").as_str() for b in root.find("Models").children()}
    missing = sorted(t for t in types if lookup(t) is None)
    if missing:
        pytest.xfail(f"not implemented yet: {', '.join(missing)}")
    model, xs = _operating_point(path)
    if variant == "sub_batched":
        xs = _sub_batched(xs, seed=1)
    _check(model, xs, seed=0)


def test_every_registered_model_is_covered():
    """A registered model type without a conformance input escapes the generic check."""
    from neml2 import hit
    from neml2.models import Model

    covered = set()
    for f in FILES:
        for b in hit.parse_file(f).merged().find("Models").children():
            covered.add(b.param("type").as_str())
    models = [t for t in registered_types() if isinstance(lookup(t), type)]
    uncovered = sorted(
        t
        for t in models
        if issubclass(lookup(t), Model) and not t.startswith("_") and t not in covered
    )
    # ComposedModel is exercised through the compositions in the inputs above.
    assert set(uncovered) <= {"ComposedModel"}, f"no conformance input covers {uncovered}"
