"""``neml2-compile INPUT MODEL [options] [PATH=VALUE...]``.

MODEL, the ``[Models]`` block to compile, is the one argument after INPUT without
``=``; every other one is a HIT override, which always has one. ``--model NAME``, the
older spelling, is still accepted (the same name may be given both ways).

Exit status: 0 success, 1 fatal error (bad input, bad option, failed export),
2 bad command line (argparse, a missing or doubled MODEL, an ``--output-dir`` or
``--cache-dir`` that cannot take files), 130 / 143 interrupted by SIGINT / SIGTERM (one
line on stderr; the artifact is built aside and renamed into place complete, so an
interrupted compile leaves the previous artifact or none).
``--version`` prints the versions of every neml2 package and torch.

The command line and its folders are checked before torch is imported (an error there
takes a fraction of a second, not the seconds torch takes to load).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# no torch up to the folder checks: neml2.hit and these modules import none
from neml2.compiler._defaults import EXAMPLE_BATCH, default_cache_dir
from neml2.compiler._torch_notices import torch_notices_hidden
from neml2.hit import file_kind
from neml2.hit._cli_support import add_version_argument, error_line, input_problem

if TYPE_CHECKING:
    from neml2.compiler._compile import CompileResult
    from neml2.compiler._options import CompileOptions

EXIT_FATAL = 1
#: a bad command line: argparse's status, and an output or cache folder that cannot be used
EXIT_USAGE = 2


def compile_model(*args, **kwargs) -> CompileResult:
    """:func:`neml2.compiler.compile_model`, imported when first called (it loads torch)."""
    from neml2.compiler._compile import compile_model

    return compile_model(*args, **kwargs)


def compile_file(
    path: str | Path,
    options: CompileOptions,
    output_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    **kwargs,
) -> CompileResult:
    """Load ``[Models]/<options.model>`` from the HIT file *path* and compile it.

    The file's ``[Settings] example_batch_shape`` sub-batch shapes are added to
    ``options.sub_batch`` (those of *options* win). The model is traced at the values
    the file's ``[Drivers]`` feed it (their sub-batch shapes where nothing is declared;
    :mod:`neml2.compiler._examples`), else at made-up values.

    Args:
        path: the HIT input file.
        options: what to build (``options.model`` names the ``[Models]`` block).
        output_dir: where the artifact and its stub go (default ``None``: the input
            file's directory).
        overrides: HIT overrides ``PATH=VALUE`` applied to the file before loading.
        **kwargs (Any): passed to :func:`neml2.compiler.compile_model` (``cache_dir``,
            ``use_cache``, ``example_batch``, ``progress``, ``examples``: other example
            inputs than the drivers').

    Returns:
        What :func:`neml2.compiler.compile_model` returns.

    Raises:
        FatalError: the file has no ``[Models]`` section, or loading or compiling
            fails (the message names the file and line where it can).
    """
    from neml2.compiler._source import load_for_compile

    # the model, [Settings]' sub-batch shapes, the example inputs of its [Drivers]
    loaded = load_for_compile(path, options, overrides)
    ctx, model, options = loaded.ctx, loaded.model, loaded.options
    say = kwargs.get("progress") or (lambda s: None)
    if not ctx.dynamic_batch():
        say(
            f"note: {path}: [Settings] dynamic_batch = false is read as true: every "
            "artifact takes any batch size (no static-batch compile is offered)"
        )
    for line in loaded.describe():
        say(line)
    out = Path(output_dir) if output_dir is not None else Path(path).resolve().parent
    from neml2 import hit

    text = hit.render(ctx.root) + "\n# overrides: " + " ".join(overrides)
    kwargs.setdefault("source_text", text)
    kwargs.setdefault("examples", loaded.examples.values or None)
    return compile_model(model, options, out, source=str(path), **kwargs)


#: ``neml2-compile --help``: how the arguments after INPUT are read, and the exit status.
EPILOG = """\
arguments after INPUT:
  The one argument without '=' is MODEL, the [Models] block to compile; every other
  one is a HIT override PATH=VALUE (an override always has '='). So
      neml2-compile model.i elasticity Models/elasticity/E=2e5
      neml2-compile model.i Models/elasticity/E=2e5 elasticity
  are the same. --model NAME is the older spelling of MODEL; giving both is an error
  unless they name the same block. Without MODEL the error lists the input's models.

exit status:
  0 success, 1 fatal error (bad input, bad option, failed export), 2 bad command line
  (also an --output-dir or --cache-dir that cannot take files), 130 interrupted by
  SIGINT, 143 by SIGTERM (the artifact folder is then the previous one or none: an
  artifact is built aside and renamed into place only when complete)
"""

#: The ``--help`` text of the overrides (the grammar is in EPILOG).
OVERRIDES_HELP = (
    "HIT overrides PATH=VALUE, e.g. Models/elasticity/E=2e5; '+PATH=VALUE' creates "
    "missing blocks and parameters"
)


def split_model_and_overrides(
    words: Sequence[str], option: str | None
) -> tuple[str | None, list[str]]:
    """Read the arguments after INPUT: the model name and the HIT overrides.

    Args:
        words: the positional arguments after INPUT, in order.
        option: the value of ``--model`` (None when not given).

    Returns:
        ``(model, overrides)``: the model is the one word without ``=`` (or *option*),
        None when neither names one; the overrides are the other words, in order.

    Raises:
        ValueError: two words without ``=``, an empty model name, or a MODEL and a
            ``--model`` that differ; the message says which words.
    """
    names = [w for w in words if "=" not in w]
    overrides = [w for w in words if "=" in w]
    if len(names) > 1:
        listed = ", ".join(repr(n) for n in names)
        raise ValueError(
            f"more than one MODEL: {listed}; give one [Models] block (a HIT override is "
            "PATH=VALUE, with '=')"
        )
    positional = names[0] if names else None
    if positional is not None and option is not None and positional != option:
        raise ValueError(
            f"MODEL {positional!r} and --model {option!r} name different blocks; give one"
        )
    model = positional if positional is not None else option
    if model is not None and not model.strip():
        raise ValueError("MODEL is empty; give the name of a [Models] block")
    return model, overrides


def models_of(path: str | Path, overrides: Sequence[str] = ()) -> str:
    """The ``[Models]`` blocks of the HIT file *path*, for the "no MODEL" message:
    ``"[Models] in PATH: a, b"``, or why they could not be listed."""
    from neml2 import hit

    try:
        root = hit.parse_file(path, overrides=overrides).merged()
    except (hit.HitError, OSError) as e:
        return f"could not list the models of {path}: {e}"
    sec = root.find("Models")
    names = [c.name for c in sec.children()] if sec is not None else []
    if not names:
        return f"{path} has no [Models] block"
    return f"[Models] in {path}: {', '.join(names)}"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``neml2-compile`` command (``neml2-compile --help`` describes it).

    SIGINT and SIGTERM stop it within a second (exit 130 / 143, one line on stderr);
    the artifact folder is then the previous one or none, never a part of one
    (:mod:`neml2.tensors.interrupt`; without *argv*, as a program, the compile runs in
    a supervised child process).

    Args:
        argv: the arguments after the program name (default ``None``: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 success, 1 fatal error, 2 bad command line (an unusable
            ``--output-dir`` or ``--cache-dir`` too, reported before torch loads),
            130 / 143 interrupted.
    """
    p = parser()
    # options may come between MODEL and the overrides
    a = p.parse_intermixed_args(argv)
    problem = folder_problem(a.output_dir, a.cache_dir, a.no_cache)
    if problem is not None:
        print(f"{p.prog}: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from neml2.tensors.interrupt import run_command

    return run_command("neml2-compile", lambda: _main(p, a), supervise=argv is None)


def parser() -> argparse.ArgumentParser:
    """The ``neml2-compile`` argument parser (``neml2-compile --help`` prints it)."""
    p = argparse.ArgumentParser(
        prog="neml2-compile",
        usage="%(prog)s [-h] [--version] INPUT MODEL [options] [PATH=VALUE ...]",
        description="Compile the [Models] block MODEL of the HIT file INPUT into an AOTI "
        "artifact (DIR/MODEL/metadata.json, DIR/MODEL/<device>/<dtype>/*.pt2, "
        "DIR/MODEL_aoti.i).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the epilog keeps its lines
    )
    add_version_argument(p, "neml2-compile")
    p.add_argument("input", metavar="INPUT", help="HIT input file")
    p.add_argument(
        "words",
        nargs="*",
        metavar="MODEL | PATH=VALUE",
        help="the [Models] block to compile (the one argument without '='), then " + OVERRIDES_HELP,
    )
    p.add_argument(
        "--model",
        metavar="NAME",
        help="the [Models] block to compile, the older spelling of MODEL",
    )
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
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also show torch's notices about its own internals (hidden by default: a "
        "deprecation inside torch.export, Inductor's c-shim fallbacks, 'No CUDA runtime' "
        "for a CPU-only compile), and on an error its Python traceback",
    )
    p.add_argument(
        "--allow-python-code",
        action="store_true",
        help="evaluate [Tensors] type = Python expressions as arbitrary Python instead of by "
        "the allow-list (the same as NEML2_ALLOW_PYTHON_CODE=1): the input file can then run "
        "code, so use it only for input files you would run as a Python script",
    )
    return p


def _main(p: argparse.ArgumentParser, a: argparse.Namespace) -> int:
    """The ``neml2-compile`` command, signals aside (see :func:`main`).

    Args:
        p: the parser that read the command line (for its errors).
        a: what it read.

    Returns:
        The exit status: 0 success, 1 fatal error, 2 bad command line.
    """
    from neml2.compiler._options import CompileOptions
    from neml2.tensors import FatalError

    if a.allow_python_code:
        from neml2.models import allow_python_code

        allow_python_code()  # for this process and its children
    try:
        model, overrides = split_model_and_overrides(a.words, a.model)
    except ValueError as e:
        p.error(str(e))

    def say(msg: str) -> None:
        if not a.quiet:
            print(msg, flush=True)

    try:
        problem = input_problem(a.input, "INPUT")  # a directory or FIFO: no open, no hang
        if problem is not None:
            raise FatalError(problem)
        if model is None:
            p.error(f"MODEL is missing: {p.prog} INPUT MODEL; {models_of(a.input, overrides)}")
        opts = CompileOptions.from_strings(
            model, a.derivatives, a.parameters, a.device, a.dtype, write_into=a.write_into
        )
        hidden = contextlib.nullcontext() if a.verbose else torch_notices_hidden(opts.devices)
        t0 = time.perf_counter()
        with hidden:
            res = compile_file(
                a.input,
                opts,
                a.output_dir,
                overrides,
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
        if a.verbose:
            traceback.print_exc(file=sys.stderr)
        print(f"neml2-compile: error: {e}", file=sys.stderr)
        return EXIT_FATAL
    except Exception as e:  # a bug or an unforeseen failure: still one line
        if a.verbose:
            traceback.print_exc(file=sys.stderr)
        hint = "" if a.verbose else " (run with --verbose for the traceback)"
        print(f"neml2-compile: error: {error_line(e)}{hint}", file=sys.stderr)
        return EXIT_FATAL
    return 0


def folder_problem(output_dir: str | None, cache_dir: str | None, no_cache: bool) -> str | None:
    """Why the artifact or the cache cannot go where the command line says, checked
    before anything is loaded (a compile takes minutes; its folders are used at the end).

    Args:
        output_dir: ``--output-dir`` (None: next to INPUT, checked when the artifact is
            written).
        cache_dir: ``--cache-dir`` (None: :func:`neml2.compiler.default_cache_dir`,
            checked as ``$NEML2_COMPILE_CACHE`` where that names it).
        no_cache: ``--no-cache``: the cache folder is not used, so not checked.

    Returns:
        One line naming the option and the path (see :func:`directory_problem`), or
            None when both can take files.
    """
    folders = [("--output-dir", output_dir)]
    if not no_cache:
        if cache_dir is not None:
            folders.append(("--cache-dir", cache_dir))
        elif os.environ.get("NEML2_COMPILE_CACHE"):
            folders.append(("$NEML2_COMPILE_CACHE", str(default_cache_dir())))
        else:
            folders.append(("the default --cache-dir", str(default_cache_dir())))
    for option, folder in folders:
        problem = None if folder is None else directory_problem(folder, option)
        if problem is not None:
            return problem
    return None


def directory_problem(raw: str, option: str) -> str | None:
    """Why the folder *raw* (given as *option*) cannot receive files: it is not a
    directory, lies under a regular file, or its nearest existing ancestor is not
    writable; None when it exists as a writable directory or can be created."""
    path = Path(raw)
    if path.exists() and not path.is_dir():
        kind = file_kind(path.stat().st_mode) or "a regular file"
        return f"{option} '{raw}' is {kind}, not a directory"
    existing = path.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{option} '{raw}': '{existing}' is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        to = "" if existing == path.absolute() else f" (to create '{raw}' in it)"
        return f"{option} '{raw}': directory '{existing}' is not writable{to}"
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
