"""Command-line tools: ``neml2-run``, ``neml2-inspect``, ``neml2-syntax``.

Exit status: 0 success, 1 fatal error (bad input; the message names the file,
line and option), 2 bad command line, 3 convergence failure (recoverable);
interrupted by SIGINT: 130, by SIGTERM: 143, within a second wherever the run is (one
line on stderr, no file left half-written; :mod:`neml2.tensors.interrupt`). Every tool
takes ``--version`` and ``-v/--verbose``: every error is one line on stderr, an
unforeseen one (not a ``FatalError``) too; with ``--verbose`` its Python traceback first.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import neml2.drivers  # noqa: F401  (registers the driver types)
from neml2.drivers._output import check_target
from neml2.hit._cli_support import add_version_argument, error_line, input_problem
from neml2.models._factory import parse_input
from neml2.models._input_file import InputFile
from neml2.tensors import ConvergenceError, FatalError
from neml2.tensors.interrupt import run_command

EXIT_FATAL = 1
EXIT_CONVERGENCE = 3


def _neml2_warning_format(prog: str):
    """A ``warnings.showwarning`` that prints neml2's own warnings as ``prog: warning:
    <message>`` (the message names the input file and line) instead of the Python source
    line that raised it; any other warning is shown as Python shows it."""
    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if category.__module__.startswith("neml2."):
            print(f"{prog}: warning: {message}", file=file or sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)

    return show


def _guarded(prog: str, body: Callable[[], int], verbose: bool = False) -> int:
    """Run *body*; an error is one line on stderr (``prog: error: ...``), preceded by
    its Python traceback only with *verbose* (``-v/--verbose``)."""
    saved = warnings.showwarning
    warnings.showwarning = _neml2_warning_format(prog)
    try:
        return body()
    except ConvergenceError as e:
        _traceback(verbose)
        print(f"{prog}: convergence failure: {e}", file=sys.stderr)
        return EXIT_CONVERGENCE
    except FatalError as e:
        _traceback(verbose)
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_FATAL
    except BrokenPipeError:
        raise  # `| head`: ends quietly (_quiet_broken_pipe)
    except Exception as e:  # a bug or an unforeseen failure: still one line
        _traceback(verbose)
        hint = "" if verbose else " (run with --verbose for the traceback)"
        print(f"{prog}: error: {error_line(e)}{hint}", file=sys.stderr)
        return EXIT_FATAL
    finally:
        warnings.showwarning = saved


def _traceback(verbose: bool) -> None:
    if verbose:
        traceback.print_exc(file=sys.stderr)


def _verbose_in(argv: Sequence[str] | None) -> bool:
    """Whether the command line *argv* (None: ``sys.argv[1:]``) asks for ``-v/--verbose``
    (for a tool that parses its arguments inside the guarded body)."""
    return any(a in ("-v", "--verbose") for a in (sys.argv[1:] if argv is None else argv))


def _quiet_broken_pipe(main: Callable[..., int]) -> Callable[..., int]:
    """`neml2-syntax | head` must end quietly, not with a BrokenPipeError traceback."""

    def wrapped(argv: Sequence[str] | None = None) -> int:
        try:
            return main(argv)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0

    wrapped.__doc__ = main.__doc__
    wrapped.__name__ = main.__name__
    return wrapped


def _parser(prog: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the epilog keeps its lines
    )
    p.exit_on_error = True
    add_version_argument(p, "neml2-drivers")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="on an error, also print its Python traceback"
    )
    return p


def _check_input(path: str) -> None:
    """INPUT must be a regular file: a directory, FIFO or device is an error (no open)."""
    problem = input_problem(path, "INPUT")
    if problem is not None:
        raise FatalError(problem)


#: The ``--help`` text of ``--allow-python-code`` (``neml2-run``, ``neml2-inspect``).
ALLOW_PYTHON_CODE_HELP = (
    "evaluate [Tensors] type = Python expressions as arbitrary Python instead of by the "
    "allow-list (the same as NEML2_ALLOW_PYTHON_CODE=1): the input file can then run "
    "code, so use it only for input files you would run as a Python script"
)


def _allow_python_code_if_asked(a: argparse.Namespace) -> None:
    """``--allow-python-code``: opt in for this process (and its children)."""
    if a.allow_python_code:
        from neml2.models import allow_python_code

        allow_python_code()


#: The end of ``neml2-run --help``.
RUN_EPILOG = """\
output files:
  A relative save_as (a TransientDriver option) resolves against the directory of
  INPUT; a relative --plot FILE against the current directory. save_as = X.pt
  receives the flat result ({'output.<step>.<var>': ...}), its sibling X.stacked.pt
  the stacked one (one tensor per variable, the steps first). All are checked
  before the run starts (a regular file or none yet, in a directory that exists or
  can be created and is writable; not INPUT itself) and written atomically: a
  temporary file in the same directory, renamed over the target only when complete
  and removed on any error or signal.

exit status:
  0 success, 1 fatal error or failed check, 2 bad command line,
  3 convergence failure, 130 interrupted by SIGINT, 143 by SIGTERM
