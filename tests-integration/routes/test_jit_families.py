"""py-jit (``neml2.compile``) on one zoo model of each family, against py-eager.

The families: phase-field fracture, finite volume (the cell axis is sub-batch), KWN (the
size-bin axis is sub-batch), porous flow, chemical reactions (pyrolysis) and an implicit
solid-mechanics model (J2). Each is compiled with Dynamo's ``eager`` backend (the trace
is what these check; Inductor's code generation would take minutes per implicit graph)
and must match py-eager on

* ``forward`` and ``jacobian`` (name-keyed, raw tensors) and the typed call,
* batched (3 points) and unbatched (every input at batch shape ``()``, the result at
  ``()`` as on py-eager),
* a Python float for a Scalar input (``{"t": 1.0}``).

One small explicit model (porous flow) goes through the default Inductor backend
unbatched: its graph is compiled with the batch flattened and marked dynamic, so a later
batch of 3 reuses it.

py-eager is given typed values (the sub-batch rank of a raw tensor is py-jit's
``sub_batch=`` option only), so the same numbers go in on both sides.
"""

from __future__ import annotations

import pytest
import torch
from _zoo import CASES

import neml2

#: family -> zoo case
FAMILIES = {
    "phase_field_fracture": "phase_field_fracture",
    "finite_volume": "finite_volume",
    "kwn": "kwn",
    "porous_flow": "porous_flow",
    "chemical_reactions": "pyrolysis",
    "solid_mechanics_implicit": "j2_isoharden",
}

#: the families whose every Scalar input is sub-batched (KWN: one value per size bin)
PER_BIN_ONLY = {"kwn"}

#: batch shapes: 3 points, and none
BATCHES = {"batched": (3,), "unbatched": ()}

#: Dynamo's eager backend runs the traced torch ops: py-eager's numbers up to the order
#: of a few sums (the implicit models' Newton stops at the same iteration)
RTOL, ATOL = 1e-10, 1e-12


def _close(what: str, got: torch.Tensor, want: torch.Tensor, rtol=RTOL, atol=ATOL) -> None:
    assert got.shape == want.shape, (
        f"{what}: shape {tuple(got.shape)}, py-eager {tuple(want.shape)}"
    )
    err = (got - want).abs()
    bad = ~(err <= atol + rtol * want.abs())  # NaN or inf on either side fails
    assert not bool(bad.any()), f"{what}: max |error| {err.max().item():.3e} vs py-eager"


def _close_tree(what: str, got, want, **tol) -> None:
    if isinstance(want, dict):
        assert set(got) == set(want), f"{what}: keys {sorted(got)}, py-eager {sorted(want)}"
        for k in want:
            _close_tree(f"{what}[{k}]", got[k], want[k], **tol)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), f"{what}: {len(got)} items, py-eager {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _close_tree(f"{what}[{i}]", g, w, **tol)
    else:
        _close(what, getattr(got, "data", got), getattr(want, "data", want), **tol)


class Family:
    """A zoo model on py-eager and on py-jit (eager backend), with its inputs."""

    def __init__(self, case_name: str):
        self.case = CASES[case_name]
        self.eager = neml2.load_model(self.case.file, self.case.model)
        self.subs = {k: len(v) for k, v in self.case.sub_batch.items()}
        self.jit = neml2.compile(self.eager, backend="eager", sub_batch=self.subs)

    def raw(self, batch: tuple[int, ...]) -> dict[str, torch.Tensor]:
        """Raw name-keyed inputs at ``(*batch, *sub, *base)``."""
        x = self.case.inputs(3)
        if batch == ():
            return {k: v[0] for k, v in x.items()}
        return x

    def typed(self, raw: dict) -> dict:
        """*raw* as typed values (a Python number stays a number)."""
        spec = self.eager.input_spec
        return {
            k: raw[k] if isinstance(raw[k], float) else spec[k](raw[k], self.subs.get(k, 0))
            for k in spec
        }

    def float_input(self) -> str | None:
        """A Scalar input without sub-batch (``t`` where there is one), or None."""
        names = [
            k
            for k, t in self.eager.input_spec.items()
            if t is neml2.tensors.Scalar and k not in self.subs
        ]
        return "t" if "t" in names else (names[0] if names else None)


@pytest.fixture(scope="module")
def families():
    """Family name -> its models, built once per module (each graph traces on first use)."""
    cache: dict[str, Family] = {}

    def get(name: str) -> Family:
        if name not in cache:
            cache[name] = Family(FAMILIES[name])
        return cache[name]

    return get


@pytest.mark.parametrize("batch", list(BATCHES), ids=list(BATCHES))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_forward_matches_py_eager(families, family, batch):
    f = families(family)
    x = f.raw(BATCHES[batch])
    got = f.jit.forward(x)
    want = f.eager.forward(f.typed(x))
    _close_tree(f"{family} forward", got, want)  # shapes too: () when unbatched


@pytest.mark.parametrize("batch", list(BATCHES), ids=list(BATCHES))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_jacobian_matches_py_eager(families, family, batch):
    f = families(family)
    x = f.raw(BATCHES[batch])
    got = f.jit.jacobian(x)
    want = f.eager.jacobian(f.typed(x))
    _close_tree(f"{family} jacobian", got, want)


@pytest.mark.parametrize("batch", list(BATCHES), ids=list(BATCHES))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_typed_call_matches_py_eager(families, family, batch):
    f = families(family)
    args = list(f.typed(f.raw(BATCHES[batch])).values())
    _close_tree(f"{family} typed call", f.jit(*args), f.eager(*args))


@pytest.mark.parametrize("batch", list(BATCHES), ids=list(BATCHES))
@pytest.mark.parametrize("family", [k for k in FAMILIES if k not in PER_BIN_ONLY])
def test_float_scalar_input(families, family, batch):
    """One Scalar input given as a Python float, the others batched or unbatched."""
    f = families(family)
    name = f.float_input()
    assert name is not None, f"{family}: no Scalar input without sub-batch"
    x = f.raw(BATCHES[batch])
    x[name] = float(x[name].reshape(-1)[0])
    want = f.eager.forward(f.typed(x)), f.eager.jacobian(f.typed(x))
    got = f.jit.forward(x), f.jit.jacobian(x)
    _close_tree(f"{family} with a float '{name}'", got, want)


def test_inductor_unbatched_then_batched():
    """Default backend (Inductor) on the porous-flow model (explicit, every input and
    output a Scalar): unbatched inputs compile the flattened, dynamic-batch graph (batch
    1 padded to 2) and give outputs at batch shape ``()``; a batch of 3 reuses it."""
    case = CASES["porous_flow"]
    eager = neml2.load_model(case.file, case.model)
    jit = neml2.compile(eager)
    stats = torch._dynamo.utils.counters["stats"]
    x = {k: v[0] for k, v in case.inputs(1).items()}
    before = stats["unique_graphs"]
    got = jit.forward(x), jit.jacobian(x)
    compiled = stats["unique_graphs"] - before
    assert compiled == 2, f"{compiled} graphs compiled for forward and jacobian"
    # Inductor may reorder sums and fuse: a looser tolerance than the eager backend's
    want = eager.forward(x), eager.jacobian(x)
    _close_tree("porous flow unbatched", got, want, rtol=1e-12)
    assert all(y.shape == () for y in got[0].values())
    x3 = case.inputs(3)
    got3 = jit.forward(x3), jit.jacobian(x3)
    assert stats["unique_graphs"] - before == 2, "batch 3 recompiled the unbatched graphs"
    _close_tree("porous flow batch 3", got3, (eager.forward(x3), eager.jacobian(x3)), rtol=1e-12)
