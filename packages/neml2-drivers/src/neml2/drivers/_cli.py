"""Command-line tools: ``neml2-run``, ``neml2-inspect``, ``neml2-syntax``.

Exit status: 0 success, 1 fatal error (bad input; the message names the file,
line and option), 2 bad command line, 3 convergence failure (recoverable).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

import neml2.drivers  # noqa: F401  (registers the driver types)
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


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.exit_on_error = True
    return p


@_quiet_broken_pipe
def run_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-run INPUT DRIVER [overrides...]``: run a driver block of an input file."""
    p = _parser("neml2-run", "Run the [Drivers] block DRIVER of the HIT file INPUT.")
    p.add_argument("input", help="HIT input file")
    p.add_argument("driver", help="name of a block under [Drivers]")
    p.add_argument("overrides", nargs="*", help="HIT overrides, e.g. Models/elasticity/E=2e5")
    p.add_argument("--plot", metavar="PNG", help="write a plot of the transient result")
    p.add_argument(
        "--plot-outputs",
        metavar="VARS",
        default="",
        help="comma-separated outputs to plot, 'name' or 'name[i]' (default: the first three)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    a = p.parse_args(argv)

    def body() -> int:
        from neml2.drivers.transient import TransientDriver

        ctx = InputFile(parse_input(a.input, a.overrides), a.input)
        if ctx.section("Drivers") is None:
            raise FatalError(f"{a.input}: no [Drivers] section; cannot run '{a.driver}'")
        driver = ctx.object("Drivers", a.driver)
        TransientDriver.report = not a.quiet
        try:
            ok = driver.run()
        finally:
            TransientDriver.report = False
        if a.plot:
            _plot_result(ctx, driver, a.plot, a.plot_outputs)
        return 0 if ok in (None, True) else EXIT_FATAL

    return _guarded("neml2-run", body)


def _plot_result(ctx, driver, path: str, outputs: str) -> None:
    from neml2.drivers.plot import plot
    from neml2.drivers.transient import TransientDriver

    transient = driver
    if not isinstance(driver, TransientDriver):
        name = getattr(driver, "opts", {}).get("driver")
        transient = ctx.object("Drivers", name) if name else None
    if not isinstance(transient, TransientDriver) or not transient.result:
        raise FatalError("--plot: the driver did not produce a transient result")
    names = [v.strip() for v in outputs.split(",") if v.strip()]
    if not names:
        names = sorted({k.split(".", 2)[2] for k in transient.result if k.startswith("output.")})[
            :3
        ]
    out = plot(transient.result, names, path, time=transient.opts["time"])
    print(f"plot written to {out}")


@_quiet_broken_pipe
def inspect_main(argv: Sequence[str] | None = None) -> int:
    """``neml2-inspect INPUT MODEL``: print a model's inputs, outputs and parameters."""
    p = _parser("neml2-inspect", "Print the variables and parameters of a model.")
    p.add_argument("input", help="HIT input file")
    p.add_argument("model", help="name of a block under [Models]")
    p.add_argument("overrides", nargs="*", help="HIT overrides")
    a = p.parse_args(argv)

    def body() -> int:
        from neml2.models import load_model

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
