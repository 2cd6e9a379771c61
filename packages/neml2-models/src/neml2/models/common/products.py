"""Products of variables: ``a Π_i v_i^(±1)`` of Scalars, ``A B`` of second-order tensors."""

from __future__ import annotations

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._fields import variable
from neml2.tensors import R2, Scalar


@register()
class ScalarMultiplication(Model):
    """``to = a Π_i v_i^(s_i)`` with ``s_i = -1`` where ``reciprocal`` is true, else ``+1``.

    ``from`` lists the Scalar variables ``v_i`` (shape ``(*B,)``); ``scaling``
    ``a`` (default ``1``) is a Scalar literal, a ``[Tensors]`` name, another
    model's output or a variable name (then an input of this model);
    ``reciprocal`` takes one flag per variable, or one for all of them.
    """

    fields = (
        option("from", str, many=True, doc="the Scalar variables to multiply"),
        variable("to", Scalar, output=True, doc="the product"),
        parameter("scaling", Scalar, 1.0, doc="the coefficient a multiplying the product"),
        option(
            "reciprocal",
            bool,
            (False,),
            many=True,
            doc="divide by the variable instead (one flag per variable, or one for all)",
        ),
    )

    def setup(self) -> None:
        names = list(self.opts["from"])
        if not names:
            raise self.error("needs at least one variable to multiply", "from")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise self.error(f"variable(s) listed twice: {', '.join(dup)}", "from")
        for n in names:
            self.declare_input(n, Scalar)
        inv = list(self.opts["reciprocal"])
        if len(inv) not in (1, len(names)):
            raise self.error(f"expected 1 or {len(names)} entries, got {len(inv)}", "reciprocal")
        self._reciprocal = inv * len(names) if len(inv) == 1 else inv

    def forward(self, *xs: Scalar) -> Scalar:
        out = self.param("scaling")
        for x, inv in zip(xs, self._reciprocal, strict=True):
            out = out / x if inv else out * x
        return out


@register()
class R2Multiplication(Model):
    """``to = op_A(A) op_B(B)`` for R2 variables ``A``, ``B`` (shape ``(*B, 3, 3)``).

    ``op_X(X)`` is ``X``, ``X⁻¹`` (``invert_X``), ``Xᵀ`` (``transpose_X``) or
    ``X⁻ᵀ`` (both; the inverse is taken first).
    """

    fields = (
        variable("A", R2, doc="the left factor A"),
        variable("B", R2, doc="the right factor B"),
        variable("to", R2, output=True, doc="the product"),
        option("invert_A", bool, False, doc="use the inverse of A"),
        option("transpose_A", bool, False, doc="use the transpose of A"),
        option("invert_B", bool, False, doc="use the inverse of B"),
        option("transpose_B", bool, False, doc="use the transpose of B"),
    )

    def _op(self, x: R2, which: str) -> R2:
        if self.opts[f"invert_{which}"]:
            x = x.inv()
        if self.opts[f"transpose_{which}"]:
            x = x.transpose()
        return x

    def forward(self, a: R2, b: R2) -> R2:
        return self._op(a, "A").matmul(self._op(b, "B"))
