"""Checks of a transient run: against a gold result file, or against CSV references."""

from __future__ import annotations

import pickle
from pathlib import Path

import torch

from neml2.drivers._compare import Comparison, compare, format_error, worst_of
from neml2.drivers._driver import Driver
from neml2.drivers.transient import TYPES, TransientDriver
from neml2.hit._cli_support import file_problem
from neml2.models import register
from neml2.models._schema import option
from neml2.tensors import TensorWrapper


class _Checks(Driver):
    def _driver(self) -> TransientDriver:
        d = self.ctx.object("Drivers", self.opts["driver"], self._locations.get("driver"))
        if not isinstance(d, TransientDriver):
            raise self.error(f"'{self.opts['driver']}' is not a TransientDriver", "driver")
        return d


@register()
class TransientRegression(_Checks):
    """Run a TransientDriver and compare every ``output.*`` of a gold ``.pt`` file."""

    fields = (
        option("driver", str, doc="the TransientDriver block"),
        option("reference", str, doc="gold result file, relative to the input file"),
        option("rtol", float, 1e-5, bounds="[0, inf)", doc="relative tolerance"),
        option("atol", float, 1e-8, bounds="[0, inf)", doc="absolute tolerance"),
    )

    def run(self) -> bool:
        """Run the transient driver and compare its result with the gold file.

        Returns:
            True when the result and the gold file hold the same
            ``output.<step>.<variable>`` keys (a step or variable missing on either
            side fails, named) and every one matches within ``rtol`` and ``atol`` (a
            NaN or infinity on either side never matches); False otherwise
            (``failures`` lists why).

        Raises:
            FatalError: the gold file is missing, not a regular file (a directory,
                a FIFO), empty, unreadable, not a dict, or has no ``output.`` entries.
        """
        path = Path(self.opts["reference"])
        if not path.is_absolute():
            path = Path(self.ctx.path).resolve().parent / path
        problem = file_problem(path, "reference file")
        if problem is not None:
            raise self.error(problem, "reference")
        if path.stat().st_size == 0:
            raise self.error(f"reference file {path} is empty", "reference")
        try:
            gold = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:
            raise self.error(
                f"cannot read reference file {path}: {_load_error(e)}", "reference"
            ) from None
        if not isinstance(gold, dict):
            raise self.error(
                f"reference file {path} holds a {type(gold).__name__}, not a dict of tensors",
                "reference",
            )
        keys = sorted(k for k in gold if isinstance(k, str) and k.startswith("output."))
        if not keys:
            raise self.error(
                f"reference file {path} has no output.<step>.<variable> entries: "
                "nothing to compare against",
                "reference",
            )
        driver = self._driver()
        driver.run()
        ours = driver.result
        self.failures: list[str] = []
        results: list[Comparison] = []
        absent: list[str] = []
        for key in keys:
            if not isinstance(gold[key], torch.Tensor):
                self.failures.append(f"{key}: the gold entry is a {type(gold[key]).__name__}")
                continue
            if key not in ours:
                absent.append(key)
                continue
            c = compare(key, ours[key], gold[key], self.opts["rtol"], self.opts["atol"])
            results.append(c)
            if not c.ok:
                self.failures.append(
                    f"{c.line()} (ours {tuple(ours[key].shape)}, gold {tuple(gold[key].shape)})"
                )
        if absent:
            self.failures.append(f"our results lack {_steps_and_keys(absent)} of the gold file")
        # a gold file with fewer steps (or variables) than the run must not pass
        unchecked = sorted(k for k in ours if k.startswith("output.") and k not in gold)
        if unchecked:
            self.failures.append(f"the gold file lacks {_steps_and_keys(unchecked)} of our results")
        for f in self.failures[:10]:
            print(f"FAIL {f}")
        if len(self.failures) > 10:
            print(f"... and {len(self.failures) - 10} more")
        worst = worst_of(results)
        where = f"{format_error(worst.worst)} at {worst.what}" if worst else "- (none compared)"
        print(
            f"TransientRegression '{self.hit_name}': {len(keys)} gold values, worst max |error| "
            f"{where}: " + ("passed" if not self.failures else f"{len(self.failures)} FAILED")
        )
        return not self.failures


