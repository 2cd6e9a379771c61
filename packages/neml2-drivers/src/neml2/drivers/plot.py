"""Plot a transient result: variables against the time, or one against another.

A plot is a list of panels, each written ``y`` (``y`` against the time) or
``x:y`` (``y`` against ``x``, e.g. ``strain[0]:stress[0]``); a variable is
``name`` or ``name[i]`` (component ``i`` of the flattened base shape; no index:
component 0), ``name`` resolving to an output or an input of the model
(``output.name`` / ``input.name`` say which). Every panel starts at step 0 (the
initial state), draws up to ``max_points`` batch points with a legend, and
labels its axes with the variables and their components (no units: the library
does not know them). The components of a variable of base shape ``(6,)`` (an
``SR2``) are named after Mandel's order ``xx yy zz yz xz xy``; the shear ones
hold ``√2`` times the tensor's component.

``neml2-run --plot`` checks everything here before the run: the file
(:func:`plot_format`, :func:`neml2.drivers._output.check_target`) and the variables
(:func:`check_variables`); :func:`plot` then writes the figure atomically.
matplotlib comes with the extra ``plot`` (``neml2-drivers[plot]``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path

import torch

from neml2.drivers._output import atomic_write, check_target
from neml2.drivers.results import TransientResult
from neml2.tensors import FatalError

#: The formats ``--plot`` writes (matplotlib's own writers, or Pillow's, which it needs).
FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff")

#: ``name`` or ``name[i]`` (``output.name``, ``input.name`` too).
_SPEC = re.compile(r"(?P<name>[^\[\]\s,:]+)(?:\[(?P<index>[^\]]*)\])?")

#: The Mandel components of an SR2 (base shape (6,)), in storage order.
_MANDEL = ("xx", "yy", "zz", "yz", "xz", "xy")


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the install
        raise FatalError(
            "--plot needs matplotlib: install neml2-drivers[plot] (uv sync installs it)"
        ) from e
    return plt


def plot_format(path: str | Path, what: str = "--plot") -> str:
    """The image format of *path*, from its extension.

    Args:
        path: the image file
        what: names the option in errors

    Returns:
        The format, one of :data:`FORMATS`.

    Raises:
        FatalError: naming *what*, when the extension is missing or unknown, or
            matplotlib is missing.
    """
    _pyplot()
    suffix = Path(path).suffix
    if not suffix:
        raise FatalError(
            f"{what}: '{path}' has no file extension; end it with one of "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    fmt = suffix[1:].lower()
    if fmt not in FORMATS:
        raise FatalError(
            f"{what}: '{path}': cannot write the format '{fmt}'; use one of "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    return fmt


@dataclass(frozen=True)
class Var:
    """One plotted quantity: variable *name*, component *index* (None: the first)."""

    name: str
    index: int | None
    text: str  #: as the user wrote it


@dataclass(frozen=True)
class Panel:
    """One panel: *y* against *x*, or against the time when *x* is None."""

    x: Var | None
    y: Var
    text: str  #: as the user wrote it


def _var(spec: str, what: str) -> Var:
    """``name[i]`` -> Var(name, i); ``name`` -> Var(name, None)."""
    m = _SPEC.fullmatch(spec)
    index = m.group("index") if m else None
    if m is None or (index is not None and not index.isdigit()):
        raise FatalError(
            f"{what}: '{spec}' is not a variable 'name' or a component 'name[i]' (i = 0, 1, ...)"
        )
    return Var(m.group("name"), None if index is None else int(index), spec)


def parse_panels(specs: str | Sequence[str], what: str = "--plot-vars") -> list[Panel]:
    """Read the panels ``y`` or ``x:y`` (a comma-separated string, or a list of items).

    Args:
        specs: e.g. ``"strain[0]:stress[0], equivalent_plastic_strain"``
        what: names the option in errors

    Returns:
        One :class:`Panel` per item, in order.

    Raises:
        FatalError: naming *what* and the item: an empty side, more than one ``:``,
            a spelling that is not ``name`` or ``name[i]``.
    """
    items = specs.split(",") if isinstance(specs, str) else list(specs)
    panels = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        sides = [s.strip() for s in item.split(":")]
        if len(sides) > 2 or any(not s for s in sides):
            raise FatalError(
                f"{what}: '{item}' is not a variable 'y' or a pair 'x:y' "
                "(e.g. 'strain[0]:stress[0]')"
            )
        y = _var(sides[-1], what)
        x = _var(sides[0], what) if len(sides) == 2 else None
        panels.append(Panel(x, y, item))
    return panels


def _resolve(
    name: str,
    outputs: Mapping[str, tuple[int, ...]],
    inputs: Mapping[str, tuple[int, ...]],
) -> tuple[int, ...] | None:
    """The base shape of *name* (``x``, ``output.x``, ``input.x``), None if unknown."""
    side, _, var = name.partition(".")
    if side == "output" and var in outputs:
        return tuple(outputs[var])
    if side == "input" and var in inputs:
        return tuple(inputs[var])
    if name in outputs:
        return tuple(outputs[name])
    if name in inputs:
        return tuple(inputs[name])
    return None


def check_variables(
    specs: str | Sequence[str],
    outputs: Mapping[str, tuple[int, ...]],
    inputs: Mapping[str, tuple[int, ...]],
    model: str,
    what: str = "--plot-outputs",
) -> dict[str, tuple[int, ...]]:
    """Check the panels to plot against a model's variables.

    Args:
        specs: the panels, ``y`` or ``x:y`` (see :func:`parse_panels`)
        outputs: the model's outputs and their base shapes
        inputs: the model's inputs (and the time) and their base shapes
        model: the model's name, for the messages
        what: names the option in errors

    Returns:
        ``{name: base shape}`` for every variable named (as written).

    Raises:
        FatalError: naming *what* and the variable: an unknown name (suggesting the
            closest), a name that is both an input and an output without
            ``input.``/``output.``, or a component outside ``0 .. n-1`` (n the number
            of entries of the base shape, 1 for a scalar).
    """
    bases: dict[str, tuple[int, ...]] = {}
    for panel in parse_panels(specs, what):
        for v in (panel.x, panel.y):
            if v is None:
                continue
            base = _resolve(v.name, outputs, inputs)
            if base is None:
                known = [*outputs, *inputs]
                known += [f"output.{n}" for n in outputs] + [f"input.{n}" for n in inputs]
                close = get_close_matches(v.name, known, n=3)
                hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
                raise FatalError(
                    f"{what}: '{v.name}' is not a variable of model '{model}'{hint}; its "
                    f"outputs: {', '.join(outputs) or '(none)'}; its inputs: "
                    f"{', '.join(inputs) or '(none)'}"
                )
            if v.name in outputs and v.name in inputs:
                raise FatalError(
                    f"{what}: '{v.name}' is both an input and an output of model '{model}'; "
                    f"write 'input.{v.name}' or 'output.{v.name}'"
                )
            size = math.prod(base)
            if v.index is not None and not 0 <= v.index < size:
                raise FatalError(
                    f"{what}: '{v.text}': '{v.name}' has {size} component(s) (base shape "
                    f"{base}), so i must lie in 0..{size - 1}"
                )
            bases[v.name] = base
    return bases


def series(result: dict[str, torch.Tensor], key: str) -> tuple[list[int], list[torch.Tensor]]:
    """Steps and values of a flat result's ``output.<k>.<var>`` (``key`` = ``output.var``,
    ``input.var`` or ``var`` for an output), the steps where it is recorded only."""
    side, _, var = key.rpartition(".")
    side = side or "output"
    steps = sorted(
        int(k.split(".")[1])
        for k in result
        if k.startswith(f"{side}.") and k.split(".", 2)[2] == var
    )
    return steps, [result[f"{side}.{k}.{var}"] for k in steps]


def label(var: Var, base: tuple[int, ...]) -> str:
    """The axis label of *var* of base shape *base*: ``stress[0] (xx)``,
    ``stress[3] (√2·yz)``, ``t`` (a scalar has no component)."""
    if math.prod(base) <= 1:
        return var.name
    index = var.index or 0
    text = f"{var.name}[{index}]"
    if base == (6,):
        comp = _MANDEL[index]
        text += f" ({comp})" if index < 3 else f" (√2·{comp})"
    return text


def _values(
    result: TransientResult, var: Var, bases: Mapping[str, tuple[int, ...]]
) -> tuple[torch.Tensor, tuple[int, ...]]:
    """``(steps, *B)``, one component of *var* at every step, and *var*'s base shape
    (from *bases*, else: a last axis of 3 or 6 holds the components)."""
    try:
        v = result[var.name]
    except KeyError as e:
        raise FatalError(f"--plot: {e.args[0]}") from None
    v = v.detach().cpu().double()
    base = bases.get(var.name)
    if base is None:
        base = (int(v.shape[-1]),) if v.dim() >= 2 and v.shape[-1] in (3, 6) else ()
    if base:  # the base axes flattened, then the component
        v = v.reshape(*v.shape[: v.dim() - len(base)], -1)[..., var.index or 0]
    return v, tuple(base)


def _together(x: torch.Tensor, y: torch.Tensor, panel: Panel) -> tuple[torch.Tensor, torch.Tensor]:
    """x and y ``(steps, *B)`` broadcast over their batch shapes, as ``(steps, points)``."""
    try:
        batch = torch.broadcast_shapes(x.shape[1:], y.shape[1:])
    except RuntimeError:
        raise FatalError(
            f"--plot: '{panel.text}': the batch shapes {tuple(x.shape[1:])} and "
            f"{tuple(y.shape[1:])} do not broadcast"
        ) from None

    def full(v: torch.Tensor) -> torch.Tensor:
        pad = (1,) * (len(batch) - (v.dim() - 1))
        return v.reshape(v.shape[0], *pad, *v.shape[1:]).expand(v.shape[0], *batch)

    steps = x.shape[0]
    return full(x).reshape(steps, -1), full(y).reshape(steps, -1)


def plot(
    result: TransientResult | Mapping[str, torch.Tensor],
    variables: str | Sequence[str],
    path: str | Path,
    time: str = "t",
    max_points: int = 8,
    base_shapes: Mapping[str, tuple[int, ...]] | None = None,
) -> Path:
    """Write an image with one panel per item of *variables*, ``y`` or ``x:y``.

    Args:
        result: the stacked result, or a flat one (``{"output.<k>.<var>": ...}``,
            stacked with :meth:`TransientResult.from_flat`)
        variables: the panels (see :func:`parse_panels`), e.g. ``["strain[0]:stress[0]"]``
        path: the image file; its extension picks the format (:data:`FORMATS`); a
            relative path is relative to the current directory
        time: the time variable's name (the x axis of a panel ``y``)
        max_points: how many batch points each panel draws at most
        base_shapes: ``{name: base shape}`` (from :func:`check_variables`): which
            trailing axes hold the components; without it, a last axis of 3 or 6 does

    Returns:
        *path*, written atomically.

    Raises:
        FatalError: a bad format or target (naming ``--plot``), a variable the result
            lacks, batch shapes that do not broadcast.
    """
    plt = _pyplot()
    fmt = plot_format(path)
    target = check_target(str(path), "--plot")
    if not isinstance(result, TransientResult):
        try:
            result = TransientResult.from_flat(result, time=time)
        except FatalError as e:
            raise FatalError(f"--plot: {e}") from None
    if time not in result.inputs:
        raise FatalError(f"--plot: the result has no time variable '{time}'")
    panels = parse_panels(variables, "--plot")
    if not panels:
        raise FatalError("--plot: no variable to plot")
    bases = dict(base_shapes or {})
    bases.setdefault(time, ())
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 3.2 * len(panels)), squeeze=False)
    try:
        for ax, panel in zip(axes[:, 0], panels, strict=True):
            xvar = panel.x if panel.x is not None else Var(time, None, time)
            x, xbase = _values(result, xvar, bases)
            y, ybase = _values(result, panel.y, bases)
            xs, ys = _together(x, y, panel)
            ylabel = label(panel.y, ybase)
            points = ys.shape[1]
            for j in range(min(points, max_points)):
                name = ylabel if points == 1 else f"point {j}"
                ax.plot(xs[:, j].tolist(), ys[:, j].tolist(), lw=1, marker=".", ms=3, label=name)
            ax.set_xlabel(label(xvar, xbase))
            ax.set_ylabel(ylabel)
            if points > max_points:
                ax.set_title(f"first {max_points} of {points} batch points", fontsize="small")
            ax.legend(fontsize="small")
            ax.grid(True, alpha=0.3)
        fig.tight_layout()
        atomic_write(target, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120), "--plot")
    finally:
        plt.close(fig)
    return Path(path)
