"""``neml2-compile INPUT.i --model NAME [options] [overrides...]``.

Exit status: 0 success, 1 fatal error (bad input, bad option, failed export),
2 bad command line (argparse). ``--version`` prints the versions of every neml2
package and torch.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from neml2.compiler._compile import (
    EXAMPLE_BATCH,
    compile_model,
    default_cache_dir,
)
from neml2.compiler._options import CompileOptions
from neml2.hit._cli_support import add_version_argument, input_problem
from neml2.tensors import FatalError

EXIT_FATAL = 1


def compile_file(
    path: str | Path,
    options: CompileOptions,
    output_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    **kwargs,
):
    """Load ``[Models]/<options.model>`` from the HIT file *path* and compile it.

    *output_dir* defaults to the input file's directory. Keyword arguments go to
    :func:`neml2.compiler.compile_model` (``cache_dir``, ``use_cache``, ``progress``...).
    """
    from neml2.models import load_input

    ctx = load_input(path, overrides)
    if ctx.section("Models") is None:
        raise FatalError(f"{path}: no [Models] section; cannot load model '{options.model}'")
    model = ctx.top_model(options.model)
    # [Settings]/example_batch_shape declares sub-batch shapes (the '; sub' part)
    declared = {}
    for name in (*model.input_spec, *model.output_spec):
        shape = ctx.example_batch_shape(name)
        if shape is not None and shape[1]:
            declared[name] = tuple(shape[1])
    if declared:
        options = replace(options, sub_batch={**declared, **options.sub_batch})
    out = Path(output_dir) if output_dir is not None else Path(path).resolve().parent
    from neml2 import hit

    text = hit.render(ctx.root) + "\n# overrides: " + " ".join(overrides)
    kwargs.setdefault("source_text", text)
    return compile_model(model, options, out, source=str(path), **kwargs)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="neml2-compile",
        description="Compile [Models]/NAME of a HIT input file into an AOTI artifact "
        "(DIR/NAME/metadata.json, DIR/NAME/<device>/<dtype>/*.pt2, DIR/NAME_aoti.i).",
    )
    add_version_argument(p, "neml2-compile")
    p.add_argument("input", help="HIT input file")
    p.add_argument("overrides", nargs="*", help="HIT overrides, e.g. Models/elasticity/E=2e5")
    p.add_argument("--model", required=True, help="the [Models] block to compile")
    p.add_argument("--output-dir", "-o", help="artifact directory (default: next to INPUT)")
    p.add_argument("--device", action="append", help="cpu (default) and/or cuda; repeatable")
    p.add_argument("--dtype", action="append", help="float64 (default) or float32; repeatable")
    p.add_argument(
        "-d",
        dest="derivatives",
        action="append",
        default=[],
        metavar="OUT:IN",
        help="compile the Jacobian block(s) OUT:IN (stress:strain, stress:, :strain, :)",
    )
    p.add_argument(
        "-p",
        dest="parameters",
        action="append",
        default=[],
        metavar="PARAM",
        help="promote a parameter (e.g. elasticity.E) to a runtime input; repeatable",
    )
    p.add_argument(
        "--write-into",
        action="store_true",
        help="also compile forward_into: the forward graph writing into caller-provided "
        "outputs (Model::forward_into; DispatchedModel on CPU workers then stores every "
        "chunk in place instead of copying it; one more graph to compile)",
    )
    p.add_argument(
        "--example-batch-shape",
        type=int,
        default=None,
        metavar="N",
        help="batch size of the example inputs used for export, also Inductor's size hint "
        f"(>= 2; default {EXAMPLE_BATCH}: from about 1000 points on, kernels get an OpenMP "
        "parallel region)",
    )
    p.add_argument(
        "--cache-dir",
        help=f"compile cache (default: $NEML2_COMPILE_CACHE or {default_cache_dir()})",
    )
    p.add_argument("--no-cache", action="store_true", help="neither read nor fill the cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    a = p.parse_args(argv)

    def say(msg: str) -> None:
        if not a.quiet:
            print(msg, flush=True)

    try:
        problem = input_problem(a.input, "INPUT")  # a directory or FIFO: no open, no hang
        if problem is not None:
            raise FatalError(problem)
        opts = CompileOptions.from_strings(
            a.model, a.derivatives, a.parameters, a.device, a.dtype, write_into=a.write_into
        )
        t0 = time.perf_counter()
        res = compile_file(
            a.input,
            opts,
            a.output_dir,
            a.overrides,
            cache_dir=a.cache_dir,
            use_cache=not a.no_cache,
            example_batch=a.example_batch_shape,
            progress=say,
        )
        say(
            f"neml2-compile: {len(res.graphs)} graph(s), {res.cache_hits} from the cache, "
            f"{time.perf_counter() - t0:.1f} s"
        )
    except FatalError as e:
        print(f"neml2-compile: error: {e}", file=sys.stderr)
        return EXIT_FATAL
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
