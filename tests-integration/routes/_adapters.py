"""One adapter per route, all with the same shape over raw name-keyed tensors.

``forward(inputs) -> {out: tensor}``, ``jvp(inputs, tangents) -> (outputs, {out: tensor})``,
``jacobian(inputs) -> (outputs, {out: {in: block}})``. Inputs are ``(*B, *sub, *base)``.
The Python routes are handed typed values for sub-batch inputs (the raw surface of
``Model`` has no sub-batch information); the compiled routes read it from the artifact.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import torch
from _zoo import Case

import neml2

ROUTES = ("py-eager", "py-jit", "py-aoti", "cpp-aoti", "cpp-dispatch", "cpp-eager")


def _detach(tree):
    return torch.utils._pytree.tree_map(
        lambda t: t.detach() if isinstance(t, torch.Tensor) else t, tree
    )


def _plain(tree):
    """Route results as plain nested dicts of tensors (the runtimes return dict subclasses)."""
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_plain(v) for v in tree)
    return tree.detach() if isinstance(tree, torch.Tensor) else tree


class _Adapter:
    def __init__(self, impl, typed_inputs=None):
        self.impl = impl
        self._typed = typed_inputs

    def _in(self, x):
        return self._typed(x) if self._typed else x

    def forward(self, inputs):
        with torch.no_grad():
            return _plain(self.impl.forward(self._in(inputs)))

    def jvp(self, inputs, tangents):
        with torch.no_grad():
            return _plain(self.impl.jvp(self._in(inputs), tangents))

    def jacobian(self, inputs):
        with torch.no_grad():
            return _plain(self.impl.jacobian(self._in(inputs)))


def _typer(case: Case, model):
    """Raw -> typed for the sub-batch inputs of *case* (py-eager's raw surface has none)."""
    if not case.sub_batch:
        return None
    spec = model.input_spec

    def typed(x):
        return {
            k: spec[k](v, len(case.sub_batch[k])) if k in case.sub_batch else v
            for k, v in x.items()
        }

    return typed


def py_eager(case: Case, artifact=None):
    m = neml2.load_model(case.file, case.model)
    return _Adapter(m, _typer(case, m))


def py_jit(case: Case, artifact=None):
    """``neml2.compile`` with Inductor; ``NEML2_ROUTES_JIT_BACKEND=eager`` swaps in Dynamo's
    eager backend (tracing checked, minutes of Inductor codegen per implicit graph saved)."""
    m = neml2.load_model(case.file, case.model)
    sub = {k: len(s) for k, s in case.sub_batch.items()}
    backend = os.environ.get("NEML2_ROUTES_JIT_BACKEND", "inductor")
    return _Adapter(neml2.compile(m, backend=backend, sub_batch=sub))


def py_aoti(case: Case, artifact):
    return _Adapter(neml2.load_model(artifact.stub_path, case.model))


def cpp_aoti(case: Case, artifact):
    return _Adapter(neml2.aoti.Model(artifact.artifact_dir))


def cpp_dispatch(case: Case, artifact):
    cls = neml2.aoti.DispatchedModel
    return _Adapter(
        cls(str(artifact.artifact_dir), workers=["cpu", "cpu"], scheduler="round-robin")
    )


def cpp_eager(case: Case, artifact=None):
    eager = importlib.import_module("neml2.aoti.cpp_eager")
    sub = {k: len(s) for k, s in case.sub_batch.items()}
    return _Adapter(eager.Model(str(case.file), case.model, sub_batch_ndim=sub))


#: route -> (factory, needs an AOTI artifact)
FACTORIES = {
    "py-eager": (py_eager, False),
    "py-jit": (py_jit, False),
    "py-aoti": (py_aoti, True),
    "cpp-aoti": (cpp_aoti, True),
    "cpp-dispatch": (cpp_dispatch, True),
    "cpp-eager": (cpp_eager, False),
}


def artifact_path(root: Path, case: Case) -> Path:
    return root / case.name
