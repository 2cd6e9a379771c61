"""Coordinate-descent warm start of an implicit update condensed onto its rates.

Many implicit updates reduce, over one step, to a system in the rates
``γ̇ ∈ R^m``::

    φ(γ̇) + A γ̇ = b

where ``φ`` acts componentwise (the inverse of an explicit rate law: a Perzyna
flow rate, a power-law slip rule), ``A`` is symmetric positive semi-definite
(the elastic coupling of the rates over the step) and ``b`` the driving force with
every rate at zero (the trial state). This is the gradient of a strictly convex
potential, so Gauss-Seidel coordinate descent converges without globalization,
each coordinate an exact scalar solve. :class:`RateCondensation` gives ``A`` and
``b`` for any return path by one forward-mode derivative;
``SlipSystemElasticInteraction`` gives crystal plasticity's closed-form ``A``;
:class:`CoordinateDescentPredictor` solves the system. The result is only an
initial guess (never differentiated): its inputs' tangents are dropped.
"""

from __future__ import annotations

import torch

from neml2.models._model import Model, _as_tuple
from neml2.models._registry import register
from neml2.models._schema import input, model_ref, option, output
from neml2.tensors import Scalar, TensorWrapper, seed

_LEAF = "coordinate_descent@rate"


def _check_model(owner: Model, opt: str) -> Model:
    inner = owner.opts[opt]
    if not isinstance(inner, Model):
        raise owner.error(f"'{opt}' must name a [Models] block", opt)
    return inner


def _tangent(value: TensorWrapper, leaf: str) -> torch.Tensor:
    """``d value / d leaf`` for a scalar leaf seeded with 1, at the value's full shape."""
    t = (value.tangents or {}).get(leaf)
    if t is None:  # a structural zero
        return torch.zeros_like(value.data)
    return t.expand(t.shape[0], *value.data.shape)[0]


@register()
class RateCondensation(Model):
    """Linearize a return path ``f(γ̇)`` at ``γ̇ = 0``: ``b = f(0)``, ``A = -∂f/∂γ̇ (0)``.

    ``model`` maps the (Scalar) rate ``rate`` to the (Scalar) driving force
    ``driving_force`` with the flow direction frozen at the trial state, so that
    ``f(γ̇) ≈ b - A γ̇`` is the condensed system :class:`CoordinateDescentPredictor`
    solves. Both come from one forward-mode evaluation of ``model`` (exact, no
    finite difference). Inputs: every input of ``model`` but the rate; outputs
    ``coupling`` (``A``) and ``trial_driving_force`` (``b``), Scalars of the driving
    force's shape ``(*B)``.
    """

    fields = (
        model_ref("model", doc="the return path: the rate in, the driving force out"),
        option("rate", str, doc="which (Scalar) input of 'model' is the rate"),
        option("driving_force", str, doc="which (Scalar) output of 'model' is the driving force"),
        output("coupling", Scalar, doc="A = -df/d(rate) at zero rate"),
        output("trial_driving_force", Scalar, doc="b = f at zero rate"),
    )

    def setup(self) -> None:
        inner = _check_model(self, "model")
        rate, force = self.opts["rate"], self.opts["driving_force"]
        if rate not in inner.input_spec:
            raise self.error(
                f"'{rate}' is not an input of the path model (its inputs: "
                f"{', '.join(inner.input_spec) or 'none'})",
                "rate",
            )
        if inner.input_spec[rate] is not Scalar:
            raise self.error(
                f"rate '{rate}' is a {inner.input_spec[rate].__name__}, not a Scalar", "rate"
            )
        if force not in inner.output_spec:
            raise self.error(
                f"'{force}' is not an output of the path model (its outputs: "
                f"{', '.join(inner.output_spec) or 'none'})",
                "driving_force",
            )
        if inner.output_spec[force] is not Scalar:
            raise self.error(
                f"driving force '{force}' is a {inner.output_spec[force].__name__}, not a Scalar",
                "driving_force",
            )
        self.model = inner
        self._rate, self._force = rate, force
        self._index = list(inner.output_spec).index(force)
        for n, typ in inner.input_spec.items():
            if n != rate:
                self.declare_input(n, typ)
        if not any(n != rate for n in inner.input_spec):
            raise self.error("the path model has no input besides the rate", "model")
        self.nl_providers.update(inner.nl_providers)

    def forward(self, *args: TensorWrapper):
        vals = {n: x.primal() for n, x in zip(self.input_spec, args, strict=True)}
        ref = next(iter(vals.values()))
        zero = seed(Scalar(torch.zeros((), dtype=ref.dtype, device=ref.device)), _LEAF)
        vals[self._rate] = zero
        inner = self.model
        f = _as_tuple(inner(*[vals[n] for n in inner.input_spec]))[self._index]
        coupling = Scalar(-_tangent(f, _LEAF), f.sub_batch_ndim)
        return coupling, f.primal()


