"""The Krylov linear solvers in larger implicit models and in exported graphs.

- Crystal plasticity with 12 slip systems (a conformance input) solved with GMRES + block
  Jacobi and BiCGStab + Jacobi gives the DenseLU result.
- The J2 tutorial with its Newton step solved by GMRES + block Jacobi: ``torch.export``
  (as neml2-compile does, without the AOT Inductor compile) keeps GMRES's restart loop
  as a ``while_loop`` nested in Newton's, and the exported program gives the eager values.
"""

import re
from pathlib import Path

import torch

import neml2
from neml2.compiler import CompileOptions, export_file
from neml2.models._factory import load_input

ROOT = Path(__file__).resolve().parents[1]
J2 = ROOT / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"
CP = (
    ROOT
    / "tests-integration"
    / "conformance"
    / "data"
    / "regression"
    / "solid_mechanics"
    / "crystal_plasticity"
    / "per_slip_hardening_declared"
    / "model.i"
)
LU = r"\[lu\]\s*\n\s*type = DenseLU\s*\n\s*\[\]"


def _run(path: Path, driver: str) -> dict:
    ctx = load_input(path)
    d = ctx.object("Drivers", driver)
    assert d.run()
    return d.result


def test_crystal_plasticity_matches_dense_lu(tmp_path):
    """20 points, 12 slip systems (per-slip hardening), NewtonWithLineSearch."""
    ref = _run(CP, "driver")
    text = CP.read_text()
    for linear, pre in (
        ("GMRES", "BlockJacobiPreconditioner"),
        ("BiCGStab", "JacobiPreconditioner"),
    ):
        path = tmp_path / f"{linear}.i"  # the driver run reads no other file
        path.write_text(
            re.sub(
                LU,
                f"[lu]\n    type = {linear}\n    rel_tol = 1e-12\n    preconditioner = 'pc'\n"
                f"  []\n  [pc]\n    type = {pre}\n  []",
                text,
            )
        )
        res = _run(path, "driver")
        keys = [k for k in ref if k.startswith("output.") and ref[k].is_floating_point()]
        assert keys
        for k in keys:
            # seen: at most 7e-14 of the scale
            scale = ref[k].abs().max().clamp(min=1e-12)
            assert (res[k] - ref[k]).abs().max() <= 1e-10 * scale, (linear, k)


def test_gmres_newton_exports_and_matches_eager(tmp_path):
    text = re.sub(
        LU,
        "[lu]\n    type = GMRES\n    rel_tol = 1e-12\n    preconditioner = 'bjac'\n  []\n"
        "  [bjac]\n    type = BlockJacobiPreconditioner\n  []",
        J2.read_text(),
    )
    path = tmp_path / "j2_gmres.i"
    path.write_text(text)
    res = export_file(path, CompileOptions(model="model"))
    program = res.programs["forward"]
    graph = str(program.graph_module.code)
    assert graph.count("while_loop") >= 2  # Newton's loop and GMRES's restarts

    model = neml2.load_model(str(path), "model")
    N = 5
    d = torch.float64
    ramp = torch.linspace(0.5, 3.0, N, dtype=d)[:, None]
    raw = {
        "strain": torch.tensor([0.01, -0.005, -0.005, 0.0, 0.0, 0.0], dtype=d) * ramp,
        "plastic_strain~1": torch.zeros(N, 6, dtype=d),
        "t": torch.ones(N, dtype=d),
        "t~1": torch.zeros(N, dtype=d),
        "equivalent_plastic_strain~1": torch.zeros(N, dtype=d),
        "flow_rate~1": torch.zeros(N, dtype=d),
    }
    typed = [t(raw[n]) for n, t in model.input_spec.items()]
    eager = [o.data for o in model(*typed)]
    exported = program.module()(*[raw[n] for n in model.input_spec])
    exported = exported if isinstance(exported, (tuple, list)) else [exported]
    assert len(exported) >= len(eager)
    for e, x in zip(eager, exported, strict=False):
        scale = e.abs().max().clamp(min=1e-12)
        assert (x - e).abs().max() <= 1e-12 * scale
