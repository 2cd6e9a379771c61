"""Small helpers: default output names (``X`` -> ``X_rate``), constants on the inputs' device."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.tensors import Scalar


def default_output_name(model: Model, option: str, source: str, suffix: str) -> None:
    """Rename output *option* (declared with an empty default) to ``<source var><suffix>``.

    Call from ``setup()``; *source* is the option of the input the name derives from.
    """
    if model.opts[option]:
        return
    typ = model.output_spec.pop("")
    name = model.var[source] + suffix
    model.declare_output(name, typ)
    model.var[option] = name


def constant(like: Scalar, value: float) -> Scalar:
    """A Scalar ``value`` (no batch) with the dtype and device of *like*."""
    return Scalar(torch.full((), value, dtype=like.dtype, device=like.device))
