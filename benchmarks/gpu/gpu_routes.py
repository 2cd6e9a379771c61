"""The route matrix on one device against py-eager on the CPU (issue #65).

    python benchmarks/gpu/gpu_routes.py --device cuda --out routes.jsonl

The matrix of ``tests-integration/routes`` (forward, jvp and Jacobian at batches 1, 7
and 16, the same zoo models and inputs) has no device option: every route runs on the
CPU there. This driver runs each route with its model, artifact and inputs on
``--device`` and compares it with py-eager on the CPU, on the same (CPU-built) inputs:

- py-eager: ``neml2.load_model(..., device=)``
- py-jit: ``neml2.compile`` (Inductor) of that model
- py-aoti: the artifact's HIT stub loaded with ``neml2.load_model(..., device=)``
- cpp-aoti: ``neml2.aoti.Model(artifact, device=)``
- cpp-dispatch: ``neml2.aoti.DispatchedModel`` with one worker, the device itself

The artifact is compiled for ``--device`` only (``neml2-compile --device``), with the
matrix's Jacobian pairs, into ``--artifacts`` (content-hashed cache ``--cache-dir``).
Tolerance, relative to the largest entry of each compared tensor (as in the matrix):
1e-10 for a model without a nonlinear solve; 1e-6 for one with a solve (the stopping
test can end one iteration apart on two devices' round-off; the matrix allows the
same when it compares a batched solve with point-by-point ones); py-jit adds 1e-12
absolute (Inductor reorders sums). A difference that is NaN or infinite fails.

Each cell is one JSON line in ``--out``, written as soon as it is known, so a run cut
short keeps the cells it finished: ``{"route", "model", "op", "device", "status"
("pass", "FAIL", "error"), "worst", "tol", "seconds", "note"}``. Cells run cheapest
first: py-eager of every model, then per model its compile and the three compiled
routes, then py-jit. Exit status 0 when every cell passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MATRIX = ROOT / "tests-integration" / "routes"

import neml2.routes  # noqa: E402  (the one list of routes)

#: the routes of neml2.routes but cpp-eager (the C++ host of py-eager's Python models:
#: nothing of its own on the GPU)
ROUTES = tuple(r.name for r in neml2.routes.ROUTES if r.name != "cpp-eager")
MODELS = ("elasticity", "j2_isoharden", "chaboche")
OPS = ("forward", "jvp", "jacobian")
BATCHES = (1, 7, 16)
#: the routes that run a compiled artifact
COMPILED = tuple(r.name for r in neml2.routes.ROUTES if r.artifact)


def tolerance(route: str, solves: bool) -> tuple[float, float]:
    """``(relative, absolute)`` tolerance of a cell (see the module docstring)."""
    return (1e-6 if solves else 1e-10), (1e-12 if route == "py-jit" else 0.0)


def worst_difference(got, want, scale: float) -> float:
    """``max|got - want| / scale`` over two CPU tensors; NaN when either is not finite
    everywhere (so that ``not (err <= tol)`` fails it)."""
    import torch

    if got.numel() == 0:
        return 0.0
    if not (bool(torch.isfinite(got).all()) and bool(torch.isfinite(want).all())):
        return math.nan
    return float((got - want).abs().max()) / max(scale, 1e-300)


def worse(worst: float | None, err: float) -> float:
    """The larger of two differences; a NaN, once seen, stays."""
    if worst is None or err != err or (worst == worst and err > worst):
        return err
    return worst


def judge_batch(n, got, want, scales, rel, atol, worst=None, reduce=None):
    """One batch of one cell: *got* (the route's, on the CPU) against *want* (py-eager on
    the CPU), flat ``{key: tensor}`` as the matrix's ``_flat`` makes them. Every output
    of *want* must be in *got*; a key of *got* that *want* has is compared (a compiled
    route holds only its compiled Jacobian pairs). *reduce(key, block, want)*: a compiled
    block summed over its input's sub-batch axes (the matrix's ``_reduce_sub``).

    Returns:
        ``(status, worst, note)``: ``"pass"`` or ``"FAIL"``, the largest difference
        relative to each key's scale so far (NaN once a side was not finite), and what
        failed first.
    """
    missing = sorted(k for k in want if k.startswith("out/") and k not in got)
    extra = sorted(k for k in got if k.startswith("out/") and k not in want)
    if missing or extra:
        return "FAIL", worst, f"n={n}: outputs missing {missing}, unexpected {extra}"
    status, note = "pass", ""
    for k, v in got.items():
        if k not in want:
            continue
        if reduce is not None:
            v = reduce(k, v, want[k])
        if v.shape != want[k].shape:
            return "FAIL", worst, f"n={n} {k}: shape {tuple(v.shape)} != {tuple(want[k].shape)}"
        err = worst_difference(v, want[k], scales[k])
        worst = worse(worst, err)
        # the absolute tolerance as a relative one on this tensor's scale
        tol = rel + atol / max(scales[k], 1e-300)
        if not (err <= tol) and status == "pass":
            status, note = "FAIL", f"n={n} {k}: {err:.3g} > {tol:.3g}"
    return status, worst, note


#: the matrix's modules, by their names there
MATRIX_MODULES = ("_zoo", "_gaps", "test_routes")


def matrix_helpers():
    """The route matrix's zoo and comparison helpers, imported from tests-integration/routes;
    a module of the same name imported from elsewhere is set aside meanwhile."""
    saved = {n: sys.modules.pop(n) for n in MATRIX_MODULES if n in sys.modules}
    sys.path.insert(0, str(MATRIX))
    try:
        from _zoo import CASES
        from test_routes import _flat, _reduce_sub, _scales

        return CASES, _flat, _scales, _reduce_sub
    finally:
        sys.path.remove(str(MATRIX))
        for n in MATRIX_MODULES:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def reduce(case, spec, reduce_sub):
    """``reduce(key, block, want)`` for :func:`judge_batch`: a Jacobian block ``J/y/x``
    summed over *x*'s sub-batch axes where the compiled block has them."""

    def fn(key, block, want):
        if not key.startswith("J/"):
            return block
        x = key.split("/", 2)[2]
        return reduce_sub(case, x, len(spec[x].BASE_SHAPE), block, want)

    return fn


