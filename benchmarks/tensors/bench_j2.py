"""Overhead of the typed layer (neml2.tensors) vs raw torch for elasticity + J2 return map.

One radial-return step with linear isotropic hardening, batch 1e5 (float64, CPU):
elastic predictor ``s = C : (eps - ep)``, von Mises ``q = sqrt(3/2 dev:dev)``, yield
``f = q - (sy + H alpha)``, ``dg = <f> / (3G + H)``, flow ``n = 3/2 dev / q``, update
``ep``, ``alpha`` and the stress. The same math is written twice: with raw torch tensors
and with the typed wrappers. Timed eager and after ``torch.compile`` (Inductor).

Usage::

    uv run python benchmarks/tensors/bench_j2.py [--batch 100000] [--reps 200] [--threads 1]
        [--no-compile]

Writes ``results.json`` and ``results.md`` next to this script.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch

import neml2.tensors as nt
from neml2.tensors import SR2, SSR4, Scalar

E, NU, SY, H = 200e3, 0.3, 250.0, 1000.0
G = E / (2 * (1 + NU))
K = E / (3 * (1 - 2 * NU))


# ----------------------------------------------------------------------------- raw torch
def stiffness_raw(dtype):
    one = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=dtype)
    ivol = torch.outer(one, one) / 3.0
    return 3 * K * ivol + 2 * G * (torch.eye(6, dtype=dtype) - ivol)


def j2_raw(eps, ep, alpha, C):
    s_tr = torch.einsum("...ij,...j->...i", C, eps - ep)
    tr = s_tr[..., 0] + s_tr[..., 1] + s_tr[..., 2]
    t = tr / 3.0
    z = torch.zeros_like(t)
    dev = s_tr - torch.stack([t, t, t, z, z, z], -1)
    q = torch.sqrt(1.5 * (dev * dev).sum(-1))
    f = q - (SY + H * alpha)
    dg = torch.clamp(f, min=0.0) / (3.0 * G + H)
    n = 1.5 * dev / q.unsqueeze(-1)
    ep_new = ep + dg.unsqueeze(-1) * n
    alpha_new = alpha + dg
    s = torch.einsum("...ij,...j->...i", C, eps - ep_new)
    return s, ep_new, alpha_new


# ----------------------------------------------------------------------------- typed
def j2_typed(eps: SR2, ep: SR2, alpha: Scalar, C: SSR4):
    s_tr = C.matmul(eps - ep)  # ``C @ (eps - ep)``; method form so Dynamo can trace it
    dev = s_tr.dev()
    q = nt.sqrt(1.5 * dev.norm_sq())
    f = q - (SY + H * alpha)
    dg = nt.macaulay(f) / (3.0 * G + H)
    n = 1.5 * dev / q
    ep_new = ep + dg * n
    alpha_new = alpha + dg
    s = C.matmul(eps - ep_new)
    return s, ep_new, alpha_new


def inputs(batch, dtype):
    g = torch.Generator().manual_seed(0)
    eps = torch.rand(batch, 6, generator=g, dtype=dtype) * 4e-3 - 2e-3
    ep = torch.rand(batch, 6, generator=g, dtype=dtype) * 1e-4
    alpha = torch.rand(batch, generator=g, dtype=dtype) * 1e-3
    return eps, ep, alpha


def aten_ops(fn, args) -> dict[str, int]:
    """ATen op counts of the forward graph that torch.compile hands to Inductor."""
    import collections

    from torch._functorch.aot_autograd import aot_module_simplified

    seen: list[collections.Counter] = []

    def backend(gm, example_inputs):
        def fw(g, _):
            nodes = (n for n in g.graph.nodes if n.op == "call_function")
            seen.append(collections.Counter(str(n.target) for n in nodes))
            return g.forward

        return aot_module_simplified(gm, example_inputs, fw_compiler=fw)

    torch._dynamo.reset()
    torch.compile(fn, fullgraph=True, backend=backend)(*args)
    torch._dynamo.reset()
    return dict(sorted(seen[0].items()))


def paired(fa, aa, fb, ab, reps):
    """Time the two candidates back to back, alternating which goes first.

    The machine is shared and its load drifts; pairing each typed call with a raw call
    taken right next to it cancels most of that drift. Returns per-pair times.
    """
    for _ in range(3):
        fa(*aa)
        fb(*ab)
    ta, tb = [], []
    for i in range(reps):
        order = ((fa, aa, ta), (fb, ab, tb)) if i % 2 == 0 else ((fb, ab, tb), (fa, aa, ta))
        for f, a, acc in order:
            t0 = time.perf_counter()
            f(*a)
            acc.append(time.perf_counter() - t0)
    return ta, tb


def summary(ta, tb) -> dict:
    ratios = sorted(b / a for a, b in zip(ta, tb, strict=True))
    q = statistics.quantiles(ratios, n=4)
    return {
        "raw_ms_median": statistics.median(ta) * 1e3,
        "typed_ms_median": statistics.median(tb) * 1e3,
        "raw_ms_min": min(ta) * 1e3,
        "typed_ms_min": min(tb) * 1e3,
        "overhead_pct_paired_median": (statistics.median(ratios) - 1) * 100,
        "overhead_pct_paired_q1": (q[0] - 1) * 100,
        "overhead_pct_paired_q3": (q[2] - 1) * 100,
        "overhead_pct_of_medians": (statistics.median(tb) / statistics.median(ta) - 1) * 100,
        "pairs": len(ta),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("results.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = torch.float64

    eps, ep, alpha = inputs(args.batch, dtype)
    C_raw = stiffness_raw(dtype)
    raw_args = (eps, ep, alpha, C_raw)
    typed_args = (SR2(eps), SR2(ep), Scalar(alpha), SSR4.isotropic_E_nu(E, NU, dtype=dtype))

    # same results
    r, t = j2_raw(*raw_args), j2_typed(*typed_args)
    for a, b in zip(r, t, strict=True):
        torch.testing.assert_close(a, b.data)

    results = {
        "case": "elasticity + J2 radial return (linear isotropic hardening), one step",
        "batch": args.batch,
        "dtype": str(dtype),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or platform.platform(),
    }
    results["eager"] = summary(*paired(j2_raw, raw_args, j2_typed, typed_args, args.reps))
    print(json.dumps(results["eager"], indent=2))

    if not args.no_compile:
        ops_raw, ops_typed = aten_ops(j2_raw, raw_args), aten_ops(j2_typed, typed_args)
        results["aten_graph"] = {
            "raw_ops": sum(ops_raw.values()),
            "typed_ops": sum(ops_typed.values()),
            "identical_op_counts": ops_raw == ops_typed,
            "typed": ops_typed,
        }
        print(json.dumps(results["aten_graph"], indent=2))
        craw = torch.compile(j2_raw, fullgraph=True)
        ctyped = torch.compile(j2_typed, fullgraph=True)
        r, t = craw(*raw_args), ctyped(*typed_args)
        for a, b in zip(r, t, strict=True):
            torch.testing.assert_close(a, b.data)
        results["compiled"] = summary(*paired(craw, raw_args, ctyped, typed_args, args.reps))
        print(json.dumps(results["compiled"], indent=2))

    args.out.write_text(json.dumps(results, indent=2) + "\n")
    md = [
        f"# {results['case']}",
        "",
        f"batch {args.batch}, {dtype}, {results['threads']} threads, torch {torch.__version__}",
        "",
        "Overhead = median over back-to-back (raw, typed) pairs of typed/raw - 1, with the",
        "interquartile range of the pair ratios (the machine is shared: see the JSON).",
        "",
        "| mode | raw torch (ms, median) | typed (ms, median) | overhead (paired median) | IQR |",
        "|---|---|---|---|---|",
    ]
    for mode in ("eager", "compiled"):
        if mode in results:
            m = results[mode]
            md.append(
                f"| {mode} | {m['raw_ms_median']:.3f} | {m['typed_ms_median']:.3f} | "
                f"{m['overhead_pct_paired_median']:+.1f} % | "
                f"{m['overhead_pct_paired_q1']:+.1f} % .. {m['overhead_pct_paired_q3']:+.1f} % |"
            )
    if "aten_graph" in results:
        g = results["aten_graph"]
        md += [
            "",
            f"ATen graph handed to Inductor: raw {g['raw_ops']} ops, typed {g['typed_ops']} ops, "
            f"identical op counts: {g['identical_op_counts']} (the typed layer traces away).",
        ]
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
