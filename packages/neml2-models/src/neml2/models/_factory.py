"""``load_input`` / ``load_model``: build models from a HIT input file (py-eager).

Every failure is a :class:`neml2.tensors.FatalError` whose message starts with
the ``file:line:column`` of the offending block or option.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from neml2 import hit
from neml2.models._input_file import InputFile
from neml2.tensors import FatalError


def parse_input(path: str | Path, overrides: Sequence[str] = ()) -> hit.Node:
    """Parse a HIT input file (the merged logical tree), HIT errors becoming FatalError."""
    p = Path(path)
    if not p.exists():
        raise FatalError(f"{p}: input file not found")
    # anything else that is not a regular file (a directory, a FIFO, a device) is
    # reported by the HIT reader, which never opens or reads it
    try:
        return hit.parse_file(p, overrides=overrides).merged()
    except hit.HitError as e:
        raise FatalError(str(e)) from e


def load_input(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> InputFile:
    """Parse *path* and return the factory that builds its tensors, data and models."""
    return InputFile(parse_input(path, overrides), path, dtype=dtype, device=device)


def load_model(
    path: str | Path,
    name: str,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> Any:
    """Load the model *name* defined under ``[Models]`` in the HIT file *path* (py-eager).

    *overrides* are HIT command-line overrides such as ``Models/elasticity/E=2e5``.
    A model whose parameters are other models' outputs comes back composed with
    those providers.
    """
    ctx = load_input(path, overrides, dtype=dtype, device=device)
    if ctx.section("Models") is None:
        raise FatalError(f"{path}: no [Models] section; cannot load model '{name}'")
    return ctx.top_model(name)
