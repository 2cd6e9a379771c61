"""Recover viscoplastic parameters from synthetic stress-strain curves with pyzag.

    uv run python examples/calibration/calibrate.py [--iterations N] [--plot fit.png]

1. ``model.i`` holds the truth: Perzyna viscoplasticity with Voce hardening,
   E = 1e5, yield stress 200, Voce saturated hardening 150 and rate 60.
2. Synthetic data: the axial stress of three strain-controlled tests (maximum
   strain 1, 2 and 3 %, so three strain rates) integrated by pyzag through the
   residual model ``implicit_rate`` (:class:`neml2.drivers.pyzag.PyzagModel`).
3. The four parameters are moved 10-25 % away from the truth, rescaled to
   [0, 1] within bounds around the start (pyzag's ``RangeRescale``; the truth
   is not used), and fitted with L-BFGS; the gradient of the loss comes from
   pyzag's adjoint sweep through the whole loading history.
4. The result is printed (relative error against the truth), written as JSON
   (``--summary``), and plotted (``--plot``: data, start and fit). The exit
   status is 1 when a parameter is off by more than ``--tolerance`` (1 %).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from pyzag.reparametrization import RangeRescale, Reparameterizer

import neml2
from neml2.drivers.pyzag import PyzagModel

HERE = Path(__file__).resolve().parent

#: The fitted parameters of the residual model and their start values (truth x factor).
START_FACTORS = {
    "elasticity.E": 1.15,
    "yield_surface.yield_stress": 0.85,
    "isoharden.saturated_hardening": 1.25,
    "isoharden.saturation_rate": 0.8,
}


def loading(n_step: int) -> dict[str, torch.Tensor]:
    """Three strain-controlled tests over 10 s: ``E (n_step, 3, 6)``, ``t (n_step, 3)``."""
    s = torch.linspace(0.0, 1.0, n_step, dtype=torch.float64)
    emax = torch.tensor([0.01, 0.02, 0.03], dtype=torch.float64)
    axial = s[:, None] * emax  # (n_step, 3)
    E = torch.zeros(n_step, 3, 6, dtype=torch.float64)
    E[..., 0] = axial
    E[..., 1] = -0.5 * axial
    E[..., 2] = -0.5 * axial
    t = (10.0 * s)[:, None].expand(n_step, 3).contiguous()
    return {"E": E, "t": t}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default=str(HERE / "model.i"), help="HIT input with the truth")
    ap.add_argument("--steps", type=int, default=41, help="time steps per test (incl. step 0)")
    ap.add_argument("--iterations", type=int, default=30, help="L-BFGS iterations (at most)")
    ap.add_argument("--block-size", type=int, default=10, help="pyzag steps solved together")
    ap.add_argument("--tolerance", type=float, default=0.01, help="relative error accepted")
    ap.add_argument("--plot", default="build/calibration/fit.png", help="plot file ('' for none)")
    ap.add_argument("--summary", default="build/calibration/summary.json", help="JSON result")
    ap.add_argument("--jit", action="store_true", help="evaluate through neml2.compile (py-jit)")
    args = ap.parse_args(argv)

    model = neml2.load_model(args.input, "implicit_rate")
    pz = PyzagModel(model, jit=args.jit)
    forces = loading(args.steps)
    params = dict(model.named_parameters())
    truth = {name: params[name].detach().clone() for name in START_FACTORS}

    # Synthetic data from the truth (a plain solve, no adjoint needed).
    data = pz.integrate(forces, block_size=args.block_size, adjoint=False)["stress"][..., 0]

    # Start away from the truth; only the four fitted parameters are trainable, each
    # rescaled to [0, 1] within [0.5, 2] x its start value.
    for name, p in model.named_parameters():
        p.requires_grad_(name in START_FACTORS)
    for name, factor in START_FACTORS.items():
        model.set_parameter(name, truth[name] * factor)
    start = {name: float(truth[name] * f) for name, f in START_FACTORS.items()}
    Reparameterizer({n: RangeRescale(0.5 * v, 2.0 * v) for n, v in start.items()})(model)

    def natural() -> dict[str, float]:
        """The fitted parameters' current values (through the rescaling)."""
        out = {}
        for name in START_FACTORS:
            owner, _, leaf = name.rpartition(".")
            out[name] = float(getattr(model.get_submodule(owner), leaf))
        return out

    scale = float(data.abs().max())

    def loss_fn() -> torch.Tensor:
        stress = pz.integrate(forces, block_size=args.block_size)["stress"][..., 0]
        return ((stress - data) / scale).pow(2).mean()

    with torch.no_grad():
        initial = pz.integrate(forces, block_size=args.block_size, adjoint=False)["stress"]
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.LBFGS(trainable, lr=1.0, max_iter=1, line_search_fn="strong_wolfe")
    t0 = time.perf_counter()
    history = []
    for it in range(args.iterations):

        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        loss = float(opt.step(closure).detach())
        history.append(loss)
        now = natural()
        print(f"iter {it:3d}  loss {loss:.3e}  " + "  ".join(f"{v:.5g}" for v in now.values()))
        if len(history) > 1 and loss >= history[-2]:
            break  # no further decrease: the line search found no better point
    wall = time.perf_counter() - t0

    fitted = natural()
    errors = {n: abs(fitted[n] / float(truth[n]) - 1.0) for n in START_FACTORS}
    print(f"\n{'parameter':32s} {'truth':>10s} {'start':>10s} {'fitted':>10s} {'error':>8s}")
    for n in START_FACTORS:
        print(
            f"{n:32s} {float(truth[n]):10.5g} {start[n]:10.5g} {fitted[n]:10.5g} "
            f"{100 * errors[n]:7.3f}%"
        )
    print(f"{len(history)} L-BFGS iterations in {wall:.1f} s")

    with torch.no_grad():
        fit = pz.integrate(forces, block_size=args.block_size, adjoint=False)["stress"]
    if args.summary:
        out = Path(args.summary)
        out.parent.mkdir(parents=True, exist_ok=True)
        summary = {
            "truth": {n: float(v) for n, v in truth.items()},
            "start": start,
            "fitted": fitted,
            "relative_error": errors,
            "loss": history,
            "wall_s": wall,
        }
        out.write_text(json.dumps(summary, indent=2) + "\n")
    if args.plot:
        plot(Path(args.plot), forces["E"][..., 0], data, initial[..., 0], fit[..., 0])
        print(f"plot: {args.plot}")

    bad = [n for n, e in errors.items() if e > args.tolerance]
    if bad:
        print(f"not recovered within {100 * args.tolerance:g} %: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def plot(path: Path, strain, data, initial, fit) -> None:
    """Axial stress vs strain per test: data (points), start (dashed), fit (line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i in range(strain.shape[1]):
        e = strain[:, i].numpy()
        (line,) = ax.plot(e, fit[:, i].numpy(), "-", label=f"fit, test {i + 1}")
        ax.plot(e, data[:, i].numpy(), "o", ms=3, color=line.get_color(), label="data")
        ax.plot(e, initial[:, i].numpy(), "--", color=line.get_color(), alpha=0.5, label="start")
    ax.set_xlabel("axial strain")
    ax.set_ylabel("axial stress")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
