"""Every ``[Tensors] type = Python`` expression of the conformance inputs evaluates.

The expressions are read with a small regex-based reader (not a HIT parser) and
evaluated in the namespace the conformance README promises: the typed classes and
functions of ``neml2.tensors``, ``torch``, ``math``, ``np``, plus the other ``[Tensors]``
names of the same file.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import neml2.tensors as nt

CONFORMANCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "conformance"
CONFORMANCE = CONFORMANCE.resolve()
if not CONFORMANCE.is_dir() and os.environ.get("NEML2_CONFORMANCE_DIR"):  # other layouts
    CONFORMANCE = Path(os.environ["NEML2_CONFORMANCE_DIR"])

_SECTION = re.compile(r"^\[Tensors\][^\n]*\n(?P<body>.*?)^\[\]", re.M | re.S)
_BLOCK = re.compile(r"^\s*\[(?P<name>[^\]\s]+)\]\s*$(?P<body>.*?)^\s*\[\]\s*$", re.M | re.S)
_TYPE = re.compile(r"^\s*type\s*=\s*(\S+)", re.M)
_EXPR = re.compile(r"^\s*expr\s*=\s*(?:'''(?P<tq>.*?)'''|'(?P<sq>[^']*)')", re.M | re.S)


def python_tensors(text: str) -> dict[str, str]:
    """``{name: expression}`` of the ``type = Python`` blocks of one input file."""
    out: dict[str, str] = {}
    m = _SECTION.search(text)
    if not m:
        return out
    for b in _BLOCK.finditer(m.group("body")):
        t = _TYPE.search(b.group("body"))
        if not t or t.group(1) != "Python":
            continue
        e = _EXPR.search(b.group("body"))
        assert e, f"no expr in block {b.group('name')}"
        out[b.group("name")] = (
            e.group("tq") if e.group("tq") is not None else e.group("sq")
        ).strip()
    return out


def namespace() -> dict:
    ns = {name: getattr(nt, name) for name in nt.__all__}
    ns.update(torch=torch, math=math, np=np)
    return ns


def evaluate_file(path: Path) -> dict[str, object]:
    exprs = python_tensors(path.read_text())
    ns = namespace()
    values: dict[str, object] = {}
    pending = dict(exprs)
    while pending:
        progress = False
        for name, expr in list(pending.items()):
            try:
                values[name] = eval(expr, ns, dict(values))
            except NameError as e:
                if e.name in pending:  # depends on a later block
                    continue
                raise
            del pending[name]
            progress = True
        assert progress, f"unresolvable [Tensors] references in {path}: {sorted(pending)}"
    return values


FILES = sorted(p for p in CONFORMANCE.rglob("*.i") if "type = Python" in p.read_text())


def test_found_the_conformance_inputs():
    assert len(FILES) >= 40
    n = sum(len(python_tensors(p.read_text())) for p in FILES)
    assert n >= 150


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CONFORMANCE)) for p in FILES])
def test_python_tensors_evaluate(path):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        values = evaluate_file(path)
    finally:
        torch.set_default_dtype(old)
    for name, v in values.items():
        assert isinstance(v, nt.TensorWrapper), (name, type(v))


@pytest.mark.parametrize(
    "expr, shape, sub",
    [
        ("SR2.fill(0.1, -0.05, -0.05, 0.0, 0.0, 0.0).dynamic_batch.expand(20)", (20, 6), 0),
        ("SR2.fill(1e-3, 0, 0, 0, 0, 0).dynamic_batch.expand(100, 1)", (100, 1, 6), 0),
        ("SR2.fill(0.09, 0.04, -0.02)", (6,), 0),
        ("Scalar([1.0, 4.0, 9.0, 16.0]).sub_batch.retag(1)", (4,), 1),
        ("linspace(Scalar(1.0).dynamic_batch, Scalar(10.0).dynamic_batch, 20)", (20,), 0),
        ("linspace(Scalar(-0.1).sub_batch, Scalar(0.2).sub_batch, 12)", (12,), 1),
        ("MRP(torch.zeros(5, 3), sub_batch_ndim=1).sub_batch.retag(1)", (5, 3), 1),
        ("Scalar(torch.full((12,), 57.5), sub_batch_ndim=1)", (12,), 1),
        ("Scalar.full(200, fill_value=0.01)", (200,), 0),
        ("SR2.full(2, 3, fill_value=1.5)", (2, 3, 6), 0),
        ("Vec.full(2.0, (4,), 1)", (4, 3), 1),
        ("MillerIndex(torch.tensor([1.0, 1.0, 0.0]))", (3,), 0),
        ("WR2(torch.zeros(100, 1, 3, dtype=torch.float64))", (100, 1, 3), 0),
    ],
)
def test_vocabulary_semantics(expr, shape, sub):
    v = eval(expr, namespace())
    assert tuple(v.shape) == shape and v.sub_batch_ndim == sub


def test_fill_values_follow_neml2():
    # 6 values are tensor components (yz, xz, xy); Mandel gets the sqrt2 factor
    v = eval("SR2.fill(1, 2, 3, 4, 5, 6)", namespace())
    np.testing.assert_allclose(
        v.data.numpy(), [1, 2, 3, 4 * 2**0.5, 5 * 2**0.5, 6 * 2**0.5], rtol=1e-6
    )
    m = eval("MillerIndex(torch.tensor([1.0, 1.0, 0.0]))", namespace())
    assert m.dtype == torch.int64


def test_radial_return_histories():
    path = (
        CONFORMANCE / "regression/solid_mechanics/rate_independent_plasticity/radial_return/model.i"
    )
    if not path.exists():
        pytest.skip("input not present")
    v = evaluate_file(path)
    assert v["times"].shape == (100, 20)
    assert v["strains"].shape == (100, 20, 6)


def test_full_spellings_agree():
    ours = nt.Scalar.full(0.01, (200,))
    ref = eval("Scalar.full(200, fill_value=0.01)", namespace())
    torch.testing.assert_close(ref.data, ours.data, rtol=0, atol=0)
    with pytest.raises(TypeError, match="integer batch sizes"):
        nt.Scalar.full((2, 3), fill_value=1.0)
    with pytest.raises(TypeError, match="fill_value"):
        nt.Scalar.full()
