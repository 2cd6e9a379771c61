"""Normality: the gradient of a scalar function of another model, as outputs.

Associative plasticity needs the derivatives of the yield function ``f`` with
respect to its arguments (``N_M = ∂f/∂M``, ``N_h = ∂f/∂h``, ``N_X = ∂f/∂X``) as
ordinary variables. :class:`Normality` wraps the model computing ``f`` and outputs
them. Its own derivatives (needed for the Jacobian of an enclosing implicit
system) are second derivatives of ``f``; both come from the forward-mode tangents
of the typed algebra: each ``from`` input is seeded with an identity tangent on a
fresh leaf with second-order propagation on, and

* ``∂f/∂x_i`` is the first-order tangent of ``f`` on leaf ``i``;
* its tangent on any outer leaf ``L`` (the caller's ``v=`` seeds, which the
  inputs already carry) is the mixed second-order tangent ``(i, L)`` of ``f``,
  i.e. ``Σ_j ∂²f/∂x_i∂x_j · dx_j/dL``.
"""

from __future__ import annotations

import math

import torch

from neml2.models._model import Model, _as_tuple
from neml2.models._registry import register
from neml2.models._schema import model_ref, option
from neml2.tensors import FatalError, Scalar, TensorWrapper, attach, seed


@register()
class Normality(Model):
    """Store the first derivatives of a scalar function: ``u_i = ∂f(v)/∂v_i``.

    ``model`` computes the Scalar ``function`` ``f``; for each variable ``v_i`` in
    ``from`` (an input of ``model``), the output named by the matching entry of
    ``to`` holds ``∂f/∂v_i`` with the type and base shape of ``v_i``. The inputs
    are all the inputs of ``model``. A ``from`` variable ``f`` does not depend on
    gives zeros.
    """

    fields = (
        model_ref("model", doc="the model which evaluates the scalar-valued function"),
        option("function", str, doc="the (Scalar) output of 'model' to differentiate"),
        option("from", str, many=True, doc="inputs of 'model' to take derivatives with respect to"),
        option("to", str, many=True, doc="output variables receiving the derivatives"),
    )

    def setup(self) -> None:
        inner = self.opts["model"]
        if not isinstance(inner, Model):
            raise self.error("'model' must name a [Models] block", "model")
        self.model = inner
        fname = self.opts["function"]
        if fname not in inner.output_spec:
            raise self.error(
                f"'{fname}' is not an output of the wrapped model (its outputs: "
                f"{', '.join(inner.output_spec) or 'none'})",
                "function",
            )
        if inner.output_spec[fname] is not Scalar:
            raise self.error(
                f"'{fname}' is a {inner.output_spec[fname].__name__}, not a Scalar", "function"
            )
        self._f_index = list(inner.output_spec).index(fname)
        src, dst = list(self.opts["from"]), list(self.opts["to"])
        if len(src) != len(dst):
            raise self.error(
                f"'from' and 'to' must pair one to one; got {len(src)} and {len(dst)} variables",
                "to",
            )
        if not src:
            raise self.error("'from' is empty", "from")
        for v in src:
            if v not in inner.input_spec:
                raise self.error(
                    f"'{v}' is not an input of the wrapped model (its inputs: "
                    f"{', '.join(inner.input_spec) or 'none'})",
                    "from",
                )
        if len(set(src)) != len(src):
            raise self.error(f"'from' repeats a variable: {' '.join(src)}", "from")
        if len(set(dst)) != len(dst):
            raise self.error(f"'to' repeats a variable: {' '.join(dst)}", "to")
        for v, t in inner.input_spec.items():
            self.declare_input(v, t)
        names = list(inner.input_spec)
        self._pairs: list[tuple[int, str, type]] = []
        for v, u in zip(src, dst, strict=True):
            if u in inner.input_spec:
                raise self.error(f"output '{u}' is also an input of the wrapped model", "to")
            self.declare_output(u, inner.input_spec[v])
            self._pairs.append((names.index(v), v, inner.input_spec[v]))
        # a provider of the wrapped model's promoted parameters must be pulled in by an
        # enclosing composition through this model
        self.nl_providers.update(inner.nl_providers)

    def forward(self, *xs: TensorWrapper):
        if any(x.tangents2 is not None for x in xs):
            raise FatalError(
                f"{self._label()}: second derivatives of Normality outputs would need third "
                "derivatives of the function; they are not supported"
            )
        tag = f"normality@{id(self)}:"
        seeded = list(xs)
        for i, v, _ in self._pairs:
            seeded[i] = seed(xs[i], tag + v, second_order=True)
        f = _as_tuple(self.model(*seeded))[self._f_index]
        t1 = f.tangents or {}
        t2 = f.tangents2 or {}
        shape = tuple(f.data.shape)
        outs = []
        for _, v, typ in self._pairs:
            leaf = tag + v
            base = tuple(typ.BASE_SHAPE)
            k = math.prod(base)
            g = t1.get(leaf)
            if g is None:  # f does not depend on v
                zeros = torch.zeros(shape + base, dtype=f.dtype, device=f.device)
                outs.append(typ(zeros, f.sub_batch_ndim))
                continue
            grad = g.expand(k, *shape).movedim(0, -1).reshape(shape + base)
            value = typ(grad, f.sub_batch_ndim)
            outer = {}
            for (a, b), h in t2.items():
                if a != leaf or b.startswith(tag):
                    continue
                h = h.expand(k, *h.shape[1:]).movedim(0, -1)  # (K_b, *batch, k)
                outer[b] = h.reshape(tuple(h.shape[:-1]) + base)
            outs.append(attach(value, outer) if outer else value)
        return outs[0] if len(outs) == 1 else tuple(outs)
