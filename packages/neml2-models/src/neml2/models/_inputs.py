"""What a caller hands a model: names, dtype and device, checked the same on every route.

The rule (docs/routes.md, "Input dtype and device"): a tensor given to a model (an
input, a ``jvp`` tangent, a ``v=`` / ``v2=`` seed) must already have the model's dtype
and device. Nothing is converted or moved behind the caller's back: a float32 input
to a float64 model would otherwise be computed from float32 values and its result
labelled float64, and a float64 input to a float32 model would lose digits. The
compiled routes (py-aoti, cpp-aoti, cpp-dispatch, cpp-eager) reject the same inputs
with the same kind of message. A Python number (or nested list of them) has no dtype
of its own and is taken in the model's dtype and device.

A name that is not one of the model's inputs is an error naming it, with the closest
input name as a suggestion.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from difflib import get_close_matches
from typing import Any

import torch

from neml2.tensors import FatalError, TensorWrapper


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the known name closest to *name*, else ``""``."""
    close = get_close_matches(name, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def check_names(label: str, names: Iterable[str], known: Collection[str], what: str) -> None:
    """Raise FatalError for the first of *names* not in *known*.

    *what* is how the name is used: ``"input"`` (a key of the inputs), ``"tangent"``
    (a key of ``jvp`` tangents), ``"v="`` / ``"v2="`` (a key of a typed call's seeds).
    """
    for name in names:
        if name in known:
            continue
        known = list(known)
        hint = did_you_mean(name, known)
        kinds = {"input": "unknown input", "tangent": "tangent for unknown input"}
        kind = kinds.get(what, f"{what} tangent for unknown input")
        raise FatalError(
            f"{label}: {kind} '{name}'{hint}; the model's inputs are: {', '.join(known)}"
        )


def wrt_inputs(
    label: str, wrt: str | Iterable[str] | None, known: Collection[str]
) -> tuple[str, ...] | None:
    """The inputs a ``jacobian(inputs, wrt=...)`` differentiates with respect to.

    Args:
        label: the model, for the message.
        wrt: one input name, several, or None (every input).
        known: the model's input names.

    Returns:
        The names as a tuple (None for None).

    Raises:
        FatalError: *wrt* is empty or names an input not in *known* (with the closest
            name as a suggestion).
    """
    if wrt is None:
        return None
    names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    if not names:
        raise FatalError(f"{label}: jacobian(wrt=...) names no input; inputs: {', '.join(known)}")
    for name in names:
        if name not in known:
            raise FatalError(
                f"{label}: jacobian(wrt=...): unknown input '{name}'"
                f"{did_you_mean(name, known)}; the model's inputs are: {', '.join(known)}"
            )
    return names


def same_device(a: torch.device, model: torch.device) -> bool:
    """Whether a tensor on *a* is where a model on *model* computes (a model device
    without an index, e.g. ``cuda``, takes any index of its type)."""
    if a.type != model.type:
        return False
    return model.index is None or a.index == model.index


def input_dtype(typ: type, dtype: torch.dtype) -> torch.dtype:
    """The dtype an input of type *typ* must have: the model's *dtype*, or the type's own
    storage dtype where it fixes one (``MillerIndex``: ``int64``)."""
    return getattr(typ, "STORAGE_DTYPE", None) or dtype


def input_desc(name: str, x: Any, what: str = "input") -> str:
    """``input 'strain'`` for the messages about input *name*; for a typed value whose
    constructor converted integer data (``SR2(torch.zeros(6, dtype=torch.int64))`` holds
    float32), it also says what it was made from, so the message names the dtype given."""
    was = x.converted_from if isinstance(x, TensorWrapper) else None
    if was is None:
        return f"{what} '{name}'"
    return (
        f"{what} '{name}' (a {type(x).__name__} made from {was} data, which it converted "
        f"to {x.dtype})"
    )


def check_placement(
    label: str, desc: str, t: torch.Tensor, dtype: torch.dtype, device: torch.device
) -> None:
    """Raise FatalError unless tensor *t* (described by *desc*, e.g. ``"input 'strain'"``)
    has *dtype* and lives on *device*, the model's."""
    if t.dtype == dtype and same_device(t.device, device):
        return
    if t.dtype != dtype:
        raise FatalError(
            f"{label}: {desc} has dtype {t.dtype} (on {t.device}) but the model computes in "
            f"{dtype} on {device}; inputs are never converted implicitly: pass a {dtype} "
            f"tensor (e.g. x.to({dtype}))"
        )
    raise FatalError(
        f"{label}: {desc} is on {t.device} (dtype {t.dtype}) but the model computes in "
        f"{dtype} on {device}; inputs are never moved implicitly: pass a tensor on {device} "
        f"(e.g. x.to('{device}'))"
    )


def as_tensor(
    label: str, desc: str, x: Any, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """*x* as a tensor of the model's *dtype* on *device*, checked.

    A tensor (or a typed wrapper's data) is checked, never converted. A value with a
    dtype of its own (a numpy array) keeps it and is checked the same way. A Python
    number or nested list of numbers is taken in the model's dtype and device.
    """
    if isinstance(x, TensorWrapper):
        x = x.data
    if not isinstance(x, torch.Tensor):
        try:
            if hasattr(x, "dtype"):  # numpy: its own dtype, checked below
                x = torch.as_tensor(x)
            else:
                x = torch.as_tensor(x, dtype=dtype, device=device)
        except (TypeError, ValueError, RuntimeError) as e:
            raise FatalError(
                f"{label}: {desc} is a {type(x).__name__} that is not a tensor of "
                f"{dtype} on {device} ({e})"
            ) from e
    check_placement(label, desc, x, dtype, device)
    return x


def check_seeds(
    label: str, what: str, seeds: Any, known: Collection[str], dtype, device, depth: int
) -> None:
    """Check a typed call's ``v=`` (*depth* 1: ``v[in][leaf]``) or ``v2=`` (*depth* 2:
    ``v2[in][a][b]``): input names known, every seed tensor of the model's dtype/device."""
    if seeds is None:
        return
    check_names(label, seeds, known, what)
    for name, leaves in seeds.items():
        _check_leaves(label, f"{what} tangent of '{name}'", leaves, dtype, device, depth)


def _check_leaves(label, desc, leaves, dtype, device, depth) -> None:
    if leaves is None:
        return
    if depth == 0 or not isinstance(leaves, dict):
        t = leaves.data if isinstance(leaves, TensorWrapper) else leaves
        if isinstance(t, torch.Tensor):
            check_placement(label, desc, t, dtype, device)
        return
    for leaf, sub in leaves.items():
        _check_leaves(label, f"{desc} (seed '{leaf}')", sub, dtype, device, depth - 1)
