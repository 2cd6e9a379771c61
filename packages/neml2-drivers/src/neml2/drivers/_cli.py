"""Command-line tools: ``neml2-run``, ``neml2-inspect``, ``neml2-syntax``.

Exit status: 0 success, 1 fatal error (bad input; the message names the file,
line and option), 2 bad command line, 3 convergence failure (recoverable);
``neml2-run`` interrupted by SIGINT: 130, by SIGTERM: 143 (one line on stderr, no
file left half-written). Every tool takes ``--version``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import neml2.drivers  # noqa: F401  (registers the driver types)
from neml2.drivers._output import Interrupted, check_target, signals_raise
from neml2.hit._cli_support import add_version_argument, input_problem
from neml2.models import registered_types
from neml2.models._factory import parse_input
from neml2.models._input_file import InputFile
from neml2.tensors import ConvergenceError, FatalError

EXIT_FATAL = 1
EXIT_CONVERGENCE = 3


def _guarded(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except ConvergenceError as e:
        print(f"{prog}: convergence failure: {e}", file=sys.stderr)
        return EXIT_CONVERGENCE
    except FatalError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_FATAL


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
    return p


def _check_input(path: str) -> None:
    """INPUT must be a regular file: a directory, FIFO or device is an error (no open)."""
    problem = input_problem(path, "INPUT")
    if problem is not None:
        raise FatalError(problem)


#: The end of ``neml2-run --help``.
RUN_EPILOG = """\
output files:
  A relative save_as (a TransientDriver option) resolves against the directory of
  INPUT; a relative --plot FILE against the current directory. Both are checked
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
    "parameter may join a block that already has parameters (its schema checks the name). "
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
    p.add_argument("overrides", nargs="*", help=OVERRIDES_HELP)
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="write a plot of the transient result; the extension picks the format "
        "(.png, .pdf, .svg, ...)",
    )
    p.add_argument(
        "--plot-outputs",
        metavar="VARS",
        default="",
        help="comma-separated variables to plot, 'name' or 'name[i]' (component i; "
        "'input.name' for an input), checked against the model before the run "
        "(default: the first three outputs)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    a = p.parse_args(argv)
    if a.plot_outputs and a.plot is None:
        p.error("--plot-outputs needs --plot FILE")
    #: what the run wrote so far, for the message when a signal stops it
    state: dict[str, Any] = {}

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
        state["transient"] = transient
        if transient is not None:
            transient.save_target()  # a bad save_as fails before anything runs
        plan = None
        if plot_target is not None:
            plan = _plan_plot(ctx, a.driver, driver, transient, plot_target, a.plot_outputs)
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
                transient.result, names, a.plot, time=transient.opts["time"], base_shapes=bases
            )
            state["plot"] = out
            print(f"plot written to {out}")
        return 0 if ok in (None, True) else EXIT_FATAL

    try:
        with signals_raise():
            return _guarded("neml2-run", body)
    except Interrupted as e:
        transient = state.get("transient")
        written = [getattr(transient, "saved_to", None), state.get("plot")]
        written = [str(w) for w in written if w is not None]
        done = f"wrote only {', '.join(written)}" if written else "no result written"
        print(f"neml2-run: interrupted ({e.name}); {done}", file=sys.stderr)
        return e.exit_status


def _transient_of(ctx, driver):
    """The TransientDriver whose result *driver* produces: itself, or the one its
    ``driver`` option names (TransientRegression, Verification); else None."""
    from neml2.drivers.transient import TransientDriver

    if isinstance(driver, TransientDriver):
        return driver
    opts = getattr(driver, "opts", None)
    name = opts.get("driver") if isinstance(opts, dict) else None
    if not isinstance(name, str) or not name:
        return None
    where = getattr(driver, "_locations", {}).get("driver")
    other = ctx.object("Drivers", name, where)
    return other if isinstance(other, TransientDriver) else None


def _check_plot_file(raw: str, input_path: str) -> Path:
    """``--plot FILE``: a known image extension, a path that can take a new file."""
    from neml2.drivers.plot import plot_format

    plot_format(raw)
    return check_target(raw, "--plot", protect=[(Path(input_path), "INPUT, the input file")])


def _plan_plot(ctx, name, driver, transient, target: Path, text: str):
    """Check ``--plot`` against the driver and ``--plot-outputs`` against the model
    (loaded, not run); return ``(variables, {name: base shape})`` for :func:`plot`."""
    from neml2.drivers.plot import check_variables

    if transient is None:
        raise FatalError(
            f"--plot: driver '{name}' ({type(driver).__name__}) produces no transient result "
            "to plot; name a TransientDriver, or a check that runs one (driver = ...)"
        )
    save = transient.save_target()
    if save is not None and os.path.realpath(save) == os.path.realpath(target):
        raise FatalError(
            f"--plot: '{target}' is where {transient._save_what()} writes the result; "
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
    return names, check_variables(names, outputs, inputs, model_name)


@_quiet_broken_pipe
def inspect_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-inspect INPUT MODEL``: print a model's inputs, outputs and parameters."""
    p = _parser("neml2-inspect", "Print the variables and parameters of a model.")
    p.add_argument("input", help="HIT input file")
    p.add_argument("model", help="name of a block under [Models]")
    p.add_argument("overrides", nargs="*", help=OVERRIDES_HELP)
    a = p.parse_args(argv)

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
        print("  parameters:")
        params = list(model.named_parameters()) + [
            (n, b) for n, b in model.named_buffers() if b.is_floating_point()
        ]
        for name, value in params or [("(none)", None)]:
            shape = "" if value is None else f" {tuple(value.shape)}"
            print(f"    {name}{shape}")
        order = getattr(model, "_order", None)
        if order:
            names = [m.hit_name or type(m).__name__ for m in order]
            print(f"  evaluation order: {' -> '.join(names)}")
        return 0

    return _guarded("neml2-inspect", body)


@_quiet_broken_pipe
def syntax_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-syntax [--json] [TYPE...]``: the catalogue of registered HIT types."""
    from neml2.models import lookup
    from neml2.models._schema import catalogue

    p = _parser("neml2-syntax", "Describe the registered HIT types and their options.")
    p.add_argument("types", nargs="*", help="only these types (default: all)")
    p.add_argument("--json", action="store_true", help="machine-readable catalogue")
    a = p.parse_args(argv)
    names = a.types or registered_types()
    unknown = [n for n in names if lookup(n) is None]
    if unknown:
        print(f"neml2-syntax: error: unknown type(s) {', '.join(unknown)}", file=sys.stderr)
        return EXIT_FATAL
    entries = []
    for n in names:
        entry = catalogue(lookup(n))
        entry["type"] = n
        entries.append(entry)
    if a.json:
        print(json.dumps({"types": entries}, indent=2))
        return 0
    for e in entries:
        first = e.get("doc", "").splitlines()[0] if e.get("doc") else ""
        print(f"[{e.get('section', '?')}] {e['type']}: {first}")
        for f in e.get("fields", []) if a.types else []:
            default = "required" if f["required"] else f"default {f['default']!r}"
            print(f"    {f['name']} ({f['kind']}, {f.get('type', '')}, {default}): {f['doc']}")
    return 0
