"""Per-point domain checks of a model's inputs at forward time (py-eager).

An equation defined on part of the real line (a degradation function of ``d`` in
``[0, 1]``, a logarithm of ``1 - α``) gives ``inf``, ``NaN`` or a meaningless value
outside it, silently. A leaf calls :func:`require` in its ``forward`` on the values
that must lie in the domain; an eager call with a value outside raises a one-line
:class:`~neml2.tensors.FatalError` naming the model's block, the variable, the domain
and the batch points (flat C-order indices, listed as a
:class:`~neml2.tensors.ConvergenceError` lists its failed points).

The check is skipped, by design, where it cannot or should not run:

* while Dynamo or ``torch.export`` traces the call (py-jit, the AOTI export): reading
  a tensor's values in a Python ``if`` is a data-dependent branch, which breaks the
  export (and costs a graph break under ``torch.compile``); the compiled routes
  therefore compute the value as the equation gives it, as before;
* under ``torch.func`` transforms (vmap, grad), whose wrapped tensors have no value
  to read, and for ``meta`` tensors;
* inside an implicit solve (:func:`suspended`, entered by ``ImplicitUpdate``): a
  Newton iterate or a line-search trial point may leave the domain on the way to the
  solution; the solver already treats a non-finite residual per point (the line
  search cuts the step, or the point fails with a recoverable ``ConvergenceError``
  that names it), which an error raised from the middle of the solve would preempt.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import torch

from neml2.models._schema import Bounds
from neml2.tensors import point_list

_state = threading.local()


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Skip :func:`require` in this thread while the block runs (an implicit solve)."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        yield
    finally:
        _state.depth = depth


def _skipped(x: torch.Tensor) -> bool:
    if torch.compiler.is_compiling() or torch.compiler.is_exporting():
        return True  # traced (py-jit, the AOTI export): no value to read
    if getattr(_state, "depth", 0):
        return True
    return x.device.type == "meta" or torch._C._functorch.is_functorch_wrapped_tensor(x)


def require(model: Any, what: str, value: Any, domain: Bounds | str, why: str = "") -> None:
    """Raise when *value* lies outside *domain* at some batch point (eager calls only).

    Args:
        model: The model evaluating (its :meth:`~neml2.models.Model.error` locates the
            message in the input file).
        what: The value, as the message names it (``"input 'd'"``).
        value: A typed tensor or tensor, ``(*B, ...)``.
        domain: The interval every entry must lie in (a :class:`Bounds` or its
            spelling, ``"[0, 1]"``).
        why: What leaves the domain undefined, appended to the message.

    Raises:
        FatalError: ``"<file:line>: [Models/g]: input 'd' is outside [0, 1] at 2 of 8
            points (points 3, 5; e.g. 1.7): ..."``; the points are flat (C-order)
            indices into the batch (the last axes of a value with more entries per
            point than one count as points too).
    """
    x = getattr(value, "data", value)
    if not isinstance(x, torch.Tensor) or _skipped(x):
        return
    x = x.detach()
    domain = Bounds.parse(domain)
    ok = domain.mask(x)
    if bool(ok.all()):
        return
    bad = ~ok
    indices, listed = point_list(bad)
    first = float(x.reshape(-1)[indices[0]])
    message = (
        f"{what} is outside {domain} at {len(indices)} of {bad.numel()} points "
        f"(points {listed}; first value {first:g})"
    )
    raise model.error(message + (f": {why}" if why else ""))
