"""Eager CPU kernels for the typed tensors' small, fixed-size operations.

neml2-tensors is plain torch. Eagerly, a 3 x 3 product or a Mandel conversion over a batch
of points is one or a dozen torch operations, each paying torch's per-call cost and, for
the products, ATen's general small-matrix loop. libneml2 (neml2-aoti-runtime, ``cpp/ops``)
registers operators that do each of them in one pass, with the same values bit for bit:
``neml2::small_mm`` (``R2 @ R2``, ``R2 @ Vec``) and ``neml2::mandel_to_full``,
``full_to_mandel``, ``skew_to_full``, ``full_to_skew`` (the ``SR2`` / ``WR2`` storage
conversions). This package cannot import the runtime (it comes later in the layering);
neml2-models installs them with :func:`use_cpu_kernels` when it resolves the runtime's
operators. Without them every operation keeps its torch form.

A kernel is used only eagerly (traced graphs keep the torch forms, which Inductor fuses),
for CPU float32 / float64 operands of one dtype that need no gradient and are not
functorch-wrapped (the operators have no autograd formula and no vmap rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from neml2.tensors._broadcast import _tracing

#: the operations a kernel can be installed for
NAMES = ("small_mm", "mandel_to_full", "full_to_mandel", "skew_to_full", "full_to_skew")
_DTYPES = (torch.float32, torch.float64)
_installed: dict[str, Callable[..., torch.Tensor]] = {}


def use_cpu_kernels(kernels: Mapping[str, Callable[..., torch.Tensor]] | None) -> None:
    """Install eager CPU kernels for the typed tensors' small operations (process-wide).

    Args:
        kernels: name -> operator, the names among ``NAMES`` (libneml2's
            ``torch.ops.neml2.<name>``, or anything with the same signature and values);
            the names not given go back to their torch forms. ``None``: none installed.

    Raises:
        ValueError: a name that is not among ``NAMES``.
    """
    kernels = dict(kernels or {})
    unknown = sorted(set(kernels) - set(NAMES))
    if unknown:
        raise ValueError(f"no eager kernel named {', '.join(unknown)} (known: {', '.join(NAMES)})")
    _installed.clear()
    _installed.update(kernels)


def installed() -> dict[str, Callable[..., torch.Tensor]]:
    """The installed kernels, name -> operator (a copy)."""
    return dict(_installed)


def kernel_for(name: str, *tensors: torch.Tensor) -> Callable[..., torch.Tensor] | None:
    """The kernel installed for *name* where it applies to *tensors*, else ``None``."""
    op = _installed.get(name)
    if op is None or _tracing():
        return None
    dtype = tensors[0].dtype
    if dtype not in _DTYPES:
        return None
    grad = torch.is_grad_enabled()
    wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    for t in tensors:
        if t.device.type != "cpu" or t.dtype != dtype or (grad and t.requires_grad) or wrapped(t):
            return None
    return op
