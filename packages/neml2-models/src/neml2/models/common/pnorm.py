"""Weighted p-norm of Scalar variables."""

from __future__ import annotations

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._fields import variable
from neml2.tensors import Scalar, where


@register()
class ScalarPNorm(Model):
    """``y = (Σ_i w_i |x_i|^p + ε)^(1/p)`` over the Scalar variables ``x_i`` of ``from``.

    Shapes ``(*B,)``. ``exponent`` ``p`` is a constant Scalar; ``weights`` takes
    one constant per variable, or one for all of them (default ``1``: the plain
    p-norm), trainable where ``weight_as_parameter`` says so (names ``w_0, w_1,
    ...``). ``ε`` is the machine epsilon of the dtype, which keeps ``y > 0``.
    ``|x|^p`` is evaluated as ``x² |x|^(p-2)``, exact at ``x = 0`` for ``p = 2``
    (second derivative ``2 w``) and zero there with zero slope for ``p > 1``.
    """

    fields = (
        option("from", str, many=True, doc="the Scalar variables"),
        variable("to", Scalar, output=True, doc="the weighted p-norm y"),
        parameter("exponent", Scalar, doc="the exponent p", allow_nonlinear=False),
        parameter(
            "weights",
            Scalar,
            (1.0,),
            many=True,
            allow_nonlinear=False,
            doc="one weight per variable, or one for all",
        ),
        option(
            "weight_as_parameter",
            bool,
            (False,),
            many=True,
            doc="declare each weight as a trainable parameter (one per weight, or one)",
        ),
    )

    def setup(self) -> None:
        names = list(self.opts["from"])
        if not names:
            raise self.error("needs at least one variable", "from")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise self.error(f"variable(s) listed twice: {', '.join(dup)}", "from")
        for n in names:
            self.declare_input(n, Scalar)
        n = len(names)
        weights = list(self.opts["weights"])
        if len(weights) not in (1, n):
            raise self.error(f"expected 1 or {n} weights, got {len(weights)}", "weights")
        as_param = list(self.opts["weight_as_parameter"])
        if len(as_param) not in (1, n):
            raise self.error(
                f"expected 1 or {n} entries, got {len(as_param)}", "weight_as_parameter"
            )
        weights = weights * n if len(weights) == 1 else weights
        as_param = as_param * n if len(as_param) == 1 else as_param
        for i, (w, p) in enumerate(zip(weights, as_param, strict=True)):
            self.declare_parameter(f"w_{i}", Scalar, w, buffer=not p)

    def forward(self, *xs: Scalar) -> Scalar:
        p = self.param("exponent")
        # lim_{x -> 0} |x|^(p-2): 1 for p = 2, taken as 0 otherwise (x² times it is 0)
        at_zero = Scalar((p.data == 2.0).to(p.dtype), p.sub_batch_ndim)
        total = None
        for i, x in enumerate(xs):
            x2 = x * x
            nz = x2 > 0.0
            safe = where(nz, x2, 1.0)
            term = self.param(f"w_{i}") * x2 * where(nz, safe ** ((p - 2.0) * 0.5), at_zero)
            total = term if total is None else total + term
        eps = torch.finfo(total.dtype).eps
        return (total + eps) ** (1.0 / p)
