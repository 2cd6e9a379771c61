"""The six-route conformance matrix: every route x zoo model x operation against py-eager.

One test, parametrized over route x model x operation; each call evaluates batch sizes
1, 7 and 16 with fresh random inputs. Tolerance: 1e-10 relative to the largest entry of
each compared tensor (py-jit adds 1e-12 absolute: Inductor reorders sums). Capability
gaps come from the one table in _gaps.py as strict xfails.

Jacobians: the AOTI routes hold only the compiled ``-d`` pairs (``Case.pairs``); a block
w.r.t. a sub-batched input is the full coupling ``(*B, *out_sub, *out_base, *in_sub,
*in_base)`` there, and py-eager seeds the base only, so the compiled block is summed over
``in_sub`` before comparing (py-eager's block is that row sum).

Select routes with ``NEML2_ROUTES=cpp-eager,py-jit`` (names of ``neml2.routes.NAMES``) and
models with ``NEML2_ROUTE_MODELS=elasticity,taylor`` (default: every zoo model); leave
out cells with ``NEML2_ROUTE_EXCLUDE=py-jit:taylor`` (a route of a model) or
``py-jit:chaboche:jvp`` (one operation). The
largest difference each cell saw, relative to its scale, goes into the table the session
prints at its end (conftest.py).
"""

from __future__ import annotations

import functools
import os

import pytest
import torch
from _gaps import gap
from _zoo import CASES

import neml2.routes
from neml2.tensors import FatalError

ROUTES = neml2.routes.NAMES

OPS = ("forward", "jvp", "jacobian")
BATCHES = (1, 7, 16)


def _selected_routes() -> tuple[str, ...]:
    try:
        chosen = neml2.routes.parse(os.environ.get("NEML2_ROUTES", ""), what="NEML2_ROUTES")
    except FatalError as e:
        raise pytest.UsageError(str(e)) from None
    return tuple(r.name for r in chosen)


def _selected_models() -> tuple[str, ...]:
    env = os.environ.get("NEML2_ROUTE_MODELS", "").strip()
    if not env or env == "all":
        return tuple(CASES)
    chosen = tuple(m.strip() for m in env.split(",") if m.strip())
    unknown = [m for m in chosen if m not in CASES]
    if unknown:
        raise pytest.UsageError(
            f"NEML2_ROUTE_MODELS: unknown model(s) {unknown}; models: {tuple(CASES)}"
        )
    return chosen


@functools.cache
def _excluded() -> frozenset[tuple[str, str, str | None]]:
    """``NEML2_ROUTE_EXCLUDE=py-jit:taylor,py-jit:chaboche:jvp,...``: cells left out of
    the matrix, not collected: ``ROUTE:MODEL`` (every operation) or ``ROUTE:MODEL:OP``
    (one operation; None in the set stands for every operation); the route ``@artifact``
    stands for every route that runs an AOTI artifact (``neml2.routes``: they share one
    compile). The default ``integration`` session leaves out compiles of many minutes
    that ``nox -s routes`` runs. Read once per process (every cell asks)."""
    out = set()
    artifact_routes = [r.name for r in neml2.routes.ROUTES if r.artifact]
    for item in os.environ.get("NEML2_ROUTE_EXCLUDE", "").split(","):
        if not item.strip():
            continue
        parts = [p.strip() for p in item.split(":")]
        route, model, op = [*parts, None][:3] if len(parts) in (2, 3) else (None,) * 3
        routes = artifact_routes if route == "@artifact" else [route]
        if (
            not set(routes) <= set(ROUTES)
            or model not in CASES
            or (op is not None and op not in OPS)
        ):
            raise pytest.UsageError(
                f"NEML2_ROUTE_EXCLUDE: {item.strip()!r} is not ROUTE:MODEL or "
                f"ROUTE:MODEL:OP (routes: {ROUTES} or @artifact; models: {tuple(CASES)}; "
                f"ops: {OPS})"
            )
        out.update((r, model, op) for r in routes)
    return frozenset(out)


def excluded(route: str, model: str, op: str) -> bool:
    """Whether NEML2_ROUTE_EXCLUDE leaves the cell (*route*, *model*, *op*) out."""
    left_out = _excluded()
    return (route, model, None) in left_out or (route, model, op) in left_out


def _params():
    out = []
    for route in _selected_routes():
        for model in _selected_models():
            for op in OPS:
                if excluded(route, model, op):
                    continue
                reason = gap(route, model, op)
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                out.append(pytest.param(route, model, op, marks=marks, id=f"{route}-{model}-{op}"))
    return out


def _flat(op: str, res) -> dict[str, torch.Tensor]:
    """A route's result as ``{key: tensor}``: ``out/<y>``, ``jvp/<y>``, ``J/<y>/<x>``."""
    if op == "forward":
        return {f"out/{k}": v for k, v in res.items()}
    out, d = res
    flat = {f"out/{k}": v for k, v in out.items()}
    if op == "jvp":
        flat.update({f"jvp/{k}": v for k, v in d.items()})
    else:
        flat.update({f"J/{o}/{i}": b for o, blocks in d.items() for i, b in blocks.items()})
    return flat


