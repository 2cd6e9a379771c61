"""Parameter derivatives on the compiled routes: d stress / d E and d stress / d nu.

Derivatives are compiled w.r.t. inputs, so a parameter is differentiated by giving it
by an input variable (a HIT override at compile time; docs/aoti.md, "Parameter
derivatives"): linear elasticity with ``coefficients = 'youngs_modulus
poissons_ratio'``, compiled once per session with ``-d stress:``. Its blocks on py-aoti,
cpp-aoti (``neml2.routes.open_model``), the runtime's ``neml2.aoti.Model`` and
cpp-dispatch are checked against py-eager's autograd w.r.t. the ``nn.Parameter`` s ``E``
and ``nu`` of the unchanged model (per point, and as the vector-Jacobian product a
calibration needs, ``dL/dE = sum_n v_n . d stress_n / d E``) to 1e-10, at batch 5, 1
and unbatched; ``-d stress:E`` itself is refused with a message saying this.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.func import functional_call

import neml2
import neml2.routes
from neml2.compiler import CompileOptions, compile_file
from neml2.tensors import FatalError

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "aoti-cache"
F64 = torch.float64
E0, NU0 = 200e3, 0.3
#: the parameters given by input variables (a HIT override of the file below)
PROMOTE = "Models/elasticity/coefficients='youngs_modulus poissons_ratio'"
VARS = {"E": "youngs_modulus", "nu": "poissons_ratio"}
ROUTES = ("py-aoti", "cpp-aoti", "cpp-dispatch")

ELASTICITY = f"""
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '{E0} {NU0}'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture(scope="session")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("param-derivs") / "elasticity.i"
    path.write_text(ELASTICITY)
    return path


@pytest.fixture(scope="session")
def artifact(source):
    """The elasticity artifact with E and nu as inputs and every block of stress."""
    return neml2.routes.build_artifact(
        source,
        "elasticity",
        pairs=["stress:"],
        overrides=[PROMOTE],
        output_dir=source.parent / "artifacts",
        cache_dir=CACHE,
    )


@pytest.fixture(scope="session")
def models(source, artifact):
    """route -> the compiled model opened on it (the artifact compiled once)."""
    return {r: neml2.routes.open_model(r, source, "elasticity", artifact=artifact) for r in ROUTES}


@pytest.fixture(scope="session")
def eager(source):
    """py-eager's model with E and nu as parameters (the file as written)."""
    return neml2.load_model(source, "elasticity")


def _strain(shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + 10 * len(shape))
    return 2e-3 * (torch.rand(*shape, 6, generator=g, dtype=F64) - 0.5)


def _inputs(strain: torch.Tensor, e: float = E0, nu: float = NU0) -> dict[str, torch.Tensor]:
    """The compiled model's inputs: the parameters as 0-dim tensors (broadcast)."""
    return {
        "strain": strain,
        "youngs_modulus": torch.tensor(e, dtype=F64),
        "poissons_ratio": torch.tensor(nu, dtype=F64),
    }


def _reference_blocks(eager, strain: torch.Tensor) -> dict[str, torch.Tensor]:
    """d stress / d p at every point, by autograd over a per-point copy of each
    parameter p of py-eager's model: ``{p: (*B, 6)}``."""
    batch = strain.shape[:-1]
    ps = {
        p: torch.full(batch, v, dtype=F64, requires_grad=True) for p, v in (("E", E0), ("nu", NU0))
    }
    with torch.enable_grad():
        stress = functional_call(eager, ps, ({"strain": strain},))["stress"]
        cols = {p: [] for p in ps}
        for k in range(6):
            grads = torch.autograd.grad(stress[..., k].sum(), list(ps.values()), retain_graph=True)
            for p, gk in zip(ps, grads, strict=True):
                cols[p].append(gk)
    return {p: torch.stack(c, -1) for p, c in cols.items()}


def _reference_vjp(eager, strain: torch.Tensor, cot: torch.Tensor) -> dict[str, torch.Tensor]:
    """``dL/dp`` of ``L = sum_n cot_n . stress_n`` by autograd w.r.t. py-eager's
    ``nn.Parameter`` s (shared by every point): ``{p: ()}``."""
    params = dict(eager.named_parameters())
    with torch.enable_grad():
        stress = eager.forward({"strain": strain})["stress"]
        grads = torch.autograd.grad((cot * stress).sum(), [params["E"], params["nu"]])
    return dict(zip(("E", "nu"), grads, strict=True))


def _close(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.shape == b.shape, (a.shape, b.shape)
    a, b = a.detach(), b.detach()
    err = float((a - b).abs().max()) / max(float(b.abs().max()), 1e-300)
    assert err <= 1e-10, err  # fails on NaN too


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("batch", [(5,), (1,), ()], ids=["b5", "b1", "unbatched"])
def test_parameter_blocks_match_autograd(models, eager, route, batch):
    strain = _strain(batch)
    out, J = models[route].jacobian(_inputs(strain))
    ref = _reference_blocks(eager, strain)
    _close(out["stress"], eager.forward({"strain": strain})["stress"])
    for p, var in VARS.items():
        _close(J["stress"][var], ref[p])
    # the strain block is the ordinary tangent
    _, Je = eager.jacobian({"strain": strain})
    _close(J["stress"]["strain"], Je["stress"]["strain"])


@pytest.mark.parametrize("route", ROUTES)
def test_parameter_vjp_from_the_blocks(models, eager, route):
    """``dL/dp = sum over points and components of cot * J[stress][p]``, the
    reference library's ``param_vjp``, from the compiled blocks."""
    strain = _strain((7,), seed=3)
    cot = torch.rand(7, 6, generator=torch.Generator().manual_seed(5), dtype=F64) - 0.5
    _, J = models[route].jacobian(_inputs(strain))
    ref = _reference_vjp(eager, strain, cot)
    for p, var in VARS.items():
        _close((cot * J["stress"][var]).sum(), ref[p])


def test_runtime_model_away_from_the_defaults(models, artifact, source):
    """``neml2.aoti.Model`` on the artifact, at other parameter values than the file's:
    the parameters are run-time inputs, and their blocks follow them."""
    from neml2.aoti import Model

    m = Model(str(artifact.artifact_dir))
    strain = _strain((4,), seed=9)
    e, nu = 150e3, 0.25
    out, J = m.jacobian(_inputs(strain, e, nu))
    other = neml2.load_model(source, "elasticity", [f"Models/elasticity/coefficients='{e} {nu}'"])
    _close(out["stress"], other.forward({"strain": strain})["stress"])
    # d stress / d E = stress / E (stress is linear in E at fixed nu)
    _close(J["stress"]["youngs_modulus"], out["stress"] / e)
    # cpp-aoti's jvp along a parameter direction: the block times the direction
    _, dy = models["cpp-aoti"].jvp(
        _inputs(strain, e, nu), {"poissons_ratio": torch.full((4,), 0.5, dtype=F64)}
    )
    _close(dy["stress"], 0.5 * J["stress"]["poissons_ratio"])


def test_derivative_wrt_a_parameter_is_refused_with_the_way_out(source, tmp_path):
    """``-p E -d stress:E``: one line saying to give E by an input variable."""
    opts = CompileOptions.from_strings("elasticity", ["stress:E"], ["E"])
    with pytest.raises(FatalError, match=r"'E' is a parameter.*input variable"):
        compile_file(source, opts, tmp_path, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "elasticity").exists()
