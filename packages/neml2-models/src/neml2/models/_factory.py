"""Build models from HIT input (py-eager): ``load_input`` / ``load_model`` read a file,
``load_string`` reads text, ``load_nonlinear_system`` returns an ``[EquationSystems]`` block.

Every failure is a :class:`neml2.tensors.FatalError` whose message starts with
the ``file:line:column`` of the offending block or option (``<string>:line:column``
for text given to ``load_string``).
"""

from __future__ import annotations

import os
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
    try:
        os.stat(p)
    except FileNotFoundError:
        raise FatalError(f"{p}: input file not found") from None
    except (OSError, ValueError):
        pass  # 'a.i/x', no permission: the HIT reader says why ("Not a directory")
    # anything else that is not a regular file (a directory, a FIFO, a device) is
    # reported by the HIT reader, which never opens or reads it
    try:
        return hit.parse_file(p, overrides=overrides).merged()
    except hit.HitError as e:
        raise FatalError(str(e)) from e


#: the "file name" of text given to :func:`load_string`
STRING = "<string>"


def parse_string(text: str, overrides: Sequence[str] = ()) -> hit.Node:
    """Parse HIT *text* (locations name ``<string>``), HIT errors becoming FatalError.

    The same reader as :func:`parse_input` minus the file: ``!include`` paths are
    relative to the working directory.
    """
    if not isinstance(text, str):
        raise TypeError(f"HIT text must be a str, not {type(text).__name__}")
    try:
        return hit.parse(text, STRING, overrides).merged()
    except hit.HitError as e:
        raise FatalError(str(e)) from e


def load_input(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    allow_python_code: bool | None = None,
) -> InputFile:
    """Parse a HIT input file and return the factory that builds its objects.

    Nothing is built yet: the returned :class:`InputFile` builds ``[Tensors]``,
    ``[Data]``, ``[Models]`` and other blocks on demand.

    Args:
        path: The HIT input file.
        overrides: HIT command-line overrides such as ``Models/elasticity/E=2e5``,
            applied before the blocks are built.
        dtype: The floating-point dtype of the tensors, parameters and models built.
        device: The device they are placed on.
        allow_python_code: True lets ``[Tensors] type = Python`` expressions run
            arbitrary Python (the input file can then run code: use it only for input
            files you would run as a Python script); False keeps the allow-list; None
            (the default): the environment variable ``NEML2_ALLOW_PYTHON_CODE=1`` opts in.

    Returns:
        The parsed input file.

    Raises:
        FatalError: If the file does not exist, does not parse, or has an invalid
            ``[Settings]`` section (the message starts with ``file:line:column``).
    """
    return InputFile(
        parse_input(path, overrides),
        path,
        dtype=dtype,
        device=device,
        allow_python_code=allow_python_code,
    )


def load_model(
    path: str | Path,
    name: str,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    allow_python_code: bool | None = None,
) -> Any:
    """Load the model *name* defined under ``[Models]`` in the HIT file *path* (py-eager).

    Args:
        path: The HIT input file.
        name: The block name under ``[Models]``.
        overrides: HIT command-line overrides such as ``Models/elasticity/E=2e5``,
            applied before the blocks are built.
        dtype: The floating-point dtype of the tensors, parameters and models built.
        device: The device they are placed on.
        allow_python_code: True lets ``[Tensors] type = Python`` expressions run
            arbitrary Python (the input file can then run code: use it only for input
            files you would run as a Python script); False keeps the allow-list; None
            (the default): the environment variable ``NEML2_ALLOW_PYTHON_CODE=1`` opts in.

    Returns:
        The model (a :class:`Model`), on *dtype* and *device*. A model whose parameters
            are other models' outputs comes back composed with those providers (a
            :class:`ComposedModel` named *name*).

    Raises:
        FatalError: If the file is missing or malformed, has no ``[Models]`` section or
            no block *name*, or a block is invalid (the message names
            ``file:line:column``).
    """
    ctx = load_input(
        path, overrides, dtype=dtype, device=device, allow_python_code=allow_python_code
    )
    if ctx.section("Models") is None:
        raise FatalError(f"{path}: no [Models] section; cannot load model '{name}'")
    return ctx.top_model(name)


def load_string(
    text: str,
    name: str | None = None,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    allow_python_code: bool | None = None,
) -> Any:
    """Load model *name* from HIT *text* instead of a file (otherwise as :func:`load_model`).

    Args:
        text: The HIT input, as a string. ``!include`` paths are relative to the working
            directory.
        name: The block name under ``[Models]``. ``None`` (the default): ``[Models]``
            must define exactly one top-level model, which is loaded.
        overrides: HIT command-line overrides such as ``Models/elasticity/E=2e5``,
            applied before the blocks are built.
        dtype: The floating-point dtype of the tensors, parameters and models built.
        device: The device they are placed on.
        allow_python_code: True lets ``[Tensors] type = Python`` expressions run
            arbitrary Python (the input file can then run code: use it only for input
            files you would run as a Python script); False keeps the allow-list; None
            (the default): the environment variable ``NEML2_ALLOW_PYTHON_CODE=1`` opts in.

    Returns:
        The model, as :func:`load_model` returns it.

    Raises:
        TypeError: If *text* is not a ``str``.
        FatalError: As for :func:`load_model`; also when *name* is ``None`` and
            ``[Models]`` does not define exactly one model. Error locations read
            ``<string>:line:column``.
    """
    ctx = InputFile(
        parse_string(text, overrides),
        STRING,
        dtype=dtype,
        device=device,
        allow_python_code=allow_python_code,
    )
    models = ctx.section("Models")
    if models is None:
        what = f"model '{name}'" if name is not None else "a model"
        raise FatalError(f"{STRING}: no [Models] section; cannot load {what}")
    if name is None:
        defined = [c.name for c in models.children()]
        if len(defined) != 1:
            raise FatalError(
                f"{models.location}: [Models] defines {len(defined)} models "
                f"({', '.join(defined) or 'none'}); name the one to load"
            )
        name = defined[0]
    return ctx.top_model(name)


def load_nonlinear_system(
    path: str | Path,
    name: str,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    allow_python_code: bool | None = None,
) -> Any:
    """Build the ``[EquationSystems]`` block *name* of the HIT file *path*.

    This is the object an ``ImplicitUpdate`` names with ``equation_system``: its
    ``model``, ``unknowns``, ``residuals`` and ``givens``.

    Args:
        path: The HIT input file.
        name: The block name under ``[EquationSystems]``.
        overrides: HIT command-line overrides such as ``Models/elasticity/E=2e5``,
            applied before the blocks are built.
        dtype: The floating-point dtype of the tensors, parameters and models built.
        device: The device they are placed on.
        allow_python_code: True lets ``[Tensors] type = Python`` expressions run
            arbitrary Python (the input file can then run code: use it only for input
            files you would run as a Python script); False keeps the allow-list; None
            (the default): the environment variable ``NEML2_ALLOW_PYTHON_CODE=1`` opts in.

    Returns:
        The built object (a :class:`neml2.solvers.NonlinearSystem` for
            ``type = NonlinearSystem``).

    Raises:
        FatalError: If the file is missing or malformed, has no ``[EquationSystems]``
            section or no block *name*, or the block is invalid.
    """
    ctx = load_input(
        path, overrides, dtype=dtype, device=device, allow_python_code=allow_python_code
    )
    if ctx.section("EquationSystems") is None:
        raise FatalError(
            f"{path}: no [EquationSystems] section; cannot load equation system '{name}'"
        )
    return ctx.object("EquationSystems", name)