def cell_order(models, routes) -> list[tuple[str, str]]:
    """``(route, model)`` in the order they run: cheapest first (see the docstring)."""
    order = [("py-eager", m) for m in models if "py-eager" in routes]
    order += [(r, m) for m in models for r in COMPILED if r in routes]
    order += [("py-jit", m) for m in models if "py-jit" in routes]
    return order


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", help="cuda (the GPU run) or cpu (a check)")
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--routes", nargs="+", choices=ROUTES, default=list(ROUTES))
    p.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    p.add_argument("--out", type=Path, required=True, help="JSON lines, one per cell")
    p.add_argument("--artifacts", type=Path, help="default build/gpu-routes/<device>")
    p.add_argument("--cache-dir", type=Path, default=ROOT / "build" / "aoti-cache")
    a = p.parse_args(argv)
    if a.artifacts is None:
        a.artifacts = ROOT / "build" / "gpu-routes" / a.device
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    import torch

    import neml2

    CASES, _flat, _scales, _reduce_sub = matrix_helpers()

    unknown = [m for m in a.models if m not in CASES]
    if unknown:
        print(f"gpu_routes.py: unknown model(s) {unknown}; zoo: {sorted(CASES)}", file=sys.stderr)
        return 2
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"gpu_routes.py: --device {a.device}: torch sees no CUDA device", file=sys.stderr)
        return 2
    dev = a.device
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("")

    def to_dev(tree):
        return {k: v.to(dev) for k, v in tree.items()}

    def to_cpu(flat):
        return {k: v.detach().to("cpu") for k, v in flat.items()}

    def call(adapter, op, x, t):
        if op == "forward":
            return adapter.forward(x)
        return adapter.jvp(x, t) if op == "jvp" else adapter.jacobian(x)

    # py-eager on the CPU: the judge of every cell, memoized per (model, op, batch)
    cpu_models: dict = {}
    memo: dict = {}

    def cpu_model(name):
        if name not in cpu_models:
            case = CASES[name]
            cpu_models[name] = neml2.routes.open_model(
                "py-eager", case.file, case.model, sub_batch=case.sub_batch, no_grad=True
            )
        return cpu_models[name]

    def reference(name, op, n):
        key = (name, op, n)
        if key not in memo:
            case = CASES[name]
            memo[key] = call(cpu_model(name), op, case.inputs(n), case.tangents(n))
        return memo[key]

    artifacts: dict = {}

    def artifact(name):
        if name not in artifacts:
            case = CASES[name]
            try:
                artifacts[name] = neml2.routes.build_artifact(
                    case.file,
                    case.model,
                    pairs=case.pairs,
                    sub_batch=case.sub_batch,
                    output_dir=a.artifacts / case.name,
                    cache_dir=a.cache_dir,
                    device=dev,
                )
            except Exception as e:  # every compiled route of this model fails the same way
                artifacts[name] = e
        if isinstance(artifacts[name], Exception):
            raise artifacts[name]
        return artifacts[name]

    def build(route, name):
        case = CASES[name]
        art = artifact(name) if route in COMPILED else None
        workers = [dev if ":" in dev or dev == "cpu" else f"{dev}:0"]
        return neml2.routes.open_model(
            route,
            case.file,
            case.model,
            sub_batch=case.sub_batch,
            artifact=art,
            device=dev,
            workers=workers,
            no_grad=True,
        )

    failed = 0
    for route, name in cell_order(a.models, a.routes):
        case = CASES[name]
        t0 = time.perf_counter()
        try:
            adapter, built = build(route, name), ""
        except Exception as e:
            adapter, built = None, f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        judge = cpu_model(name)
        solves = any(hasattr(getattr(s, "solver", None), "solve") for s in judge.impl.modules())
        rel, atol = tolerance(route, solves)
        spec = judge.impl.input_spec
        for op in a.ops:
            t_op = time.perf_counter()
            worst, status, note = None, "pass", ""
            if adapter is None:
                status, note = "error", built
            else:
                try:
                    scales = _scales(case, op, reference(name, op, max(BATCHES)))
                    for n in BATCHES:
                        x, t = case.inputs(n), case.tangents(n)
                        want = _flat(op, reference(name, op, n))
                        got = to_cpu(_flat(op, call(adapter, op, to_dev(x), to_dev(t))))
                        status, worst, note = judge_batch(
                            n, got, want, scales, rel, atol, worst, reduce(case, spec, _reduce_sub)
                        )
                        if status != "pass":
                            break
                except Exception as e:
                    status = "error"
                    note = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
            cell = {
                "route": route,
                "model": name,
                "op": op,
                "device": dev,
                "status": status,
                "worst": worst,
                "tol": rel,
                "seconds": round(time.perf_counter() - (t0 if op == a.ops[0] else t_op), 3),
                "note": note,
            }
            failed += status != "pass"
            with a.out.open("a") as f:
                f.write(json.dumps(cell) + "\n")
            shown = "-" if worst is None else f"{worst:.2e}"
            print(f"{route:12s} {name:14s} {op:9s} {status:5s} {shown} {note}", flush=True)
        if dev.startswith("cuda"):
            torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
