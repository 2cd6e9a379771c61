"""The graphs an artifact holds, as ``nn.Module`` s over raw tensors (what torch.export sees).

Every graph takes the model's inputs at ``(N, *sub, *base)`` (one dynamic batch
axis ``N``; the runtimes flatten and broadcast ``(*B)`` onto it; ``sub`` is the
variable's fixed sub-batch shape, often empty) followed by the promoted parameters
at their stored shapes, and returns plain tensors:

* ``forward``: the outputs at ``(N, *sub, *base)``, in ``output_names`` order;
* ``forward_into`` (``--write-into``): ``(*inputs, *params, *outs)``, the forward graph
  storing its outputs into the caller's tensors ``outs`` at ``(N, *sub, *base)``: Inductor
  writes the last kernel's results straight into them (no output allocation, no copy);
  it returns them (aliases);
* ``jacobian``: the outputs, then one block ``J[out][in]`` at
  ``(N, *out_sub, *out_base, *in_sub, *in_base)`` per requested ``-d`` pair, in
  metadata order (the full coupling across sub-batch entries, e.g. slip systems);
* models with an implicit update add a last output: the number of points at which
  a Newton solve did not converge (the runtimes raise ConvergenceError on it).

Derivatives come from the model contract itself: the model is called with
``v=`` identity seeds over ``(*sub, *base)`` on exactly the inputs the requested
pairs name.
"""

from __future__ import annotations

import torch
from torch.func import functional_call

from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import TensorWrapper
from neml2.tensors._seed import identity_seed


def _as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def has_solves(model: torch.nn.Module) -> bool:
    """Whether *model* contains an implicit update (a Newton solve in the graph)."""
    return bool(implicit_updates(model))


class _Graph(torch.nn.Module):
    def __init__(self, model: torch.nn.Module, promoted: list[str], in_sub=None, out_sub=None):
        super().__init__()
        self.model = model
        self.promoted = list(promoted)
        self.nin = len(model.input_spec)
        self.in_sub = {n: tuple((in_sub or {}).get(n, ())) for n in model.input_spec}
        self.out_sub = {n: tuple((out_sub or {}).get(n, ())) for n in model.output_spec}
        #: graphs of implicit models return one more output: the number of points at
        #: which a Newton solve did not converge (int64, 0-dim)
        self.status = has_solves(model)

    def _traced(self, fn):
        """``(fn(), failed_points)``: the implicit updates log their solves during ``fn``
        (:func:`neml2.models.implicit_update.record_solves`); ``failed_points`` counts
        the points of every solve that did not converge (None without a solve)."""
        updates = implicit_updates(self.model)
        logs = record_solves(updates)
        try:
            out = fn()
        finally:
            stop_recording(updates)
        failed = None
        if self.status:
            counts = [(~converged).sum() for log in logs for converged, _, _ in log]
            failed = torch.stack(counts).sum() if counts else torch.zeros((), dtype=torch.int64)
        return out, failed

    def _split(self, args):
        xs = [
            t(x, len(self.in_sub[n]))
            for (n, t), x in zip(self.model.input_spec.items(), args[: self.nin], strict=True)
        ]
        params = dict(zip(self.promoted, args[self.nin :], strict=True))
        return xs, params

    def _full(self, name: str, y: torch.Tensor, args) -> torch.Tensor:
        """Output *name* at exactly ``(N, *sub, *base)`` (an output may not depend on
        every batch axis; the runtimes rely on the full shape)."""
        t = self.model.output_spec[name]
        shape = (*self.out_sub[name], *t.BASE_SHAPE)
        if self.nin == 0 or y.dim() > len(shape):
            return y
        return y.expand(args[0].shape[0], *shape)

    def _call(self, params, xs, **kw):
        if params:
            return functional_call(self.model, params, tuple(xs), kw, strict=False)
        return self.model(*xs, **kw)


class ForwardGraph(_Graph):
    """``(*inputs, *params) -> (*outputs)``."""

    def forward(self, *args):
        xs, params = self._split(args)
        outs, failed = self._traced(lambda: _as_tuple(self._call(params, xs)))
        res = tuple(
            self._full(n, o.data, args) for n, o in zip(self.model.output_spec, outs, strict=True)
        )
        return (*res, failed) if self.status else res


class ForwardIntoGraph(ForwardGraph):
    """``(*inputs, *params, *outs) -> (*outs)``: ``forward`` written into ``outs``."""

    def forward(self, *args):
        nout = len(self.model.output_spec)
        dest, args = args[len(args) - nout :], args[: len(args) - nout]
        res = super().forward(*args)
        for d, y in zip(dest, res[:nout], strict=True):
            d.copy_(y)
        return (*dest, res[nout]) if self.status else tuple(dest)


class JacobianGraph(_Graph):
    """``(*inputs, *params) -> (*outputs, *blocks)`` for the given ``(out, in)`` pairs."""

    def __init__(self, model, promoted, in_sub, out_sub, pairs: list[tuple[str, str]]):
        super().__init__(model, promoted, in_sub, out_sub)
        self.pairs = list(pairs)

    def forward(self, *args):
        xs, params = self._split(args)
        wrt = {i for _, i in self.pairs}
        names = list(self.model.input_spec)
        v = {n: {n: _seed(x, self.in_sub[n])} for n, x in zip(names, xs, strict=True) if n in wrt}
        (*outs, v_out), failed = self._traced(lambda: self._call(params, xs, v=v))
        by_name = {
            n: self._full(n, o.data, args)
            for n, o in zip(self.model.output_spec, outs, strict=True)
        }
        # what each block ends in for its input: (*in_sub, *in_base)
        trail = {n: (*self.in_sub[n], *x.base_shape) for n, x in zip(names, xs, strict=True)}
        blocks = []
        for o, i in self.pairs:
            y = by_name[o]
            d = v_out[o].get(i)
            if d is None:  # a structural zero
                blocks.append(y.new_zeros((*y.shape, *trail[i])))
                continue
            t = d.data.expand(d.data.shape[0], *y.shape)
            blocks.append(t.movedim(0, -1).reshape((*y.shape, *trail[i])))
        res = (*(by_name[n] for n in self.model.output_spec), *blocks)
        return (*res, failed) if self.status else res


def _seed(x: TensorWrapper, sub: tuple[int, ...]) -> torch.Tensor:
    """Identity seed over ``(*sub, *base)``: ``(K, *sub, *base)``, ``K = prod(sub + base)``,
    so blocks couple every sub-batch entry with every other (not only the diagonal)."""
    if not sub:
        return identity_seed(x)
    shape = (*sub, *x.base_shape)
    k = 1
    for s in shape:
        k *= s
    return torch.eye(k, dtype=x.dtype, device=x.data.device).reshape(k, *shape)