@register()
class CoordinateDescentPredictor(Model):
    """Gauss-Seidel coordinate descent on ``φ(γ̇) + A γ̇ = b``: a warm start of the rates.

    ``rate_law`` is the explicit rate law ``γ̇ = φ⁻¹(w)`` (driving force
    ``driving_force_input`` in, its single output the rate); its other inputs become
    inputs of this model (a per-component one, with one sub-batch axis of length
    ``m``, is read per component). ``b`` (``trial_driving_force``) is a Scalar
    sub-batched over ``(m,)`` and ``A`` (``coupling``) over ``(m, m)``, or both plain
    Scalars for one coordinate (viscoplasticity). Starting from ``γ̇ = 0``, each of
    ``sweeps`` sweeps solves, component by component,
    ``w + A_ii φ⁻¹(w) = c_i = b_i - Σ_{j≠i} A_ij γ̇_j`` for the driving force ``w``,
    whose root lies in ``[0, c_i]`` (``A_ii ≥ 0``). In the first sweep the bracket is
    narrowed by ``bisections`` halvings (evaluated as a grid of up to 257 points per
    round, the same bracket as halving one at a time for a monotone law); then
    ``polish`` Newton steps with the rate law's own tangent, kept in the bracket, start
    from its middle (first sweep) or from the coordinate's ``w`` of the sweep before;
    ``γ̇_i = φ⁻¹(w)``, linearized at the last step. Output ``rate``: laid out like ``b``.
    """

    fields = (
        model_ref("rate_law", doc="the explicit rate law: driving force in, rate out"),
        option("driving_force_input", str, doc="which input of 'rate_law' is the driving force"),
        input("coupling", Scalar, doc="A: sub-batched (m, m), or a Scalar for one coordinate"),
        input(
            "trial_driving_force",
            Scalar,
            doc="b: the driving force with every rate at zero, sub-batched (m,) or a Scalar",
        ),
        output("rate", Scalar, doc="the predicted rates, laid out like trial_driving_force"),
        option("sweeps", int, 16, doc="Gauss-Seidel sweeps"),
        option("bisections", int, 16, doc="halvings of each coordinate's bracket [0, c]"),
        option("polish", int, 3, doc="Newton steps after the bracketing"),
    )

    def setup(self) -> None:
        law = _check_model(self, "rate_law")
        force = self.opts["driving_force_input"]
        if force not in law.input_spec:
            raise self.error(
                f"'{force}' is not an input of the rate law (its inputs: "
                f"{', '.join(law.input_spec) or 'none'})",
                "driving_force_input",
            )
        if law.input_spec[force] is not Scalar:
            raise self.error(
                f"'{force}' is a {law.input_spec[force].__name__}, not a Scalar",
                "driving_force_input",
            )
        if len(law.output_spec) != 1 or next(iter(law.output_spec.values())) is not Scalar:
            raise self.error(
                "the rate law must have exactly one (Scalar) output, the rate; it has "
                f"{', '.join(law.output_spec) or 'none'}",
                "rate_law",
            )
        for opt in ("sweeps", "bisections", "polish"):
            if self.opts[opt] < 0:
                raise self.error(f"must not be negative, got {self.opts[opt]}", opt)
        self.rate_law = law
        self._force = force
        for n, typ in law.input_spec.items():
            if n == force:
                continue
            if n in self.input_spec:
                raise self.error(
                    f"rate law input '{n}' clashes with an input of this model", "rate_law"
                )
            self.declare_input(n, typ)
        self.nl_providers.update(law.nl_providers)

    # ------------------------------------------------------------------ pieces
    def _law(self, w: torch.Tensor, pt: dict[str, TensorWrapper], tangent: bool = False):
        """The rate at driving force *w* (raw, no sub-batch); with its derivative."""
        x = Scalar(w)
        if tangent:
            x = seed(x, _LEAF)
        law = self.rate_law
        args = [x if n == self._force else pt[n] for n in law.input_spec]
        g = _as_tuple(law(*args))[0]
        if not tangent:
            return g.data
        return g.data, _tangent(g, _LEAF)

    def _bracket(self, aii: torch.Tensor, c: torch.Tensor, pt) -> torch.Tensor:
        """The driving force ``w`` at the middle of the root's bracket in ``[0, c]``,
        narrowed by ``bisections`` halvings."""
        sign = torch.where(c < 0, -1.0, 1.0).to(c.dtype)

        def residual(s: torch.Tensor) -> torch.Tensor:  # increasing in s on [0, 1]
            w = s * c
            return sign * (w + aii * self._law(w, pt) - c)

        lo = torch.zeros_like(c)
        width = torch.ones_like(c)
        left = self.opts["bisections"]
        while left > 0:
            k = min(left, 8)
            left -= k
            n = 2**k
            steps = torch.arange(1, n, dtype=c.dtype, device=c.device)
            steps = steps.reshape(-1, *([1] * c.dim()))
            h = width / n
            r = residual(lo + steps * h)
            below = (r < 0).to(c.dtype).sum(0)  # the grid points left of the root
            lo = lo + below * h
            width = h
        return (lo + 0.5 * width) * c

    def _coordinate(
        self, aii: torch.Tensor, c: torch.Tensor, pt, w0: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The rate solving ``w + aii φ⁻¹(w) = c``, found in the driving force ``w``, and
        that ``w``.

        Without *w0* (the first sweep) the root is bracketed first (:meth:`_bracket`);
        with it (this coordinate's ``w`` of the sweep before: ``c`` moves little from
        sweep to sweep) the Newton steps start there. Every iterate is kept in the
        bracket ``[0, c]``. The rate is the law linearized at the last Newton step (its
        error is second order in a step that is already small), so a coordinate costs
        ``polish`` rate-law evaluations after the first sweep."""
        lo, hi = torch.clamp(c, max=0.0), torch.clamp(c, min=0.0)
        w = self._bracket(aii, c, pt) if w0 is None else torch.clamp(w0, lo, hi)
        if self.opts["polish"] == 0:
            return self._law(w, pt), w
        for _ in range(self.opts["polish"]):
            g, dg = self._law(w, pt, tangent=True)
            w1 = torch.clamp(w - (w + aii * g - c) / (aii * dg + 1.0), lo, hi)
            g, w = g + dg * (w1 - w), w1
        return g, w

    def forward(self, coupling: Scalar, trial: Scalar, *rest: TensorWrapper) -> Scalar:
        A, b = coupling.primal(), trial.primal()
        pt = {n: x.primal() for n, x in zip(list(self.input_spec)[2:], rest, strict=True)}
        if b.sub_batch_ndim == 0:
            if A.sub_batch_ndim != 0:
                raise self.error(
                    f"trial_driving_force is a plain Scalar but coupling has "
                    f"{A.sub_batch_ndim} sub-batch axes (expected none)",
                    "coupling",
                )
            # one coordinate: a sweep is one exact solve, further sweeps repeat it
            if self.opts["sweeps"] == 0:
                return Scalar(torch.zeros_like(b.data))
            return Scalar(self._coordinate(A.data, b.data, pt)[0])
        m = int(b.sub_batch_shape[-1])
        if b.sub_batch_ndim != 1 or A.sub_batch_ndim != 2 or tuple(A.sub_batch_shape) != (m, m):
            raise self.error(
                f"trial_driving_force (sub-batch {tuple(b.sub_batch_shape)}) and coupling "
                f"(sub-batch {tuple(A.sub_batch_shape)}) do not form a system: expected (m,) "
                "and (m, m)",
                "coupling",
            )
        per = {n: (x.sub_batch_ndim == 1 and int(x.sub_batch_shape[0]) == m) for n, x in pt.items()}

        def component(i: int) -> dict[str, TensorWrapper]:
            return {
                n: type(x)(x.data.select(x.dynamic_ndim, i)) if per[n] else x for n, x in pt.items()
            }

        pts = [component(i) for i in range(m)]
        bd, Ad = b.data, A.data
        # the rates (*B, m), updated one coordinate at a time (Gauss-Seidel): component i
        # is replaced through a one-hot mask (no in-place write, so that it also traces)
        g = bd.new_zeros(torch.broadcast_shapes(bd.shape, Ad.shape[:-1]))
        onehot = torch.eye(m, dtype=torch.bool, device=bd.device)
        w: list[torch.Tensor | None] = [None] * m  # each coordinate's driving force
        for _ in range(self.opts["sweeps"]):
            for i in range(m):
                # c_i = b_i - sum_{j != i} A_ij g_j: the whole row, then the diagonal back
                aii = Ad[..., i, i]
                c = bd[..., i] - (Ad[..., i, :] * g).sum(-1) + aii * g[..., i]
                gi, w[i] = self._coordinate(aii, c, pts[i], w[i])
                g = torch.where(onehot[i], gi.unsqueeze(-1), g)
        return Scalar(g, 1)


__all__ = ["CoordinateDescentPredictor", "RateCondensation"]
