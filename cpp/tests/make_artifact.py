"""Build the AOTI artifacts the C++ tests load.

``python make_artifact.py OUTDIR`` builds the tiny "scale" artifact with plain torch
only (no neml2 packages), so both test suites can use it: it writes
``OUTDIR/scale/{metadata.json,cpu/float64/*.pt2}``.

``python make_artifact.py --routes OUTDIR [CASE...]`` compiles elasticity, J2 (isoharden),
Chaboche and a per-slip crystal model with neml2-compile and saves py-eager
references for test_model_routes (see ``routes()``); it exits 77 (ctest: skipped)
when the neml2 packages or the conformance data are not available.

"scale": inputs x (Scalar) and strain (SR2), promoted parameter k = 2 (shape ()).
Outputs y = k * x * tr(strain) (Scalar) and s = x * strain (SR2); the jacobian
graph adds dy/dstrain (6,) and ds/dx (6,); forward_into stores y and s into tensors
given after k. The .pt2 files are cached under
<repo>/build/aoti-cache by a hash of this file and the torch version.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve()
CACHE = HERE.parents[2] / "build" / "aoti-cache"
TR = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)


def reference(x, strain, k):
    tr_ = torch.tensor(TR, dtype=strain.dtype, device=strain.device)
    y = k * x * (strain * tr_).sum(-1)
    s = x.unsqueeze(-1) * strain
    dy_de = (k * x).unsqueeze(-1) * tr_
    return y, s, dy_de, strain


class Forward(torch.nn.Module):
    def forward(self, x, strain, k):
        y, s, _, _ = reference(x, strain, k)
        return y, s


class ForwardInto(torch.nn.Module):
    """``forward_into``: the outputs stored into the trailing tensors (as neml2-compile
    --write-into builds it)."""

    def forward(self, x, strain, k, y_out, s_out):
        y, s, _, _ = reference(x, strain, k)
        y_out.copy_(y)
        s_out.copy_(s)
        return y_out, s_out


class Jacobian(torch.nn.Module):
    def forward(self, x, strain, k):
        return reference(x, strain, k)


def _compile(module: torch.nn.Module, path: Path) -> None:
    key = hashlib.sha256(
        HERE.read_bytes() + type(module).__name__.encode() + torch.__version__.encode()
    ).hexdigest()[:32]
    cached = CACHE / f"scale-{key}.pt2"
    if not cached.is_file():
        b = torch.export.Dim("batch", min=1, max=2**31 - 2)
        args = (
            torch.rand(8, dtype=torch.float64),
            torch.rand(8, 6, dtype=torch.float64),
            torch.tensor(2.0, dtype=torch.float64),
        )
        shapes = ({0: b}, {0: b}, None)
        if isinstance(module, ForwardInto):
            args += (torch.empty(8, dtype=torch.float64), torch.empty(8, 6, dtype=torch.float64))
            shapes += ({0: b}, {0: b})
        ep = torch.export.export(module, args, dynamic_shapes=shapes)
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = CACHE / f".{key}.tmp.pt2"
        torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
        tmp.replace(cached)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, path)


def metadata() -> dict:
    return {
        "schema_version": 1,
        "format": "neml2-aoti",
        "torch_version": torch.__version__,
        "model": "scale",
        "inputs": [
            {"name": "x", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "strain", "type": "SR2", "base_shape": [6], "sub_batch": 0},
        ],
        "outputs": [
            {"name": "y", "type": "Scalar", "base_shape": [], "sub_batch": 0},
            {"name": "s", "type": "SR2", "base_shape": [6], "sub_batch": 0},
        ],
        "derivatives": [{"output": "y", "input": "strain"}, {"output": "s", "input": "x"}],
        "parameters": [{"name": "k", "shape": [], "value": [2.0]}],
        "solvers": [],
        "graphs": {
            "forward": {"file": "forward.pt2", "outputs": ["y", "s"]},
            "forward_into": {"file": "forward_into.pt2", "outputs": ["y", "s"]},
            "jacobian": {"file": "jacobian.pt2", "outputs": ["y", "s", "y:strain", "s:x"]},
        },
        "targets": [
            {
                "device": "cpu",
                "dtype": "float64",
                "graphs": {
                    "forward": "cpu/float64/forward.pt2",
                    "forward_into": "cpu/float64/forward_into.pt2",
                    "jacobian": "cpu/float64/jacobian.pt2",
                },
            }
        ],
    }


def build(out: Path) -> Path:
    art = out / "scale"
    _compile(Forward(), art / "cpu" / "float64" / "forward.pt2")
    _compile(ForwardInto(), art / "cpu" / "float64" / "forward_into.pt2")
    _compile(Jacobian(), art / "cpu" / "float64" / "jacobian.pt2")
    (art / "metadata.json").write_text(json.dumps(metadata(), indent=2))
    return art


# ---------------------------------------------------------------------- routes
#: Same sources and options as tests-integration/test_aoti_*.py, so the graphs hash the
#: same and one compile (build/aoti-cache) serves both.
ELASTICITY = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""
CONFORMANCE = Path(
    os.environ.get(
        "NEML2_CONFORMANCE_DIR", HERE.parents[2] / "tests-integration" / "conformance" / "data"
    )
)
SOLID = CONFORMANCE / "regression" / "solid_mechanics"
RHO = "dislocation_density"
BATCHES = (1, 7, 1000)
SKIP = 77


def _rand(g, n, *s, scale=1.0, shift=0.0):
    return shift + scale * (torch.rand(n, *s, generator=g, dtype=torch.float64) - 0.5)


def _elasticity_inputs(n, g):
    return {"strain": _rand(g, n, 6, scale=1e-2)}, {"strain": _rand(g, n, 6, scale=1e-2)}


def _j2_inputs(n, g):
    """One step of the isoharden regression model (strain-driven radial return)."""
    x = {
        "E": _rand(g, n, 6, scale=0.02),
        "equivalent_plastic_strain~1": 1e-3 * torch.rand(n, generator=g, dtype=torch.float64),
        "t": torch.ones(n, dtype=torch.float64),
        "t~1": torch.zeros(n, dtype=torch.float64),
        "plastic_strain~1": _rand(g, n, 6, scale=1e-3),
        "flow_rate~1": torch.zeros(n, dtype=torch.float64),
    }
    return x, {"E": _rand(g, n, 6, scale=1e-3)}


def _chaboche_inputs(n, g):
    e1 = _rand(g, n, 6, scale=0.004)
    x = {
        "E": e1 + _rand(g, n, 6, scale=0.02),
        "E~1": e1,
        "t": torch.ones(n, dtype=torch.float64),
        "t~1": torch.zeros(n, dtype=torch.float64),
        "stress~1": _rand(g, n, 6, scale=50.0),
        "equivalent_plastic_strain~1": 1e-3 * torch.rand(n, generator=g, dtype=torch.float64),
        "X1~1": _rand(g, n, 6, scale=5.0),
        "X2~1": _rand(g, n, 6, scale=5.0),
    }
    return x, {"E": _rand(g, n, 6, scale=1e-3)}


def _crystal_inputs(n, g):
    d = torch.tensor([0.1, -0.05, -0.05, 0.0, 0.0, 0.0], dtype=torch.float64)
    w = torch.tensor([0.1, -0.05, -0.05], dtype=torch.float64)
    x = {
        "deformation_rate": d + _rand(g, n, 6, scale=0.05),
        "vorticity": w + _rand(g, n, 3, scale=0.05),
        f"{RHO}~1": _rand(g, n, 12, scale=4.0, shift=10.0),
        "t": torch.full((n,), 0.05, dtype=torch.float64),
        "t~1": torch.zeros(n, dtype=torch.float64),
        "elastic_strain~1": _rand(g, n, 6, scale=1e-3),
        "orientation~1": _rand(g, n, 3, scale=0.5),
    }
    t = {f"{RHO}~1": _rand(g, n, 12, scale=1.0), "deformation_rate": _rand(g, n, 6, scale=1e-2)}
    return x, t


#: name -> (input file (None: ELASTICITY), model, -d pairs, -p parameters, inputs(n, g))
CASES = {
    "elasticity": (None, "elasticity", ["stress:strain"], ["elasticity.E"], _elasticity_inputs),
    "j2": (
        SOLID / "rate_independent_plasticity" / "isoharden" / "model.i",
        "model",
        ["stress:E"],
        [],
        _j2_inputs,
    ),
    "chaboche": (
        SOLID / "viscoplasticity" / "chaboche" / "model.i",
        "model",
        ["stress:E"],
        [],
        _chaboche_inputs,
    ),
    "crystal": (
        SOLID / "crystal_plasticity" / "per_slip_hardening_declared" / "model.i",
        "model",
        ["cauchy_stress:deformation_rate", f"{RHO}:{RHO}~1", f"{RHO}:deformation_rate"],
        [],
        _crystal_inputs,
    ),
}


def save_tensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    """``path.json`` ({name: {shape, offset}} in float64 elements) + ``path.bin``
    (raw little-endian float64, C order): what test_model_routes.cpp reads."""
    index, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to("cpu", torch.float64).contiguous()
        index[name] = {"shape": list(t.shape), "offset": offset}
        chunks.append(t.numpy().astype("<f8").tobytes())
        offset += t.numel()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".bin").write_bytes(b"".join(chunks))
    path.with_suffix(".json").write_text(json.dumps({"tensors": index}, indent=1))


def _eager_reference(eager, x, tangents, pairs, sub):
    """py-eager outputs, compiled blocks and jvp; a block w.r.t. a sub-batched input is
    built column by column from jvps (eager jacobian() seeds the base only)."""
    from neml2.tensors import TensorWrapper

    def typed(d):
        out = {}
        for k, v in d.items():
            typ = eager.input_spec[k]
            out[k] = typ(v, len(sub[k])) if sub[k] else v
        return out

    tx = typed(x)
    with torch.no_grad():
        out, J = eager.jacobian(tx)
        _, jv = eager.jvp(tx, tangents)
        ref = {f"output/{k}": v for k, v in out.items()}
        for o, i in pairs:
            if not sub[i]:
                ref[f"jacobian/{o}/{i}"] = J[o][i]
                continue
            v = x[i]
            k = v[0].numel()
            cols = []
            for c in range(k):
                e = torch.zeros(k, dtype=v.dtype)
                e[c] = 1.0
                _, col = eager.jvp(tx, {i: e.reshape(v.shape[1:]).expand_as(v)})
                cols.append(col[o])
            ref[f"jacobian/{o}/{i}"] = torch.stack(cols, -1).reshape(*out[o].shape, *v.shape[1:])
    assert not any(isinstance(t, TensorWrapper) for t in ref.values())
    ref.update({f"jvp/{k}": v for k, v in jv.items()})
    return ref


def mp_history() -> torch.Tensor:
    """Three points, nine steps of strain E: loading into plasticity, reversal, reverse
    yielding (tests-integration/fe/test_material_point_routes.py's history, scaled to
    the isoharden model's yield strain of about 1e-2)."""
    amp = torch.tensor([0, 1, 2, 3, 4, 3, 1, -1, -3, -2], dtype=torch.float64) * 1e-2
    dirs = torch.tensor(
        [[1, -0.5, -0.5, 0, 0, 0], [1, 0.2, -0.1, 0.3, 0.1, 0.4], [0, 0, 0, 0, 0, 1.0]],
        dtype=torch.float64,
    )
    return amp[:, None, None] * dirs  # (steps, 3, 6)


def material_point_reference(eager) -> dict[str, torch.Tensor]:
    """py-eager ``neml2.MaterialPoint`` (strain ``E``) for test_material_point.cpp: the
    history rolled forward (``step<k>/...``, time k, time_old k-1) and a batch of six
    plastic points with a NaN strain at point 4 (``fail/...``, per-point status)."""
    import neml2

    mp = neml2.MaterialPoint(eager, strain="E")
    assert mp.predictors == ["flow_rate~1"], mp.predictors
    E = mp_history()
    ref = {"history/E": E}
    state = mp.initial_state((E.shape[1],))
    for k in range(1, E.shape[0]):
        res = mp.update(E[k], state, time=float(k), time_old=float(k - 1))
        assert bool(res.converged.all())
        ref[f"step{k}/stress"] = res.stress
        ref[f"step{k}/tangent"] = res.tangent
        ref.update({f"step{k}/state/{n}": v for n, v in res.state.items()})
        state = mp.roll(res.state)
    e = E[4].repeat(2, 1)
    e[4, 1] = float("nan")
    res = mp.update(e, mp.initial_state((6,)))
    assert res.converged.tolist() == [True, True, True, True, False, True]
    ref["fail/E"] = e
    ref["fail/converged"] = res.converged.to(torch.float64)
    ref["fail/stress"] = res.stress
    ref["fail/tangent"] = res.tangent
    ref.update({f"fail/state/{n}": v for n, v in res.state.items()})
    return ref


def routes(out: Path, names: list[str] | None = None) -> int:
    """Compile and reference the cases *names* (default: all of ``CASES``) into *out*."""
    try:
        import neml2
        from neml2.compiler import CompileOptions, compile_file
    except ImportError as e:
        print(f"make_artifact --routes: the neml2 packages are not importable ({e}); skipped")
        return SKIP
    if not SOLID.is_dir():
        print(f"make_artifact --routes: {SOLID} not found; skipped")
        return SKIP
    unknown = [n for n in names or [] if n not in CASES]
    if unknown:
        print(
            f"make_artifact --routes: unknown case(s) {', '.join(unknown)}; "
            f"cases are: {', '.join(CASES)}",
            file=sys.stderr,
        )
        return 2
    out.mkdir(parents=True, exist_ok=True)
    listing = []
    for name in names or list(CASES):
        src, model, pairs, params, make_inputs = CASES[name]
        if src is None:
            src = out / f"{name}.i"
            src.write_text(ELASTICITY)
        opts = CompileOptions.from_strings(model, pairs, params)
        res = compile_file(src, opts, out / name, cache_dir=CACHE, progress=print)
        meta = res.metadata
        sub = {v["name"]: v["sub_batch"] for v in meta["inputs"]}
        eager = neml2.load_model(src, model)
        cases = []
        for n in BATCHES:
            x, t = make_inputs(n, torch.Generator().manual_seed(n))
            ref = _eager_reference(
                eager, x, t, [(d["output"], d["input"]) for d in meta["derivatives"]], sub
            )
            tensors = {
                **{f"input/{k}": v for k, v in x.items()},
                **{f"tangent/{k}": v for k, v in t.items()},
                **ref,
            }
            stem = out / "ref" / name / f"b{n}"
            save_tensors(stem, tensors)
            cases.append(str(stem.relative_to(out)))
        entry = {"name": name, "artifact": str(res.artifact_dir.relative_to(out)), "refs": cases}
        if name == "j2":  # test_material_point: neml2.MaterialPoint on py-eager
            stem = out / "ref" / name / "material_point"
            save_tensors(stem, material_point_reference(eager))
            entry["material_point"] = str(stem.relative_to(out))
            entry["source"] = str(Path(src).resolve())  # cpp-eager loads the input file
        listing.append(entry)
        print(f"{name}: {len(cases)} reference batches")
    (out / "routes.json").write_text(json.dumps(listing, indent=1))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--routes":
        sys.exit(routes(Path(sys.argv[2]), sys.argv[3:]))
    print(build(Path(sys.argv[1])))
