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

Each graph is a thin module over :mod:`neml2.models._traced`, the body py-jit
(``neml2.compile``) compiles too: derivatives come from the model contract itself,
the model being called with ``v=`` identity seeds over ``(*sub, *base)`` on exactly
the inputs the requested pairs name, and the solve status is the one py-jit reads,
reduced here to its count of failed points.
"""

from __future__ import annotations

import torch

from neml2.models import _traced
from neml2.models.implicit_update import implicit_updates


def has_solves(model: torch.nn.Module) -> bool:
    """Whether *model* contains an implicit update (a Newton solve in the graph)."""
    return bool(implicit_updates(model))


class _Graph(torch.nn.Module):
    """A graph over ``(*inputs, *params)``: the model evaluated by
    :mod:`neml2.models._traced` (the body py-jit compiles too)."""

    def __init__(self, model: torch.nn.Module, promoted: list[str], in_sub=None):
        super().__init__()
        self.model = model
        self.promoted = list(promoted)
        #: name -> (value, dtype, device) of the 0-dim parameters written into the graph
        #: as literals (:meth:`set_literals`)
        self.literals: dict[str, tuple[float, torch.dtype, torch.device]] = {}
        self.nin = len(model.input_spec)
        self.in_sub = {n: tuple((in_sub or {}).get(n, ())) for n in model.input_spec}
        #: graphs of implicit models return one more output: the number of points at
        #: which a Newton solve did not converge (int64, 0-dim)
        self.status = has_solves(model)

    def set_literals(self, state: dict[str, torch.Tensor], names: list[str]) -> None:
        """Write the 0-dim parameters *names* into the graph as literals (their values
        in *state*, the model as it is exported).

        Each becomes ``scalar_tensor(value)`` at the top of the graph instead of a
        parameter the kernels read through a pointer: Inductor folds what depends on
        them alone (a bulk modulus from Young's modulus and Poisson's ratio) into
        constants of the generated code, where it was computed again at every material
        point (linear elasticity on 2 cores, one thread, 1e4 points: 33 -> 14 µs). A
        literal made in the outer graph reaches a ``while_loop`` body as one of its
        operands, never as a constant of the body (which Inductor fails to lower).
        """
        self.literals = {
            n: (float(state[n].detach()), state[n].dtype, state[n].device) for n in names
        }

    def _split(self, args) -> tuple[tuple, tuple[int, ...], dict]:
        """``(inputs, sub-batch counts, params)`` from the graph's arguments."""
        subs = tuple(len(s) for s in self.in_sub.values())
        params = dict(zip(self.promoted, args[self.nin :], strict=True))
        for n, (v, dtype, device) in self.literals.items():
            params[n] = torch.scalar_tensor(v, dtype=dtype, device=device)
        return args[: self.nin], subs, params

    @property
    def _reduce(self):
        """What the graph makes of the solve status: its count of failed points."""
        return _traced.failed_points if self.status else None

    def _result(self, res: tuple, failed) -> tuple:
        """*res*, and the number of failed points for a model with a Newton solve."""
        return (*res, failed) if self.status else res


class ForwardGraph(_Graph):
    """``(*inputs, *params) -> (*outputs)``."""

    def forward(self, *args):
        xs, subs, params = self._split(args)
        outs, failed = _traced.forward(self.model, xs, subs, params, self._reduce)
        return self._result(outs, failed)


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

    def __init__(self, model, promoted, in_sub, pairs: list[tuple[str, str]]):
        super().__init__(model, promoted, in_sub)
        self.pairs = list(pairs)

    def forward(self, *args):
        xs, subs, params = self._split(args)
        outs, blocks, failed = _traced.jacobian(
            self.model,
            xs,
            subs,
            self.pairs,
            couple_sub_batch=True,
            params=params,
            reduce=self._reduce,
        )
        return self._result((*outs, *blocks), failed)
