"""Plot a transient result (``input.<k>.<var>`` / ``output.<k>.<var>``) against time.

``neml2-run --plot`` checks everything here before the run: the file
(:func:`plot_format`, :func:`neml2.drivers._output.check_target`) and the variables
(:func:`check_variables`); :func:`plot` then writes the figure atomically.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from difflib import get_close_matches
from pathlib import Path

import torch

from neml2.drivers._output import atomic_write, check_target
from neml2.tensors import FatalError

#: The formats ``--plot`` writes (matplotlib's own writers, or Pillow's, which it needs).
FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff")

#: ``name`` or ``name[i]`` (``output.name``, ``input.name`` too).
_SPEC = re.compile(r"(?P<name>[^\[\]\s,]+)(?:\[(?P<index>[^\]]*)\])?")


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
    """The image format of *path*, from its extension; a :class:`FatalError` naming
    *what* when the extension is missing or not one of :data:`FORMATS`
    (or matplotlib is missing)."""
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


def _split(spec: str, what: str) -> tuple[str, int | None]:
    """``name[i]`` -> (name, i); ``name`` -> (name, None)."""
    m = _SPEC.fullmatch(spec)
    index = m.group("index") if m else None
    if m is None or (index is not None and not index.isdigit()):
        raise FatalError(
            f"{what}: '{spec}' is not a variable 'name' or a component 'name[i]' (i = 0, 1, ...)"
        )
    return m.group("name"), None if index is None else int(index)


def check_variables(
    specs: list[str],
    outputs: Mapping[str, tuple[int, ...]],
    inputs: Mapping[str, tuple[int, ...]],
    model: str,
    what: str = "--plot-outputs",
) -> dict[str, tuple[int, ...]]:
    """Check the variables to plot against a model's; return ``{name: base shape}``.

    Args:
        specs: ``name``, ``output.name``, ``input.name``, each optionally ``[i]``
        outputs, inputs: the model's variables and their base shapes
        model: the model's name, for the messages

    An unknown name is an error suggesting the closest; a component must lie in
    ``0 .. n-1`` with n the number of entries of the base shape (1 for a scalar).
    """
    known = dict(outputs)
    known.update({f"output.{n}": b for n, b in outputs.items()})
    known.update({f"input.{n}": b for n, b in inputs.items()})
    bases: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, index = _split(spec, what)
        if name not in known:
            close = get_close_matches(name, list(known), n=3)
            hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
            raise FatalError(
                f"{what}: '{name}' is not a variable of model '{model}'{hint}; its outputs: "
                f"{', '.join(outputs) or '(none)'}; inputs as input.<name>: "
                f"{', '.join(inputs) or '(none)'}"
            )
        base = tuple(known[name])
        size = math.prod(base)
        if index is not None and not 0 <= index < size:
            raise FatalError(
                f"{what}: '{spec}': '{name}' has {size} component(s) (base shape {base}), "
                f"so i must lie in 0..{size - 1}"
            )
        bases[name] = base
    return bases


def series(result: dict[str, torch.Tensor], key: str) -> tuple[list[int], list[torch.Tensor]]:
    """Steps and values of ``output.<k>.<var>`` (``key`` = ``output.var`` or ``var``)."""
    side, _, var = key.rpartition(".")
    side = side or "output"
    steps = sorted(
        int(k.split(".")[1])
        for k in result
        if k.startswith(f"{side}.") and k.split(".", 2)[2] == var
    )
    return steps, [result[f"{side}.{k}.{var}"] for k in steps]


def plot(
    result: dict[str, torch.Tensor],
    variables: list[str],
    path: str | Path,
    time: str = "t",
    max_points: int = 8,
    base_shapes: Mapping[str, tuple[int, ...]] | None = None,
) -> Path:
    """Write an image with one panel per variable ``name`` or ``name[i]`` (component i).

    Each panel shows up to *max_points* batch points against the time ``input.<k>.<time>``.
    The format follows the extension of *path* (:data:`FORMATS`); a relative *path*
    is relative to the current directory; the file is written atomically.
    *base_shapes* (``{name: base shape}``, from :func:`check_variables`) tells which
    trailing axes hold the components; without it, a last axis of 3 or 6 does.
    """
    plt = _pyplot()
    fmt = plot_format(path)
    target = check_target(str(path), "--plot")
    t_steps, t_vals = series(result, f"input.{time}")
    if not t_steps:
        raise FatalError(f"--plot: the result has no time variable '{time}'")
    tmap = dict(zip(t_steps, t_vals, strict=True))
    fig, axes = plt.subplots(len(variables), 1, figsize=(7, 3 * len(variables)), squeeze=False)
    try:
        for ax, spec in zip(axes[:, 0], variables, strict=True):
            name, index = _split(spec, "--plot-outputs")
            comp = index or 0
            steps, vals = series(result, name)
            if not steps:
                known = sorted({k.split(".", 2)[2] for k in result if k.startswith("output.")})
                raise FatalError(f"--plot: no output '{name}' (outputs: {', '.join(known)})")
            base = None if base_shapes is None else base_shapes.get(name)
            ys = []
            for v in vals:
                v = v.detach().cpu().double()
                if base is not None:
                    if base:  # the base axes flattened, then component comp
                        v = v.reshape(*v.shape[: v.dim() - len(base)], -1)[..., comp]
                elif v.dim() >= 1 and v.shape[-1] in (3, 6) and name:
                    v = v[..., comp]
                ys.append(v.reshape(-1))
            # a model that does not take the time records it at step 0 only: plot by step
            by_step = any(k not in tmap for k in steps)
            xs = [
                torch.tensor([float(k)], dtype=torch.float64)
                if by_step
                else tmap[k].detach().cpu().double().reshape(-1)
                for k in steps
            ]
            n = min(max(y.numel() for y in ys), max_points)
            for j in range(n):
                x = [xi[j if xi.numel() > 1 else 0].item() for xi in xs]
                y = [yi[j if yi.numel() > 1 else 0].item() for yi in ys]
                ax.plot(x, y, lw=1)
            ax.set_xlabel("step" if by_step else time)
            ax.set_ylabel(spec)
            ax.grid(True, alpha=0.3)
        fig.tight_layout()
        atomic_write(target, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120), "--plot")
    finally:
        plt.close(fig)
    return Path(path)