def _load_error(e: Exception) -> str:
    """One line saying why ``torch.load`` refused a gold file (its messages span lines)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if isinstance(e, pickle.UnpicklingError):
        return "not a file of tensors written by torch.save (torch.load refused it)"
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def _is_step_key(key: str, side: str, var: str) -> bool:
    """Whether *key* is ``<side>.<step>.<var>``."""
    parts = key.split(".", 2)
    return len(parts) == 3 and parts[0] == side and parts[1].isdigit() and parts[2] == var


def _key_order(parts: list[str]) -> tuple:
    """Sort ``<side>.<step>.<var>`` keys by their step as a number, then by name."""
    step = parts[1] if len(parts) > 1 else ""
    return (int(step) if step.isdigit() else -1, ".".join(parts))


def _steps_and_keys(keys: list[str]) -> str:
    """``2 value(s), at step(s) 3, 4: output.3.stress, output.4.stress``: how many
    ``<side>.<step>.<var>`` *keys*, their steps, then the first few keys."""
    parts = [k.split(".", 2) for k in keys]
    keys = [k for _, k in sorted(zip(parts, keys, strict=True), key=lambda pk: _key_order(pk[0]))]
    steps = sorted({int(q[1]) for q in parts if len(q) > 1 and q[1].isdigit()})
    shown = ", ".join(str(k) for k in steps[:8]) + (", ..." if len(steps) > 8 else "")
    named = ", ".join(keys[:4]) + (", ..." if len(keys) > 4 else "")
    at = f", at step(s) {shown}" if steps else ""
    return f"{len(keys)} value(s){at}: {named}"


@register()
class Verification(_Checks):
    """Run a TransientDriver and compare outputs with reference tensors.

    By default every step after the initial state is compared: a reference holds the
    steps first (entry ``k`` for step ``k``), as many as the run has (a shorter one
    fails, naming the steps it leaves out). ``time_steps`` lists the steps to compare
    instead (indices into ``prescribed_time``, 1 the first step); a reference then
    holds one entry per listed step, in order, or, for a single listed step, just
    that step's value (no step axis).
    """

    fields = (
        option("driver", str, doc="the TransientDriver block"),
        *(
            f
            for t in TYPES
            for f in (
                option(f"{t}_names", str, (), many=True, doc=f"{t} results, e.g. output.stress"),
                option(f"{t}_values", str, (), many=True, doc=f"{t} [Tensors] references"),
            )
        ),
        option("rtol", float, 1e-5, bounds="[0, inf)", doc="relative tolerance"),
        option("atol", float, 1e-8, bounds="[0, inf)", doc="absolute tolerance"),
        option(
            "time_steps",
            int,
            (),
            many=True,
            doc="steps to compare (default: every step after the initial state)",
        ),
    )

    def _steps(self, driver: TransientDriver) -> list[int] | None:
        """The listed ``time_steps``, checked against the run's step count."""
        steps = list(self.opts["time_steps"])
        if not steps:
            return None
        times = self.ctx.tensor(
            driver.opts["prescribed_time"], driver._locations.get("prescribed_time")
        )
        n = int(times.data.shape[0]) if isinstance(times, TensorWrapper) and times.batch_ndim else 1
        bad = [k for k in steps if not 1 <= k < n]
        if bad:
            raise self.error(f"step(s) {bad} outside the run's steps 1 .. {n - 1}", "time_steps")
        if len(set(steps)) != len(steps):
            raise self.error(f"a step is listed twice in {steps}", "time_steps")
        return steps

    def run(self) -> bool:
        """Run the transient driver and compare the listed variables at the listed steps.

        Returns:
            True when each listed value matches within ``rtol`` and ``atol`` (a NaN or
            infinity never matches).

        Raises:
            FatalError: names and values of different lengths, a step outside the
                run, or a variable the run did not produce.
        """
        checks = []
        for t in TYPES:
            names, values = self.opts[f"{t}_names"], self.opts[f"{t}_values"]
            if len(names) != len(values):
                raise self.error(f"{t}_names and {t}_values differ in length", f"{t}_values")
            for n, v in zip(names, values, strict=True):
                if not n.startswith(("output.", "input.")) or n.count(".") != 1:
                    raise self.error(f"'{n}' must look like output.<variable>", f"{t}_names")
                ref = self.ctx.tensor(v, self._locations.get(f"{t}_values"))
                if not isinstance(ref, TensorWrapper):
                    raise self.error(f"[Tensors/{v}] is not a typed tensor", f"{t}_values")
                checks.append((n, ref))
        if not checks:
            raise self.error("no <Type>_names / <Type>_values given: nothing to verify", "driver")
        driver = self._driver()
        listed = self._steps(driver)
        for n, ref in checks:
            if listed is None and (ref.data.dim() == 0 or ref.data.shape[0] < 2):
                raise self.error(
                    f"the reference for {n} has no step after the initial state "
                    f"(shape {tuple(ref.data.shape)}): nothing to compare",
                    "driver",
                )
            if (
                listed is not None
                and len(listed) > 1
                and (ref.data.dim() == 0 or ref.data.shape[0] != len(listed))
            ):
                raise self.error(
                    f"the reference for {n} (shape {tuple(ref.data.shape)}) needs one entry "
                    f"per listed step ({len(listed)})",
                    "time_steps",
                )
        driver.run()
        ours = driver.result
        self.failures: list[str] = []
        for n, ref in checks:
            side, var = n.split(".")
            results: list[Comparison] = []
            if listed is None:
                steps = list(range(1, ref.data.shape[0]))
                refs = [ref.data[k] for k in steps]
            else:
                steps = listed
                refs = [ref.data] if len(listed) == 1 else list(ref.data)
            for k, expected in zip(steps, refs, strict=True):
                key = f"{side}.{k}.{var}"
                if key not in ours:
                    self.failures.append(f"{key}: missing from our results")
                    break
                c = compare(key, ours[key], expected, self.opts["rtol"], self.opts["atol"])
                results.append(c)
                if not c.ok:
                    self.failures.append(f"{c.line()} at step {k}")
                    break
            if listed is None:
                # a reference shorter than the run must not pass: every step is compared
                ran = {int(k.split(".")[1]) for k in ours if _is_step_key(k, side, var)}
                short = sorted(ran - set(steps) - {0})
                if short:
                    self.failures.append(
                        f"the reference for {n} ends at step {len(steps)}, the run at "
                        f"{max(ran)}: {_steps_and_keys([f'{side}.{k}.{var}' for k in short])} "
                        "not compared (give them, or list the compared ones in time_steps)"
                    )
            worst = worst_of(results)
            print(
                f"Verification '{self.hit_name}': {n} over {len(results)} of {len(steps)} steps, "
                f"worst max |error| {format_error(worst.worst) if worst else '-'}"
            )
        for f in self.failures:
            print(f"FAIL {f}")
        return not self.failures
