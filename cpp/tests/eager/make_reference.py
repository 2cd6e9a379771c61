"""Reference values for test_eager (ctest fixture): the crystal-plasticity model of
crystal.i evaluated by py-eager, written as text the C++ test reads back.

Usage: python make_reference.py crystal.i OUT.txt

Each line is one tensor: ``kind name block ndim *shape *values`` with kind one of
input, tangent, output, jvp, jacobian (block is the input name of a Jacobian block,
``-`` otherwise) and values at full double precision, row-major.
"""

from __future__ import annotations

import sys

import torch

import neml2

F64 = torch.float64
BATCH = 2
#: sub-batch axes of the per-slip inputs (12 slip systems)
SUB = {"dislocation_density~1": 1}


def inputs(model) -> dict[str, torch.Tensor]:
    """Deterministic inputs at (B, *sub, *base): a plastic step from a rotated crystal."""
    g = torch.Generator().manual_seed(7)
    d = torch.tensor([0.1, -0.05, -0.05, 0.02, 0.0, 0.01], dtype=F64)
    return {
        "deformation_rate": d * torch.linspace(0.5, 1.0, BATCH, dtype=F64).unsqueeze(-1),
        "vorticity": torch.tensor([[0.1, -0.05, -0.05]], dtype=F64).expand(BATCH, 3),
        "dislocation_density~1": 10.0 + torch.rand(BATCH, 12, generator=g, dtype=F64),
        "t": torch.full((BATCH,), 0.1, dtype=F64),
        "t~1": torch.zeros(BATCH, dtype=F64),
        "elastic_strain~1": 1e-4 * torch.rand(BATCH, 6, generator=g, dtype=F64),
        "orientation~1": 0.1 * torch.rand(BATCH, 3, generator=g, dtype=F64),
    }


def typed(model, x: dict[str, torch.Tensor]) -> dict:
    return {n: model.input_spec[n](v, SUB[n]) if n in SUB else v for n, v in x.items()}


def line(kind: str, name: str, block: str, t: torch.Tensor) -> str:
    t = t.detach().contiguous()
    vals = " ".join(repr(float(v)) for v in t.reshape(-1).tolist())
    return f"{kind} {name} {block} {t.dim()} {' '.join(map(str, t.shape))} {vals}".replace(
        "  ", " "
    )


def main(path: str, out: str) -> None:
    model = neml2.load_model(path, "model")
    x = inputs(model)
    tangents = {
        "deformation_rate": torch.tensor([[1.0, 0.5, -0.5, 0.0, 0.2, 0.0]], dtype=F64).expand(
            BATCH, 6
        ),
        "dislocation_density~1": torch.ones(BATCH, 12, dtype=F64),
    }
    # cpp-eager calls with autograd off: so does the reference (with it on, ImplicitUpdate
    # adds one recorded Newton step for parameter gradients, moving values by ~1e-9)
    with torch.no_grad():
        y = model.forward(typed(model, x))
        _, jv = model.jvp(typed(model, x), tangents)
        _, jac = model.jacobian(typed(model, x))
    lines = [line("input", n, "-", v) for n, v in x.items()]
    lines += [line("tangent", n, "-", v) for n, v in tangents.items()]
    lines += [line("output", n, "-", v) for n, v in y.items()]
    lines += [line("jvp", n, "-", v) for n, v in jv.items()]
    lines += [line("jacobian", o, i, b) for o, row in jac.items() for i, b in row.items()]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_reference.py crystal.i OUT.txt")
    main(sys.argv[1], sys.argv[2])
