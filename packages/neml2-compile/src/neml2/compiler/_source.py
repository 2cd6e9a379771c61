"""A model to compile, loaded from its input file with the example inputs the file gives.

:func:`load_for_compile` is what :func:`neml2.compiler.compile_file` and
:func:`export_file` share: the ``[Models]`` block, the sub-batch shapes
``[Settings]/example_batch_shape`` declares, and the example inputs of the file's
``[Drivers]`` (:mod:`neml2.compiler._examples`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from neml2.compiler._compile import ExportedModel, export_model
from neml2.compiler._examples import ExampleInputs, describe, from_drivers
from neml2.compiler._options import CompileOptions
from neml2.tensors import FatalError


@dataclass
class LoadedInput:
    """A model loaded for a compile.

    Attributes:
        ctx (neml2.models.InputFile): the loaded input file.
        model (neml2.models.Model): the ``[Models]`` block ``options.model``.
        options: the options given, with the sub-batch shapes that
            ``[Settings]/example_batch_shape`` declares added (those given win).
        examples: the example inputs the file's ``[Drivers]`` give the model.
    """

    ctx: Any
    model: Any
    options: CompileOptions
    examples: ExampleInputs

    def describe(self) -> list[str]:
        """The progress lines about the example inputs (where they came from, and why
        a driver block was not used); none when every input is made up silently."""
        line = describe(self.examples)
        return [*self.examples.notes, *([line] if line else [])]


def load_for_compile(
    path: str | Path, options: CompileOptions, overrides: Sequence[str] = ()
) -> LoadedInput:
    """Load ``[Models]/<options.model>`` from the HIT file *path* for a compile.

    Args:
        path: the HIT input file.
        options: what to build (``options.model`` names the ``[Models]`` block).
        overrides: HIT overrides ``PATH=VALUE`` applied to the file before loading.

    Returns:
        The model, the options with the declared sub-batch shapes, and the example
        inputs of the file's drivers.

    Raises:
        FatalError: the file has no ``[Models]`` section, or loading fails (the message
            names the file and line where it can).
    """
    from neml2.models import load_input

    ctx = load_input(path, overrides)
    if ctx.section("Models") is None:
        raise FatalError(f"{path}: no [Models] section; cannot load model '{options.model}'")
    model = ctx.top_model(options.model)
    # [Settings]/example_batch_shape declares sub-batch shapes (the '; sub' part)
    declared = {}
    for name in (*model.input_spec, *model.output_spec):
        shape = ctx.example_batch_shape(name)
        if shape is not None and shape[1]:
            declared[name] = tuple(shape[1])
    if declared:
        options = replace(options, sub_batch={**declared, **options.sub_batch})
    return LoadedInput(ctx, model, options, from_drivers(ctx, options.model, model))


def export_file(
    path: str | Path,
    options: CompileOptions,
    overrides: Sequence[str] = (),
    **kwargs,
) -> ExportedModel:
    """Export ``[Models]/<options.model>`` of the HIT file *path* as ``neml2-compile``
    would, without the AOT Inductor compile (seconds instead of minutes).

    The example inputs are those :func:`neml2.compiler.compile_file` uses: the values
    the file's ``[Drivers]`` feed the model (their sub-batch shapes and values), with
    the sub-batch shapes of ``[Settings]/example_batch_shape`` winning.

    Args:
        path: the HIT input file.
        options: what to build (``options.model`` names the ``[Models]`` block).
        overrides: HIT overrides ``PATH=VALUE`` applied to the file before loading.
        **kwargs (Any): passed to :func:`neml2.compiler.export_model` (``example_batch``,
            ``device``, ``dtype``).

    Returns:
        What :func:`neml2.compiler.export_model` returns, ``example_source`` set.

    Raises:
        FatalError: as :func:`load_for_compile` and :func:`neml2.compiler.export_model`.
    """
    loaded = load_for_compile(path, options, overrides)
    res = export_model(
        loaded.model, loaded.options, examples=loaded.examples.values or None, **kwargs
    )
    res.example_source = loaded.examples.source
    return res
