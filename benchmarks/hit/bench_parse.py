"""Benchmark of the neml2.hit parser on a generated 10,000-line input.

Run from the repository root::

    uv run python benchmarks/hit/bench_parse.py            # writes benchmarks/hit/results.md
    uv run python benchmarks/hit/bench_parse.py --lines 50000 --repeat 3

The input mimics real NEML2 files: ``[Tensors]`` with multi-line ``'''``
Python expressions, ``[Models]`` with scalars, arrays and ``;`` matrices,
comments, blank lines and a few ``${...}`` substitutions. The script reports
the best of ``--repeat`` runs for parse, lossless render, canonical format and
the merged view, and writes a Markdown table next to itself.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "packages" / "neml2-hit" / "src"))
import neml2  # noqa: E402

if str(HERE.parents[1] / "packages" / "neml2-hit" / "src" / "neml2") not in neml2.__path__:
    neml2.__path__.append(str(HERE.parents[1] / "packages" / "neml2-hit" / "src" / "neml2"))
from neml2 import hit  # noqa: E402


def make_input(n_lines: int) -> str:
    """A realistic HIT input of about *n_lines* lines."""
    out = ["# generated benchmark input", "E0 = 2e5", "", "[Tensors]"]
    i = 0
    while len(out) < n_lines * 0.2:
        out += [
            f"  [t{i}]",
            "    type = Python",
            "    expr = '''",
            f"      SR2(torch.tensor([[{i}.0, 1, 2, 3, 4, 5],",
            "                        [0, 1, 2, 3, 4, 5]], dtype=torch.float64))",
            "    '''",
            "  []",
        ]
        i += 1
    out += ["[]", "", "[Models]"]
    i = 0
    while len(out) < n_lines - 2:
        out += [
            f"  # model number {i}",
            f"  [m{i}]",
            "    type = LinearIsotropicElasticity",
            "    coefficients = '${E0} 0.3'",
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO' # kinds",
            f"    weights = '1 -1 {i}; 2 3 4'",
            "    strain = 'forces/E'",
            "    rate_form = false",
            "",
            "  []",
        ]
        i += 1
    out += ["[]", ""]
    return "\n".join(out)


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", type=Path, default=HERE / "results.md")
    args = ap.parse_args(argv)

    text = make_input(args.lines)
    n_lines = text.count("\n")
    root = hit.parse(text, "bench.i")
    assert hit.render(root) == text
    n_params = sum(len(s.params()) for s in root.walk())
    rows = [
        ("parse (full)", best_of(lambda: hit.parse(text), args.repeat)),
        ("parse_tree (syntax only)", best_of(lambda: hit.parse_tree(text), args.repeat)),
        ("render (lossless)", best_of(lambda: hit.render(root), args.repeat)),
        ("format_node (canonical)", best_of(lambda: hit.format_node(root), args.repeat)),
        ("merged view", best_of(root.merged, args.repeat)),
    ]
    lines = [
        "# neml2-hit parser benchmark",
        "",
        f"Written by `benchmarks/hit/bench_parse.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        "",
        f"- input: {n_lines} lines, {len(text) / 1024:.0f} KiB, {n_params} parameters",
        f"- Python {platform.python_version()} on {platform.machine()} ({platform.system()}),"
        f" best of {args.repeat} runs",
        "",
        "| operation | time (ms) | lines / s |",
        "|---|---:|---:|",
    ]
    for name, secs in rows:
        lines.append(f"| {name} | {secs * 1e3:.1f} | {n_lines / secs:,.0f} |")
    report = "\n".join(lines) + "\n"
    args.output.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