def _close(got, want, what: str, scale: float, atol: float, rel: float = 1e-10, seen=None) -> None:
    """``|got - want| <= rel * scale + atol``; *scale*: the largest entry of this tensor
    over the largest batch (a value near zero at one point, e.g. a flow rate of 1e-19 in
    the elastic range, is judged against the output's magnitude, not its own). *seen*:
    the cell's record (conftest.py), given the difference relative to *scale* before
    the check (NaN when a side is not finite)."""
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if seen is not None and got.numel():
        diff = float((got - want).abs().max()) / max(scale, 1e-300)
        seen.see(diff if diff == diff and bool(torch.isfinite(got).all()) else float("nan"))
    torch.testing.assert_close(
        got, want, rtol=0.0, atol=rel * scale + atol + 1e-300, msg=lambda m: f"{what}: {m}"
    )


def _scales(case, op: str, big) -> dict[str, float]:
    """Per key, the magnitude a difference is judged against: the largest entry over the
    largest batch, at least ``|y| / max(|x|, 1)`` for a block ``J/y/x`` and ``|y|`` for ``jvp/y``
    (blocks that are zero up to round-off, e.g. a rate-independent model w.r.t. time)."""
    flat = _flat(op, big)
    mag = {k: float(v.abs().max()) if v.numel() else 0.0 for k, v in flat.items()}
    xs = {k: float(v.abs().max()) for k, v in case.inputs(max(BATCHES)).items()}
    out = {}
    for k, m in mag.items():
        kind, _, rest = k.partition("/")
        if kind == "jvp":
            m = max(m, mag[f"out/{rest}"])
        elif kind == "J":
            y, x = rest.split("/", 1)
            m = max(m, mag[f"out/{y}"] / max(xs[x], 1.0))
        out[k] = m
    return out


def _reduce_sub(case, name: str, base: int, block: torch.Tensor, want: torch.Tensor):
    """Sum a compiled block over input *name*'s sub-batch axes (see the module docstring);
    *base*: the number of base axes of the input."""
    sub = case.sub_batch.get(name, ())
    if block.shape == want.shape or not sub or block.dim() != want.dim() + len(sub):
        return block
    dims = tuple(range(block.dim() - base - len(sub), block.dim() - base))
    return block.sum(dims)


def _row(tree, i):
    return torch.utils._pytree.tree_map(lambda t: t[i : i + 1], tree)


@pytest.mark.parametrize(("route", "model", "op"), _params())
def test_route_matches_py_eager(route_models, reference, route_cell, route, model, op):
    case = CASES[model]
    m = route_models(route, model)
    scales = _scales(case, op, reference(model, op, max(BATCHES)))
    if route == "py-eager":
        # the reference itself: its batched result must equal point-by-point evaluation;
        # a batched Newton stops when its worst point converges, so with a solve the
        # points agree to the solver's tolerance (1e-6 of the magnitude), not round-off
        solves = any(hasattr(getattr(s, "solver", None), "solve") for s in m.impl.modules())
        rel = 1e-6 if solves else 1e-10
        n = 7
        x, t, want = case.inputs(n), case.tangents(n), _flat(op, reference(model, op, n))
        for i in range(n):
            xi = _row(x, i)
            got = _flat(op, m.jvp(xi, _row(t, i)) if op == "jvp" else getattr(m, op)(xi))
            assert set(got) == set(want)
            for k, v in got.items():
                what = f"point {i} of {n}: {k}"
                _close(v, want[k][i : i + 1], what, scales[k], 0.0, rel, route_cell)
        return
    atol = 1e-12 if route == "py-jit" else 0.0
    pairs = [tuple(p.split(":")) for p in case.pairs]
    required = (
        {f"out/{y}" for y in m.impl.output_names} if hasattr(m.impl, "output_names") else set()
    )
    if op == "jvp":
        # a compiled jvp gives the outputs with a compiled pair for every tangent's input
        # (the others need blocks that were not compiled; the runtimes leave them out)
        given = set(case.jvp_inputs)
        required |= {f"jvp/{y}" for y, _ in pairs if given <= {i for o, i in pairs if o == y}}
    elif op == "jacobian":
        required |= {f"J/{y}/{x}" for y, x in pairs}
    spec = route_models("py-eager", model).impl.input_spec
    for n in BATCHES:
        x = case.inputs(n)
        want = _flat(op, reference(model, op, n))
        res = (
            m.forward(x)
            if op == "forward"
            else (m.jvp(x, case.tangents(n)) if op == "jvp" else m.jacobian(x))
        )
        got = _flat(op, res)
        assert {k for k in want if k.startswith("out/")} == {
            k for k in got if k.startswith("out/")
        }, f"outputs differ: {sorted(got)} vs {sorted(want)}"
        assert required <= set(got), f"missing {sorted(required - set(got))}"
        for k, v in got.items():
            if k.startswith("J/"):
                i = k.split("/", 2)[2]
                v = _reduce_sub(case, i, len(spec[i].BASE_SHAPE), v, want[k])
            _close(v, want[k], f"n={n} {k}", scales[k], atol, seen=route_cell)
