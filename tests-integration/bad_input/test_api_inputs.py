"""Bad input, item 3: input dtype, device and names on all six routes.

The rule (docs/routes.md, "Input dtype and device"): a tensor handed to a model (an
input, a ``jvp`` tangent, a typed call's ``v=`` seed) must already have the model's
dtype and device. No route converts or moves it: a float32, bfloat16, int64 or complex
input to a float64 model, or a tensor on another device (``meta`` stands in for one on
a CPU-only machine), is a FatalError naming the variable, its dtype or device and the
model's. A name that is not an input is a FatalError naming it with the closest input
as a suggestion, in name-keyed calls and in a typed call's ``v=``.

One model, the hello elasticity (``examples/hello/input.i``, float64 on CPU), on every
route of ``neml2.routes`` (opened by ``neml2.routes.open_model``; the rows call the
route's own object): py-eager's model, py-jit's ``neml2.compile`` of it (every row is
rejected before anything compiles), py-aoti's ``type = AOTIModel`` stub, cpp-aoti's
``neml2.aoti.Model``, cpp-dispatch's ``DispatchedModel`` (two CPU workers), cpp-eager's
``neml2.aoti.cpp_eager.Model``; and ``cpp-aoti-binding``, the C++ ``neml2::aoti::Model``
itself (``neml2.aoti._core.Model``, none of the Python wrapper's checks).

The artifact (``-d stress:strain``) is compiled once per session, its graphs from the
content-hashed cache in build/aoti-cache when an earlier session built them; each route's
model is made once, on the first row that needs it.
"""

from __future__ import annotations

import functools
import importlib
import re
import tempfile
from pathlib import Path

import pytest
import torch
from _table import HELLO, Api, check_row, ids

import neml2
import neml2.routes
from neml2.tensors import SR2, FatalError

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "aoti-cache"
INPUT = HELLO / "input.i"
F64 = torch.float64


@functools.cache
def _artifact():
    """``neml2-compile examples/hello/input.i elasticity -d stress:strain``, once."""
    out = Path(_keep(tempfile.TemporaryDirectory(prefix="neml2-api-inputs-")).name)
    return neml2.routes.build_artifact(
        INPUT, "elasticity", pairs=["stress:strain"], output_dir=out / "artifacts", cache_dir=CACHE
    )


_KEEP: list = []


def _keep(obj):
    """Held until the interpreter exits (a TemporaryDirectory is removed then)."""
    _KEEP.append(obj)
    return obj


#: the routes of neml2.routes, and the C++ class itself without neml2.aoti.Model's Python
#: checks (``neml2.aoti._core.Model``, the binding cpp-aoti's wrapper calls)
ROUTES = (*neml2.routes.NAMES, "cpp-aoti-binding")


@functools.cache
def route(name: str):
    """The hello elasticity on route *name* (the route's own object), made once; py-jit
    with Dynamo's eager backend: the rows are rejected before anything compiles, and the
    one test that runs the model needs tracing, not Inductor's codegen."""
    if name == "cpp-aoti-binding":
        return importlib.import_module("neml2.aoti._core").Model(str(_artifact().artifact_dir))
    art = _artifact() if neml2.routes.route(name).artifact else None
    return neml2.routes.open_model(
        name, INPUT, "elasticity", artifact=art, jit_backend="eager", workers=["cpu", "cpu"]
    ).impl


def strain(dtype=F64, device="cpu", batch=2) -> torch.Tensor:
    """A small strain; exact in every dtype here (multiples of 1/4), so a route that
    converted it would compute a plausible answer and the row would catch that."""
    x = torch.tensor([1.0, -0.25, -0.25, 0.5, 0.0, 0.0], dtype=F64).expand(batch, 6)
    return x.to(dtype=dtype, device=device)


def holding(data: torch.Tensor) -> SR2:
    """An SR2 holding *data* as it is (its constructor would turn ints into floats)."""
    x = SR2(torch.zeros(data.shape, dtype=F64))
    x.data = data
    return x


# ---------------------------------------------------------------------- calls
def forward(r: str, **kw):
    return lambda tmp: route(r).forward({"strain": strain(**kw)})


def jacobian(r: str, **kw):
    return lambda tmp: route(r).jacobian({"strain": strain(**kw)})


def jvp_tangent(r: str, **kw):
    return lambda tmp: route(r).jvp({"strain": strain()}, {"strain": strain(**kw)})


def forward_keys(r: str, key: str):
    return lambda tmp: route(r).forward({key: strain()})


def jvp_keys(r: str, key: str):
    return lambda tmp: route(r).jvp({"strain": strain()}, {key: strain()})


