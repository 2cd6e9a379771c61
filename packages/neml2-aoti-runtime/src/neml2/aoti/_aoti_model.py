"""``type = AOTIModel``: a compiled artifact behind the ordinary ``Model`` surface.

The HIT stub ``NAME_aoti.i`` written by neml2-compile names this type, so
``neml2.load_model("NAME_aoti.i", "NAME")``, ``neml2-run`` and every driver run
the compiled model (py-aoti) unchanged.

The runtime owns the artifact, so it owns this shim too. It subclasses
``neml2.models.Model``, so it is the one module of ``neml2.aoti`` that imports
``neml2.models``: it is registered through the runtime's ``neml2.models`` entry point
and loaded only by neml2.models' registry, never by ``import neml2.aoti`` (the
deployment pair, neml2-tensors and neml2-aoti-runtime, has no neml2.models; see
tests-integration/test_layering.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

import neml2.tensors as tensors
from neml2.aoti._model import Model as CompiledModel
from neml2.aoti._model import read_metadata
from neml2.models import Model, option, register
from neml2.models._inputs import wrt_inputs
from neml2.models._schema import Schema
from neml2.tensors import FatalError


def _typ(name: str, where: str) -> type:
    t = getattr(tensors, name, None)
    if not isinstance(t, type) or not hasattr(t, "BASE_SHAPE"):
        raise FatalError(f"{where}: unknown variable type '{name}' in the artifact metadata")
    return t


@register("AOTIModel")
class AOTIModel(Model):
    """A model compiled by neml2-compile (runs the artifact's AOT Inductor graphs)."""

    fields = (
        option("artifact_path", str, doc="artifact directory, relative to this input file"),
        option("device", str, "", doc="compiled target device (default: the first compiled)"),
        option("dtype", str, "", doc="compiled target dtype (default: the loading dtype)"),
    )

    def setup(self) -> None:
        p = Path(self.opts["artifact_path"])
        dtype = self.opts["dtype"] or None
        try:
            self.runtime = CompiledModel(p, device=self.opts["device"] or None, dtype=dtype)
        except FatalError as e:
            raise self.error(str(e), "artifact_path") from e
        where = str(p)
        rt = self.runtime
        self._sub = {
            **dict(zip(rt.input_names, rt.input_sub_batch_shapes, strict=True)),
            **dict(zip(rt.output_names, rt.output_sub_batch_shapes, strict=True)),
        }
        for n in rt.input_names:
            self.declare_input(n, _typ(rt.input_types[n], where))
        for n in rt.output_names:
            self.declare_output(n, _typ(rt.output_types[n], where))

    @classmethod
    def from_hit(cls, node, ctx) -> AOTIModel:
        """``artifact_path`` is relative to the input file; the target defaults to the
        loading dtype (``load_model(..., dtype=)``) when the artifact has it."""
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        where = f"{node.location}: [{node.fullpath}]"
        p = Path(values["artifact_path"])
        if not p.is_absolute():
            p = Path(ctx.path).resolve().parent / p
        values["artifact_path"] = str(p)
        if not values.get("dtype"):
            try:
                _, meta = read_metadata(p)
            except FatalError as e:
                raise FatalError(f"{locations.get('artifact_path', where)}: {e}") from e
            want = str(ctx.dtype).removeprefix("torch.")
            if any(t.get("dtype") == want for t in meta["targets"]):
                values["dtype"] = want
        return cls(_where=where, _locations=locations, **values)

    # the typed forward used by drivers: raw tensors through the runtime
    def forward(self, *inputs):
        """The typed forward. First-order ``v=`` tangents (a driver's derivative checks,
        a Newton on the model) are the compiled Jacobian blocks applied to them:
        ``dy[o] = sum_i J[o][i] . dx[i]``, contracting the input's sub-batch and base
        axes; the blocks must have been compiled (``neml2-compile -d``); second order
        (``v2=``) is refused."""
        if any(x.tangents2 is not None for x in inputs):
            raise FatalError(
                f"{self._label()}: a compiled model has no second derivatives (v2=); run "
                "the input file's model on py-eager or py-jit for them"
            )
        raw = {n: self._with_sub(n, x) for n, x in zip(self.input_spec, inputs, strict=True)}
        seeded = {n: x.tangents for n, x in zip(self.input_spec, inputs, strict=True) if x.tangents}
        if not seeded:
            out = self.runtime.forward(raw)
            typed = tuple(t(out[n], len(self._sub[n])) for n, t in self.output_spec.items())
            return typed if len(typed) != 1 else typed[0]
        out, J = self.runtime.jacobian(raw)
        typed = []
        for o, t in self.output_spec.items():
            y = t(out[o], len(self._sub[o]))
            t1: dict[str, torch.Tensor] = {}
            for i, tangents in seeded.items():
                block = J[o][i]  # a missing compiled pair raises, naming the -d to compile
                for leaf, d in tangents.items():
                    dy = self._contract(block, d, o, i)
                    t1[leaf] = dy if leaf not in t1 else t1[leaf] + dy
            typed.append(y._new(y.data, y.sub_batch_ndim, t1 or None))
        return tuple(typed) if len(typed) != 1 else typed[0]

    def _contract(self, block: torch.Tensor, d: torch.Tensor, o: str, i: str) -> torch.Tensor:
        """``J[o][i] . d``: *block* ``(*B, *o_sub, *o_base, *i_sub, *i_base)``, *d* a seeded
        tangent ``(K, ..., *i_base)`` broadcastable to ``(K, *B, *i_sub, *i_base)``;
        returns ``(K, *B, *o_sub, *o_base)``."""
        i_trail = len(self._sub[i]) + len(self.input_spec[i].BASE_SHAPE)
        o_trail = len(self._sub[o]) + len(self.output_spec[o].BASE_SHAPE)
        nb = block.dim() - o_trail - i_trail
        batch, i_shape = block.shape[:nb], block.shape[nb + o_trail :]
        if d.dim() - 1 < nb + i_trail:  # fewer batch axes (or no sub-batch axes): pad
            base = len(self.input_spec[i].BASE_SHAPE)
            if d.dim() - 1 - base < len(self._sub[i]):  # given without its sub-batch axes
                lead = d.shape[: d.dim() - base]
                d = d.reshape(*lead, *([1] * len(self._sub[i])), *d.shape[d.dim() - base :])
            d = d.reshape(d.shape[0], *([1] * (nb + i_trail + 1 - d.dim())), *d.shape[1:])
        d = d.expand(d.shape[0], *batch, *i_shape).reshape(d.shape[0], *batch, 1, -1)
        j = block.reshape(*batch, -1, i_shape.numel())
        out = (j.unsqueeze(0) * d.to(j.dtype)).sum(-1)
        return out.reshape(d.shape[0], *block.shape[: nb + o_trail])

    def _with_sub(self, name: str, x) -> torch.Tensor:
        """A typed input's data at ``(*B, *sub, *base)``: a value given without its
        sub-batch axes (an initial condition such as ``Scalar(10.0)``) is broadcast."""
        sub = self._sub[name]
        if not sub or x.sub_batch_ndim == len(sub):
            return x.data
        if x.sub_batch_ndim:
            raise FatalError(
                f"{self._label()}: input '{name}' has sub-batch shape "
                f"{tuple(x.sub_batch_shape)}; the artifact expects {sub}"
            )
        dyn = tuple(x.data.shape[: x.data.dim() - x.base_ndim])
        base = tuple(x.base_shape)
        return x.data.reshape(*dyn, *([1] * len(sub)), *base).expand(*dyn, *sub, *base)

    def _typed_inputs(self, inputs: Mapping[str, Any]) -> list:
        """Name-keyed inputs for ``forward(dict)``: a raw tensor is ``(*B, *sub, *base)``
        with the artifact's sub-batch shape (as the runtime reads it), not a batch of
        ``(*B, *sub)`` to broadcast the sub-batch over again."""
        typed = super()._typed_inputs(inputs)
        return [
            x
            if isinstance(inputs[n], tensors.TensorWrapper) or not self._sub[n]
            else type(x)(x.data, len(self._sub[n]))
            for n, x in zip(self.input_spec, typed, strict=True)
        ]

    def _raw(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {n: x.data if isinstance(x, tensors.TensorWrapper) else x for n, x in inputs.items()}

    def jvp(self, inputs, tangents):
        return self.runtime.jvp(self._raw(inputs), self._raw(tangents))

    def jacobian(self, inputs, *, wrt=None):
        """Outputs and the compiled blocks ``J[out][in]`` (see ``neml2.aoti.Model``).

        *wrt* (an input name or several) keeps only the blocks with respect to those
        inputs, as :meth:`neml2.models.Model.jacobian`; the artifact's graph computes the
        blocks compiled with ``neml2-compile -d`` either way.
        """
        wanted = wrt_inputs(self._label(), wrt, list(self.input_spec))
        out, J = self.runtime.jacobian(self._raw(inputs))
        if wanted is not None:
            for row in J.values():
                for name in [k for k in row if k not in wanted]:
                    del row[name]
        return out, J

    @property
    def dtype(self) -> torch.dtype:
        return self.runtime.dtype

    @property
    def device(self) -> torch.device:
        return self.runtime.device

    def set_parameter(self, name: str, value: Any) -> None:
        data = value.data if isinstance(value, tensors.TensorWrapper) else value
        self.runtime.set_parameter(name, data)
