"""``ModelUnitTest``: check a model's values and derivatives against expectations.

Reads the ``[Drivers] type = ModelUnitTest`` blocks of the reference library's
unit-test inputs: ``input_<Type>_names/_values`` and
``output_<Type>_names/_values`` (values are numbers or ``[Tensors]`` names),
``value_rel_tol/value_abs_tol`` and ``derivative_rel_tol/derivative_abs_tol``.

Checks, in order:

1. the outputs match the expected values, entry by entry
   (``|ours - expected| <= value_abs_tol + value_rel_tol * |expected|``);
2. every first-derivative block ``J[out][in]``, whole: the model's own
   forward-mode tangents (the ``v=`` path) seeded with one unit vector per
   component of the input (its base and sub-batch entries, the same at every batch
   point), against autograd of the plain forward with the same seeds (an
   independent oracle, not finite differences). A block passes when
   ``max |J - J_ref| <= derivative_abs_tol + derivative_rel_tol * max |J_ref|``;
   its line reports ``max |J - J_ref|`` and that error relative to
   ``max |J_ref|``;
3. optionally (``check_second_derivatives``) the ``v2=`` tangents along one random
   direction shared by all inputs against the oracle's derivative of its own JVP
   along it (entry by entry, as the values).
"""

from __future__ import annotations

from typing import Any

import torch

from neml2.drivers._compare import Comparison, compare, compare_block, format_error, worst_of
from neml2.drivers._driver import Driver, pair_fields
from neml2.models import register, suggest
from neml2.models._schema import option
from neml2.tensors import (
    MRP,
    R2,
    SR2,
    SSR4,
    WR2,
    MillerIndex,
    Quaternion,
    Scalar,
    Tensor,
    TensorWrapper,
    Vec,
)

#: The types ``input_<T>_*`` / ``output_<T>_*`` may name.
TYPES: dict[str, type] = {
    t.__name__: t for t in (Scalar, Vec, SR2, R2, WR2, SSR4, MRP, Quaternion, MillerIndex, Tensor)
}