def typed(r: str, **kw):
    return lambda tmp: route(r)(holding(strain(**kw)))


def typed_v(r: str, key: str):
    seed = {key: {"d": SR2(strain(batch=1)[None])}}
    return lambda tmp: route(r)(SR2(strain()), v=seed)


# ---------------------------------------------------------------------- fragments
def has_dtype(what: str, dtype: str) -> str:
    """``<what> 'strain' has dtype <dtype>``, then the model's float64 (Python routes
    print ``torch.float32``, C++ ``float32``)."""
    return rf"{what} 'strain' has dtype (torch\.)?{dtype}\b.*(torch\.)?float64"


def on_meta(what: str) -> str:
    return rf"{what} 'strain' is on meta\b.*\bcpu\b"


UNKNOWN = re.escape("unknown input 'strian' (did you mean 'strain'?)")
UNKNOWN_TANGENT = re.escape("tangent for unknown input 'strian' (did you mean 'strain'?)")
UNKNOWN_V = re.escape("v= tangent for unknown input 'strian' (did you mean 'strain'?)")

DTYPES = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "complex128": torch.complex128,
}


def _rows() -> list[Api]:
    rows = []
    for r in ROUTES:
        for name, dt in DTYPES.items():
            rows.append(
                Api(
                    f"{r}-forward-{name}",
                    forward(r, dtype=dt),
                    FatalError,
                    has_dtype("input", name),
                    regex=True,
                )
            )
        rows += [
            Api(
                f"{r}-jacobian-float32",
                jacobian(r, dtype=torch.float32),
                FatalError,
                has_dtype("input", "float32"),
                regex=True,
            ),
            Api(
                f"{r}-forward-meta",
                forward(r, device="meta"),
                FatalError,
                on_meta("input"),
                regex=True,
            ),
            Api(
                f"{r}-jvp-tangent-float32",
                jvp_tangent(r, dtype=torch.float32),
                FatalError,
                has_dtype("tangent", "float32"),
                regex=True,
            ),
            Api(
                f"{r}-jvp-tangent-complex128",
                jvp_tangent(r, dtype=torch.complex128),
                FatalError,
                has_dtype("tangent", "complex128"),
                regex=True,
            ),
            Api(
                f"{r}-jvp-tangent-meta",
                jvp_tangent(r, device="meta"),
                FatalError,
                on_meta("tangent"),
                regex=True,
            ),
            Api(
                f"{r}-forward-unknown-key",
                forward_keys(r, "strian"),
                FatalError,
                UNKNOWN,
                regex=True,
            ),
            Api(
                f"{r}-jvp-unknown-tangent-key",
                jvp_keys(r, "strian"),
                FatalError,
                UNKNOWN_TANGENT,
                regex=True,
            ),
        ]
    # the typed call model(*inputs, v=...) of the Python routes (the compiled routes
    # have none: the AOTIModel stub's is its forward, which takes no v=)
    for r in ("py-eager", "py-jit", "py-aoti"):
        rows += [
            Api(
                f"{r}-typed-float32",
                typed(r, dtype=torch.float32),
                FatalError,
                has_dtype("input", "float32"),
                regex=True,
            ),
            Api(
                f"{r}-typed-bfloat16",
                typed(r, dtype=torch.bfloat16),
                FatalError,
                has_dtype("input", "bfloat16"),
                regex=True,
            ),
            Api(
                f"{r}-typed-int64",
                typed(r, dtype=torch.int64),
                FatalError,
                has_dtype("input", "int64"),
                regex=True,
            ),
            Api(
                f"{r}-typed-meta", typed(r, device="meta"), FatalError, on_meta("input"), regex=True
            ),
            Api(f"{r}-typed-v-misspelt", typed_v(r, "strian"), FatalError, UNKNOWN_V, regex=True),
        ]
    return rows


ROWS = _rows()


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)


def test_the_same_inputs_pass_in_float64_on_cpu():
    """The rows fail for their dtype, device or name alone: the same calls with a float64
    strain on the CPU and the right names give py-eager's stress on every route."""
    ref = route("py-eager").forward({"strain": strain()})["stress"]
    for r in ROUTES:
        m = route(r)
        y = m.forward({"strain": strain()})["stress"]
        _, jv = m.jvp({"strain": strain()}, {"strain": strain()})
        assert y.dtype == F64, r
        torch.testing.assert_close(y, ref, rtol=1e-12, atol=0.0, msg=r)
        torch.testing.assert_close(jv["stress"], ref, rtol=1e-12, atol=0.0, msg=r)