"""


#: The ``--help`` text of the overrides of ``neml2-run`` and ``neml2-inspect``.
OVERRIDES_HELP = (
    "HIT overrides PATH=VALUE, e.g. Models/elasticity/E=2e5 or "
    "\"Models/elasticity/coefficients='2e5 0.3'\". PATH must name an existing block; a new "
    "parameter may join a block that already has parameters (its schema checks the name), "
    "and a top-level NAME=VALUE may define a name the file reads as ${NAME}. "
    "A misspelled path is an error that suggests the closest one; '+PATH=VALUE' creates "
    "missing blocks and parameters on purpose"
)


@_quiet_broken_pipe
def run_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-run INPUT DRIVER [overrides...]``: run a driver block of an input file."""
    p = _parser(
        "neml2-run", "Run the [Drivers] block DRIVER of the HIT file INPUT.", epilog=RUN_EPILOG
    )
    p.add_argument("input", help="HIT input file")
    p.add_argument("driver", help="name of a block under [Drivers]")
    # default=[]: argparse counts a '*' positional without a default as required
    p.add_argument("overrides", nargs="*", default=[], help=OVERRIDES_HELP)
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="write a plot of the transient result; the extension picks the format "
        "(.png, .pdf, .svg, ...)",
    )
    p.add_argument(
        "--plot-vars",
        metavar="PANELS",
        default="",
        help="comma-separated panels: 'y' (y against the time) or 'x:y' (y against x, "
        "e.g. 'strain[0]:stress[0]'); a variable is 'name' or 'name[i]' (component i), "
        "an output or an input ('output.name' / 'input.name' to say which); checked "
        "against the model before the run (default: the first three outputs)",
    )
    p.add_argument(
        "--plot-outputs",
        metavar="PANELS",
        default="",
        help="the same as --plot-vars (its former name)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    p.add_argument("--allow-python-code", action="store_true", help=ALLOW_PYTHON_CODE_HELP)
    a = p.parse_intermixed_args(argv)  # overrides may follow options
    _allow_python_code_if_asked(a)
    if a.plot_vars and a.plot_outputs:
        p.error("give --plot-vars or --plot-outputs, not both")
    plot_option = "--plot-outputs" if a.plot_outputs else "--plot-vars"
    plot_panels = a.plot_outputs or a.plot_vars
    if plot_panels and a.plot is None:
        p.error(f"{plot_option} needs --plot FILE")

    def body() -> int:
        from neml2.drivers.plot import plot
        from neml2.drivers.transient import TransientDriver, _Progress

        _check_input(a.input)
        plot_target = None if a.plot is None else _check_plot_file(a.plot, a.input)
        ctx = InputFile(parse_input(a.input, a.overrides), a.input)
        if ctx.section("Drivers") is None:
            raise FatalError(f"{a.input}: no [Drivers] section; cannot run '{a.driver}'")
        driver = ctx.object("Drivers", a.driver)
        transient = _transient_of(ctx, driver)
        if transient is not None:
            transient.save_target()  # a bad save_as fails before anything runs
        plan = None
        if plot_target is not None:
            plan = _plan_plot(
                ctx, a.driver, driver, transient, plot_target, plot_panels, plot_option
            )
        TransientDriver.report = not a.quiet
        try:
            ok = driver.run()
        finally:
            TransientDriver.report = False
            _Progress.end_line()
        if plan is not None:
            names, bases = plan
            if not transient.result:
                raise FatalError(f"--plot: driver '{a.driver}' left no transient result to plot")
            out = plot(
                transient.stacked, names, a.plot, time=transient.opts["time"], base_shapes=bases
            )
            print(f"plot written to {out}")
        return 0 if ok in (None, True) else EXIT_FATAL

    # a signal: exit 130 / 143, one line naming what was written, no partial file left
    # (supervised when run as a program: stopped even inside a long C call)
    return run_command(
        "neml2-run", lambda: _guarded("neml2-run", body, a.verbose), supervise=argv is None
    )


def _block_name_or_list(
    p: argparse.ArgumentParser, a: argparse.Namespace, dest: str, metavar: str, section: str
) -> str:
    """The block name argument *dest*: the one word after INPUT without '=' (the others
    are overrides, before or after it). Without one, a usage error (exit 2) that lists
    the ``[section]`` blocks of INPUT, so ``neml2-inspect model.i`` answers with the
    models it could inspect."""
    name = getattr(a, dest)
    if name is not None and "=" in name:  # an override came first
        plain = [i for i, w in enumerate(a.overrides) if "=" not in w]
        a.overrides.insert(0, name)
        name = a.overrides.pop(plain[0] + 1) if plain else None
    if name is None:
        p.error(f"{metavar} is missing: {p.prog} INPUT {metavar}; {_blocks_of(a, section)}")
    return name


def _blocks_of(a: argparse.Namespace, section: str) -> str:
    """``"[Models] in PATH: a, b"`` for INPUT with its overrides, or why there is no list."""
    from neml2 import hit

    problem = input_problem(a.input, "INPUT")
    if problem is not None:
        return problem
    try:
        root = hit.parse_file(a.input, overrides=a.overrides).merged()
    except (hit.HitError, OSError) as e:
        return f"could not list the [{section}] blocks of {a.input}: {e}"
    node = root.find(section)
    names = [c.name for c in node.children()] if node is not None else []
    if not names:
        return f"{a.input} has no [{section}] block"
    return f"[{section}] in {a.input}: {', '.join(names)}"


def _transient_of(ctx, driver):
    """The TransientDriver whose result *driver* produces (itself, or the one its
    ``driver`` option names); else None."""
    from neml2.drivers._run import transient_of

    return transient_of(ctx, driver)


def _check_plot_file(raw: str, input_path: str) -> Path:
    """``--plot FILE``: a known image extension, a path that can take a new file."""
    from neml2.drivers.plot import plot_format

    plot_format(raw)
    return check_target(raw, "--plot", protect=[(Path(input_path), "INPUT, the input file")])


def _plan_plot(ctx, name, driver, transient, target: Path, text: str, what: str):
    """Check ``--plot`` against the driver and the panels (``--plot-vars``, named *what*)
    against the model (loaded, not run); return ``(panels, {name: base shape})``."""
    from neml2.drivers.plot import check_variables

    if transient is None:
        raise FatalError(
            f"--plot: driver '{name}' ({type(driver).__name__}) produces no transient result "
            "to plot; name a TransientDriver, or a check that runs one (driver = ...)"
        )
    save = transient.save_target()
    stacked = transient.stacked_target()
    for written, kind in ((save, "the result"), (stacked, "the stacked result")):
        if written is not None and os.path.realpath(written) == os.path.realpath(target):
            raise FatalError(
                f"--plot: '{target}' is where {transient._save_what()} writes {kind}; "
                "the plot would overwrite it"
            )
    model_name = transient.opts["model"]
    model = ctx.top_model(model_name, transient._locations.get("model"))
    outputs = {n: tuple(getattr(t, "BASE_SHAPE", ())) for n, t in model.output_spec.items()}
    inputs = {n: tuple(getattr(t, "BASE_SHAPE", ())) for n, t in model.input_spec.items()}
    inputs.setdefault(transient.opts["time"], ())
    names = [v.strip() for v in text.split(",") if v.strip()]
    if not names:
        names = sorted(outputs)[:3]
    if not names:
        raise FatalError(f"--plot: model '{model_name}' has no outputs to plot")
    return names, check_variables(names, outputs, inputs, model_name, what)


@_quiet_broken_pipe
def inspect_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-inspect INPUT MODEL``: print a model's inputs, outputs, parameters and buffers."""
    p = _parser("neml2-inspect", "Print the variables, parameters and buffers of a model.")
    p.add_argument("input", help="HIT input file")
    p.add_argument("model", nargs="?", help="name of a block under [Models] (without it: the list)")
    p.add_argument("overrides", nargs="*", default=[], help=OVERRIDES_HELP)
    p.add_argument("--allow-python-code", action="store_true", help=ALLOW_PYTHON_CODE_HELP)
    a = p.parse_intermixed_args(argv)  # overrides may follow options
    a.model = _block_name_or_list(p, a, "model", "MODEL", "Models")
    _allow_python_code_if_asked(a)

    def body() -> int:
        from neml2.models import load_model

        _check_input(a.input)
        model = load_model(a.input, a.model, a.overrides)
        print(f"{a.model}: {type(model).__name__} ({model.dtype}, {model.device})")
        for title, spec in (("inputs", model.input_spec), ("outputs", model.output_spec)):
            print(f"  {title}:")
            for name, typ in spec.items():
                base = tuple(getattr(typ, "BASE_SHAPE", ()))
                print(f"    {name}: {typ.__name__} {base}")
        # parameters: torch Parameters (what calibration fits); buffers: fixed tensors
        for title, named in (
            ("parameters", list(model.named_parameters())),
            ("buffers", list(model.named_buffers())),
        ):
            print(f"  {title}:")
            for name, value in named or [("(none)", None)]:
                shape = "" if value is None else f" {tuple(value.shape)}"
                dtype = "" if value is None or value.dtype == model.dtype else f" {value.dtype}"
                print(f"    {name}{shape}{dtype}")
        order = getattr(model, "_order", None)
        if order:
            names = [m.hit_name or type(m).__name__ for m in order]
            print(f"  evaluation order: {' -> '.join(names)}")
        return 0

    return run_command(
        "neml2-inspect",
        lambda: _guarded("neml2-inspect", body, a.verbose),
        supervise=argv is None,
        outputs=False,
    )


@_quiet_broken_pipe
def syntax_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-syntax [TYPE...] [--json] [--brief] [--section S] [--conventions]``: the
    catalogue of registered HIT types (see :mod:`neml2.drivers._syntax`)."""
    from neml2.drivers import _syntax

    return run_command(
        "neml2-syntax",
        lambda: _guarded("neml2-syntax", lambda: _syntax.main(argv, _parser), _verbose_in(argv)),
        supervise=argv is None,
        outputs=False,
    )
