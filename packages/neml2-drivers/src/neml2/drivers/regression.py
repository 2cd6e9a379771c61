"""Checks of a transient run: against a gold result file, or against CSV references."""

from __future__ import annotations

from pathlib import Path

import torch

from neml2.drivers._driver import Driver
from neml2.drivers.transient import TYPES, TransientDriver
from neml2.models import register
from neml2.models._schema import option
from neml2.tensors import TensorWrapper


def _compare(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float):
    """(ok, max abs error, shapes broadcast?) of two tensors after broadcasting."""
    try:
        a, b = torch.broadcast_tensors(a.detach().cpu(), b.detach().cpu().to(a.dtype))
    except RuntimeError:
        return False, float("inf"), False
    err = (a - b).abs()
    bad = (err > atol + rtol * b.abs()) | ~torch.isfinite(a)
    return not bool(bad.any()), float(err.max()) if err.numel() else 0.0, True


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
        option("rtol", float, 1e-5, doc="relative tolerance"),
        option("atol", float, 1e-8, doc="absolute tolerance"),
    )

    def run(self) -> bool:
        path = Path(self.opts["reference"])
        if not path.is_absolute():
            path = Path(self.ctx.path).resolve().parent / path
        if not path.is_file():
            raise self.error(f"reference file not found: {path}", "reference")
        gold = torch.load(path, map_location="cpu", weights_only=True)
        driver = self._driver()
        driver.run()
        ours = driver.result
        self.failures: list[str] = []
        worst = (0.0, "")
        for key in sorted(k for k in gold if k.startswith("output.")):
            if key not in ours:
                self.failures.append(f"{key}: missing from our results")
                continue
            ok, err, shaped = _compare(ours[key], gold[key], self.opts["rtol"], self.opts["atol"])
            if err > worst[0]:
                worst = (err, key)
            if not ok:
                what = "shapes differ" if not shaped else f"max |error| {err:.3e}"
                self.failures.append(
                    f"{key}: {what} (ours {tuple(ours[key].shape)}, gold {tuple(gold[key].shape)})"
                )
        for f in self.failures[:10]:
            print(f"FAIL {f}")
        if len(self.failures) > 10:
            print(f"... and {len(self.failures) - 10} more")
        n = sum(1 for k in gold if k.startswith("output."))
        print(
            f"TransientRegression '{self.hit_name}': {n} gold values, worst max |error| "
            f"{worst[0]:.3e} at {worst[1] or '-'}: "
            + ("passed" if not self.failures else f"{len(self.failures)} FAILED")
        )
        return not self.failures


@register()
class Verification(_Checks):
    """Run a TransientDriver and compare outputs at every step with reference tensors."""

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
        option("rtol", float, 1e-5, doc="relative tolerance"),
        option("atol", float, 1e-8, doc="absolute tolerance"),
    )

    def run(self) -> bool:
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
        driver = self._driver()
        driver.run()
        ours = driver.result
        self.failures: list[str] = []
        for n, ref in checks:
            side, var = n.split(".")
            nsteps = ref.data.shape[0]
            worst = 0.0
            for k in range(1, nsteps):
                key = f"{side}.{k}.{var}"
                if key not in ours:
                    self.failures.append(f"{key}: missing from our results")
                    break
                ok, err, _ = _compare(ours[key], ref.data[k], self.opts["rtol"], self.opts["atol"])
                worst = max(worst, err)
                if not ok:
                    self.failures.append(f"{key}: max |error| {err:.3e} at step {k}")
                    break
            print(
                f"Verification '{self.hit_name}': {n} over {nsteps - 1} steps, "
                f"worst max |error| {worst:.3e}"
            )
        for f in self.failures:
            print(f"FAIL {f}")
        return not self.failures
