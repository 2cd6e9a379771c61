"""Normality: the gradient of a scalar function of another model, as outputs.

Associative plasticity needs the derivatives of the yield function ``f`` with
respect to its arguments (``N_M = ∂f/∂M``, ``N_h = ∂f/∂h``, ``N_X = ∂f/∂X``) as
ordinary variables. :class:`Normality` wraps the model computing ``f`` and outputs
them. Its own derivatives (needed for the Jacobian of an enclosing implicit
system) are second derivatives of ``f``; both come from the forward-mode tangents
of the typed algebra. The wrapped model runs on the *primal* inputs, each input
``x_j`` that is in ``from`` or carries the caller's tangents being seeded with an
identity tangent on a fresh leaf (second order on only when the caller passed
tangents), so that

* ``∂f/∂x_i`` is the first-order tangent of ``f`` on leaf ``i``;
* the Hessian block ``H_ij = ∂²f/∂x_i∂x_j`` is its second-order tangent ``(i, j)``,
  and the tangent of ``∂f/∂x_i`` on an outer leaf ``L`` (the caller's ``v=`` seeds,
  which the inputs carry) is the chain rule ``Σ_j H_ij · dx_j/dL``.

The second-order pairs are those of the function's own inputs (13 seed directions
for a Chaboche overstress), not those of the enclosing system's unknowns (19 and
more), which is what keeps the Jacobian of an implicit system affordable eagerly.
Traced (torch.export / torch.compile), the wrapped model runs on the inputs with
their tangents and the outer tangents are read off the mixed second-order pairs
``(i, L)`` of ``f`` (same values; the compiled graphs are those of before the chain).
"""

from __future__ import annotations

import math

import torch

from neml2.models._model import Model, _as_tuple
from neml2.models._registry import register
from neml2.models._schema import model_ref, option
from neml2.tensors import FatalError, Scalar, TensorWrapper, attach, seed
from neml2.tensors._broadcast import insert_singletons
from neml2.tensors._tangents import _tracing, pad_after_seed


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
        lacking = [
            m._label()
            for m in inner.modules()
            if isinstance(m, Model) and not getattr(m, "SUPPORTS_SECOND_ORDER", True)
        ]
        if lacking:
            raise self.error(
                f"the wrapped model's leaf {', '.join(lacking)} has SUPPORTS_SECOND_ORDER = "
                "False (its forward does not propagate v2=/vh=), but Normality "
                "differentiates the function twice",
                "model",
            )
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
        if _tracing():
            return self._forward_pairs(xs, tag)
        names = list(self.model.input_spec)
        rows = {i for i, _, _ in self._pairs}
        # inputs whose tangents (on the caller's leaves) must be chained through the Hessian
        carried = [j for j, x in enumerate(xs) if x.tangents]
        second = bool(carried)
        seeded = [x.primal() if x.tangents is not None else x for x in xs]
        for j in sorted(rows.union(carried)):
            seeded[j] = seed(seeded[j], tag + names[j], second_order=second)
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
            outer: dict[str, torch.Tensor] = {}
            for j in carried:
                h = t2.get((leaf, tag + names[j]))
                if h is None:  # ∂²f/∂x_i∂x_j is a structural zero
                    continue
                h = h.expand(k, h.shape[1], *shape)  # (K_i, K_j, *shape)
                for L, t in xs[j].tangents.items():
                    dx = _aligned_tangent(xs[j], t, f)  # (K_L, *batch, K_j)
                    d = torch.einsum("ij...,l...j->l...i", h, dx)  # (K_L, *shape, K_i)
                    outer[L] = d if L not in outer else outer[L] + d
            outer = {L: d.reshape(*d.shape[:-1], *base) for L, d in outer.items()}
            outs.append(attach(value, outer) if outer else value)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _forward_pairs(self, xs, tag: str):
        """The traced form: the wrapped model on the inputs *with* the caller's tangents.

        Each ``from`` input gets a second-order seed on top of the tangents it carries;
        the output's tangent on an outer leaf ``L`` is the mixed pair ``(i, L)`` of
        ``f``. Same values as the Hessian chain of :meth:`forward`, but second-order
        pairs over every leaf: kept for torch.export / torch.compile, whose compiled
        graphs do not pay for the eager overhead the chain avoids.
        """
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


def _aligned_tangent(x: TensorWrapper, t: torch.Tensor, f: TensorWrapper) -> torch.Tensor:
    """``x``'s tangent ``t (K, *batch_x, *base_x)`` as ``(K, *batch, prod(base_x))``.

    The batch axes are aligned region by region (sub-batch, then dynamic) with those
    of ``f``, so that the result broadcasts against ``f``'s ``(*batch)``.
    """
    nb, s, d = x.base_ndim, x.sub_batch_ndim, x.dynamic_ndim
    t = pad_after_seed(t, 1, x.data.dim())
    t = t.reshape(*t.shape[: t.dim() - nb], -1)
    t = insert_singletons(t, 1 + s, f.sub_batch_ndim - s)
    return insert_singletons(t, 1 + f.sub_batch_ndim + d, f.dynamic_ndim - d)
