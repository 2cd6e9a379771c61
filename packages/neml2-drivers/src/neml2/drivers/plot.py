"""Plot a transient result (``input.<k>.<var>`` / ``output.<k>.<var>``) against time."""

from __future__ import annotations

from pathlib import Path

import torch

from neml2.tensors import FatalError


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
) -> Path:
    """Write a PNG with one panel per variable ``name`` or ``name[i]`` (component i).

    Each panel shows up to *max_points* batch points against the time ``input.<k>.<time>``.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the install
        raise FatalError(
            "--plot needs matplotlib: install neml2-drivers[plot] (uv sync installs it)"
        ) from e
    t_steps, t_vals = series(result, f"input.{time}")
    if not t_steps:
        raise FatalError(f"--plot: the result has no time variable '{time}'")
    tmap = dict(zip(t_steps, t_vals, strict=True))
    fig, axes = plt.subplots(len(variables), 1, figsize=(7, 3 * len(variables)), squeeze=False)
    for ax, spec in zip(axes[:, 0], variables, strict=True):
        name, comp = spec, 0
        if spec.endswith("]") and "[" in spec:
            name, _, idx = spec[:-1].partition("[")
            comp = int(idx)
        steps, vals = series(result, name)
        if not steps:
            known = sorted({k.split(".", 2)[2] for k in result if k.startswith("output.")})
            raise FatalError(f"--plot: no output '{name}' (outputs: {', '.join(known)})")
        ys = []
        for v in vals:
            v = v.detach().cpu().double()
            if v.dim() >= 1 and v.shape[-1] in (3, 6) and name:
                v = v[..., comp]
            ys.append(v.reshape(-1))
        xs = [tmap[k].detach().cpu().double().reshape(-1) for k in steps]
        n = min(max(y.numel() for y in ys), max_points)
        for j in range(n):
            x = [xi[j if xi.numel() > 1 else 0].item() for xi in xs]
            y = [yi[j if yi.numel() > 1 else 0].item() for yi in ys]
            ax.plot(x, y, lw=1)
        ax.set_xlabel(time)
        ax.set_ylabel(spec)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