@register()
class ModelUnitTest(Driver):
    """Check a model's outputs and first (optionally second) derivatives."""

    fields = (
        option("model", str, doc="the [Models] block to test"),
        *pair_fields("input", TYPES, "input"),
        *pair_fields("output", TYPES, "expected output"),
        option("value_rel_tol", float, 1e-5, bounds="[0, inf)", doc="relative tolerance on values"),
        option("value_abs_tol", float, 1e-8, bounds="[0, inf)", doc="absolute tolerance on values"),
        option(
            "derivative_rel_tol",
            float,
            1e-5,
            bounds="[0, inf)",
            doc="relative tolerance on derivatives",
        ),
        option(
            "derivative_abs_tol",
            float,
            1e-8,
            bounds="[0, inf)",
            doc="absolute tolerance on derivatives",
        ),
        option("check_values", bool, True, doc="compare the outputs"),
        option("check_derivatives", bool, True, doc="check every first derivative"),
        option("check_second_derivatives", bool, False, doc="check second derivatives too"),
        option("seed", int, 0, doc="seed of the random direction of the second-derivative check"),
        option("verbose", bool, False, doc="print each comparison"),
    )

    def setup(self) -> None:
        """Start with no failures, report lines or comparisons (filled by :meth:`run`)."""
        self.failures: list[str] = []
        self.report: list[str] = []
        self.results: list[Comparison] = []

    # ------------------------------------------------------------------ inputs
    def _values(self, side: str) -> dict[str, TensorWrapper]:
        return self.typed_pairs(side, TYPES, self._value)

    def _value(self, typ: type, token: str, opt: str) -> TensorWrapper:
        try:
            number = float(token)
        except ValueError:
            number = None
        if number is not None:
            t = torch.tensor(number, dtype=self.ctx.dtype, device=self.ctx.device)
            if typ is Scalar:
                return Scalar(t)
            return typ(t.expand(typ.BASE_SHAPE).clone())
        if not self.ctx.has_tensor(token):
            raise self.error(f"'{token}' is neither a number nor a [Tensors] name", opt)
        value = self.ctx.tensor(token, self._locations.get(opt))
        if isinstance(value, TensorWrapper):
            if tuple(value.base_shape) != tuple(typ.BASE_SHAPE):
                raise self.error(
                    f"[Tensors/{token}] is a {type(value).__name__} of base "
                    f"{tuple(value.base_shape)}, not a {typ.__name__}",
                    opt,
                )
            return value if isinstance(value, typ) else typ(value)
        return typ(torch.as_tensor(value, dtype=self.ctx.dtype))

    # ------------------------------------------------------------------ run
    def run(self) -> bool:
        """Evaluate the model at the given inputs; compare values and derivatives.

        Returns:
            True when every comparison is within its tolerance (``failures`` lists
            the others).

        Raises:
            FatalError: a missing input, an unknown variable or a bad value.
        """
        model = self.ctx.top_model(self.opts["model"], self._locations.get("model"))
        inputs = self._values("input")
        expected = self._values("output")
        # a misspelled name first: it would otherwise be reported as the input it missed
        extra = [n for n in inputs if n not in model.input_spec]
        if extra:
            raise self.error(
                f"input(s) {', '.join(extra)} are not inputs of model '{self.opts['model']}'"
                f"{suggest(extra[0], model.input_spec)} (its inputs: "
                f"{', '.join(model.input_spec)})"
            )
        missing = [n for n in model.input_spec if n not in inputs]
        if missing:
            origins = "".join(self.ctx.free_input_origin(n) for n in missing)
            raise self.error(
                f"model '{self.opts['model']}' needs input(s) {', '.join(missing)} that the "
                f"test does not give (given: {', '.join(inputs) or 'none'}){origins}",
            )
        unknown = [n for n in expected if n not in model.output_spec]
        if unknown:
            raise self.error(
                f"output(s) {', '.join(unknown)} are not outputs of model "
                f"'{self.opts['model']}'{suggest(unknown[0], model.output_spec)} (its outputs: "
                f"{', '.join(model.output_spec)})"
            )
        xs = [inputs[n] for n in model.input_spec]
        if self.opts["check_values"] and not expected:
            raise self.error(
                f"no expected outputs given (output_<Type>_names / _values) for model "
                f"'{self.opts['model']}': nothing to check its values against "
                "(set check_values = false to check derivatives only)"
            )
        if self.opts["check_values"]:
            self._check_values(model, xs, expected)
        if self.opts["check_derivatives"]:
            self._check_first(model, xs)
        if self.opts["check_second_derivatives"]:
            self._check_second(model, xs)
        if not self.results:
            self.failures.append(
                "nothing was compared (no expected outputs and no derivative checks)"
            )
        for line in self.report if self.opts["verbose"] else []:
            print(line)
        for f in self.failures:
            print(f"FAIL {f}")
        verdict = f"{len(self.failures)} FAILED" if self.failures else "all passed"
        worst = worst_of(self.results)
        where = f", worst max |error| {format_error(worst.worst)} at {worst.what}" if worst else ""
        print(
            f"ModelUnitTest '{self.hit_name or ''}': model '{self.opts['model']}', "
            f"{len(self.results)} checks{where}, {verdict}"
        )
        return not self.failures

    def _compare(
        self, what: str, got: torch.Tensor, want: torch.Tensor, rtol, atol, *, oracle=False
    ) -> None:
        c = compare(what, got, want, rtol, atol, expected_may_be_nonfinite=not oracle)
        self.report.append(c.line())
        self.results.append(c)
        if not c.ok:
            self.failures.append(c.line())

    def _check_values(self, model, xs, expected) -> None:
        with torch.no_grad():
            outs = _as_tuple(model(*xs))
        for n, o in zip(model.output_spec, outs, strict=True):
            if n in expected:
                self._compare(
                    f"value of '{n}'",
                    o.data,
                    expected[n].data,
                    self.opts["value_rel_tol"],
                    self.opts["value_abs_tol"],
                )

    def _directions(self, xs) -> list[torch.Tensor]:
        g = torch.Generator(device="cpu").manual_seed(self.opts["seed"])
        return [
            torch.randn(x.data.shape, generator=g, dtype=torch.float64).to(x.data)
            if x.data.is_floating_point()
            else None
            for x in xs
        ]

    def _oracle(self, model, xs):
        """The plain forward as a function of the floating-point inputs' raw data.

        This is autograd's view of the model, independent of the typed tangents.
        Returns ``(f, datas, positions)``: ``positions`` maps f's arguments to inputs.
        A model opened on a compiled route (``neml2.routes``) that carries the py-eager
        model it came from as ``reference_model`` is checked against that model's
        autograd: an AOTI graph has no autograd, and Inductor's none of second order.
        """
        model = getattr(model, "reference_model", model)
        kinds = [(type(x), x.sub_batch_ndim) for x in xs]
        positions = [i for i, x in enumerate(xs) if x.data.is_floating_point()]

        def f(*datas):
            raw = [x.data for x in xs]
            for i, d in zip(positions, datas, strict=True):
                raw[i] = d
            typed = [k(d, s) for (k, s), d in zip(kinds, raw, strict=True)]
            return tuple(o.data for o in _as_tuple(model(*typed)))

        return f, tuple(xs[i].data for i in positions), positions

    def _check_first(self, model, xs) -> None:
        """Each block ``J[out][in]``, seeded with the unit vectors of the input's
        components, against autograd's with the same seeds (:func:`compare_block`)."""
        names = list(model.input_spec)
        seeds = {n: _unit_seeds(x) for n, x in zip(names, xs, strict=True)}
        v = {
            n: {n: type(x)(seeds[n], x.sub_batch_ndim)}
            for n, x in zip(names, xs, strict=True)
            if seeds[n] is not None
        }
        _, v_out = _split(model(*xs, v=v))
        f, datas, positions = self._oracle(model, xs)
        for k, i in enumerate(positions):
            n = names[i]
            columns = []  # per seed: J[out][in] applied to it, for every output
            for seed in seeds[n]:
                tangent = tuple(
                    seed if j == k else torch.zeros_like(d) for j, d in enumerate(datas)
                )
                columns.append(torch.autograd.functional.jvp(f, datas, tangent)[1])
            for o, o_name in enumerate(model.output_spec):
                ref = torch.stack([c[o] for c in columns])
                got = v_out[o_name].get(n)
                g = got.data if got is not None else torch.zeros_like(ref)
                if g.shape != ref.shape:
                    try:  # a tangent held at a broadcastable shape
                        g = g.expand_as(ref)
                    except RuntimeError:
                        pass  # compare_block names the two shapes
                self._compare_block(f"d{o_name}/d{n}", g, ref)

    def _compare_block(self, what: str, got: torch.Tensor, want: torch.Tensor) -> None:
        c = compare_block(
            what, got, want, self.opts["derivative_rel_tol"], self.opts["derivative_abs_tol"]
        )
        self.report.append(c.line())
        self.results.append(c)
        if not c.ok:
            self.failures.append(c.line())

    def _check_second(self, model, xs) -> None:
        dirs = self._directions(xs)
        names = list(model.input_spec)
        v = {
            n: {"a": type(x)(d.unsqueeze(0), x.sub_batch_ndim)}
            for n, x, d in zip(names, xs, dirs, strict=True)
            if d is not None
        }
        v2: dict[str, dict] = {n: {} for n in v}
        *_, v2_out = model(*xs, v=v, v2=v2)
        f, datas, positions = self._oracle(model, xs)
        tangent = tuple(dirs[i] for i in positions)

        def directional(*ds):
            return torch.autograd.functional.jvp(f, ds, tangent, create_graph=True)[1]

        _, ref = torch.autograd.functional.jvp(directional, datas, tangent)
        for o_name, r in zip(model.output_spec, ref, strict=True):
            got = v2_out[o_name].get("a", {}).get("a")
            g = got.data[0, 0] if got is not None else torch.zeros_like(r)
            self._compare(
                f"d2{o_name}[a,a]",
                g,
                r,
                self.opts["derivative_rel_tol"],
                self.opts["derivative_abs_tol"],
                oracle=True,
            )


def _unit_seeds(x: TensorWrapper) -> torch.Tensor | None:
    """The unit seeds of *x*'s components: ``(K, *x.shape)``, K = the number of entries
    of one batch point (sub-batch and base axes), seed k being 1 at entry k of every
    batch point; None for a non-floating input (no derivative)."""
    if not x.data.is_floating_point():
        return None
    inner = x.data.shape[x.dynamic_ndim :]
    count = 1
    for size in inner:
        count *= size
    eye = torch.eye(count, dtype=x.data.dtype, device=x.data.device).reshape(count, *inner)
    lead = (1,) * x.dynamic_ndim
    return eye.reshape(count, *lead, *inner).expand(count, *x.data.shape).contiguous()


def _split(result: tuple) -> tuple[tuple, dict]:
    return result[:-1], result[-1]


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)
