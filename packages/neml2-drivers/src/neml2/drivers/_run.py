"""Run a ``[Drivers]`` block from Python: :func:`run` (what ``neml2-run`` does, minus the CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from neml2.drivers.results import TransientResult
from neml2.drivers.transient import TransientDriver
from neml2.models import load_input
from neml2.tensors import ConvergenceError, FatalError, NEML2Error


class CheckFailed(NEML2Error):
    """A checking driver (``TransientRegression``, ``Verification``) ran and its check failed.

    Not a bad input: the run finished, and its result is at hand.

    Attributes:
        result: the run's stacked result, or None for a check without one
        failures: the check's failure lines (``FAIL ...``), as many as it reported
    """

    recoverable = False

    def __init__(
        self, message: str, result: TransientResult | None = None, failures: Sequence[str] = ()
    ):
        """Record a failed check.

        Args:
            message: what failed (file, driver, the worst failure).
            result: the run's stacked result (None for a check without one).
            failures: the check's failure lines.
        """
        super().__init__(message)
        self.result = result
        self.failures = list(failures)


def transient_of(ctx: Any, driver: Any) -> TransientDriver | None:
    """The TransientDriver whose result *driver* produces: itself, or the one its
    ``driver`` option names (``TransientRegression``, ``Verification``); else None."""
    if isinstance(driver, TransientDriver):
        return driver
    opts = getattr(driver, "opts", None)
    name = opts.get("driver") if isinstance(opts, dict) else None
    if not isinstance(name, str) or not name:
        return None
    where = getattr(driver, "_locations", {}).get("driver")
    other = ctx.object("Drivers", name, where)
    return other if isinstance(other, TransientDriver) else None


def run(
    path: str | Path,
    driver: str,
    overrides: Sequence[str] = (),
    *,
    dtype: torch.dtype = torch.float64,
    allow_python_code: bool | None = None,
) -> TransientResult:
    """Run the block ``[Drivers]/<driver>`` of the HIT file *path*; return its transient result.

    The Python counterpart of ``neml2-run PATH DRIVER [overrides...]``: the same
    input checks, quiet unless the block sets ``verbose`` or ``show_progress``,
    and ``save_as`` (if set) writes its files as the command line would.

    Example:
        ```python
        result = neml2.drivers.run("model.i", "driver", ["Models/elasticity/E=2e5"])
        result["stress"]  # (steps, *B, 6), step 0 (the initial state) included
        result["t"]       # (steps, *B)
        ```

    Args:
        path: the HIT input file
        driver: the block's name under ``[Drivers]``: a ``TransientDriver``, or a check
            that runs one (``TransientRegression``, ``Verification``)
        overrides: HIT command-line overrides, e.g. ``"Models/elasticity/E=2e5"``
        dtype: the floating-point type of the ``[Tensors]`` and models
        allow_python_code: True lets ``[Tensors] type = Python`` expressions run
            arbitrary Python (the input file can then run code: use it only for input
            files you would run as a Python script); None (the default): only when
            ``NEML2_ALLOW_PYTHON_CODE=1``; see :func:`neml2.models.load_input`

    Returns:
        The transient run's variables, stacked: ``result[name]`` is
        ``(steps, *B, *base)``; see :class:`~neml2.drivers.results.TransientResult`.

    Raises:
        FatalError: bad input, naming the file and line (a missing file, no
            ``[Drivers]`` section, an unknown driver, a bad option; an error located
            elsewhere, e.g. at an override, is prefixed with the file and the driver),
            or a driver that produces no transient result (``ModelUnitTest``: run it
            with ``neml2-run``).
        ConvergenceError: a step did not converge (recoverable); the message names
            the file, the driver and the step.
        CheckFailed: a checking driver ran and found differences; the message names
            the file and the driver, the exception carries the result.
    """
    ctx = load_input(path, overrides, dtype=dtype, allow_python_code=allow_python_code)
    if ctx.section("Drivers") is None:
        raise FatalError(f"{path}: no [Drivers] section; cannot run driver '{driver}'")
    obj = ctx.object("Drivers", driver)
    kind = type(obj).__name__
    transient = transient_of(ctx, obj)
    if transient is None:
        raise FatalError(
            f"{path}: driver '{driver}' ({kind}) produces no transient result; "
            f"neml2.drivers.run runs a TransientDriver or a check that runs one "
            f"(run this one with `neml2-run {path} {driver}`)"
        )
    try:
        ok = obj.run()
    except ConvergenceError as e:
        raise e.with_context(f"{path}: driver '{driver}'") from e
    except FatalError as e:
        if str(path) in str(e):  # located in the file already
            raise
        # e.g. located at a command-line override: say which file and driver it is about
        raise FatalError(f"{path}: driver '{driver}': {e}") from e
    if ok is False:
        failures = list(getattr(obj, "failures", []) or [])
        shown = "; ".join(str(f) for f in failures[:3])
        more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
        raise CheckFailed(
            f"{path}: driver '{driver}' ({kind}): the check failed"
            + (f": {shown}{more}" if shown else ""),
            transient.stacked,
            failures,
        )
    return transient.stacked
