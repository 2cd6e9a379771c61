"""Linear combinations ``u = sum_i w_i v_i + b`` of variables of one type."""

from __future__ import annotations

from typing import ClassVar

import torch

from neml2.models._model import Model
from neml2.models._registry import register
from neml2.models._schema import option, parameter
from neml2.models.common._fields import variable
from neml2.tensors import R2, SR2, Scalar, TensorWrapper, Vec
from neml2.tensors._tangents import _tracing


class LinearCombination(Model):
    """``u = sum_i w_i v_i + b`` over the variables listed in ``from``.

    ``weights`` takes one value per variable, or a single value for all of
    them (default ``1``); each weight is a Scalar literal, a ``[Tensors]``
    name, another model's output or a variable name (then an input of this
    model). The optional ``offset`` ``b`` is a Scalar added to every
    component. Weights are constants (buffers) unless ``weight_as_parameter``
    says otherwise (the same for ``offset`` / ``offset_as_parameter``).
    Parameter names: ``w_0, w_1, ...`` and ``b``.

    Eagerly, a constant weight of exactly ``1`` or ``-1`` (a one-element buffer, the
    ``weights = '1 -1'`` of a strain split) adds or subtracts its variable instead of
    multiplying by it: one pass over the values and each tangent instead of three. The
    value is read from the buffer itself and read again once the buffer is replaced or
    changed in place, so a weight set after loading is honoured. Traced graphs (py-jit,
    AOTI) keep the product, which the compiler fuses.
    """

    TYPE: ClassVar[type] = Scalar

    fields = (
        option("from", str, many=True, doc="the variables to combine"),
        parameter("weights", Scalar, (1.0,), many=True, doc="one weight per variable, or one"),
        option(
            "weight_as_parameter",
            bool,
            (False,),
            many=True,
            doc="declare each weight as a trainable parameter (one per weight, or one)",
        ),
        parameter("offset", Scalar, (), many=True, doc="a constant added to the sum (optional)"),
        option("offset_as_parameter", bool, False, doc="declare the offset as a parameter"),
    )

    def setup(self) -> None:
        names = list(self.opts["from"])
        if not names:
            raise self.error("needs at least one variable to combine", "from")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise self.error(f"variable(s) listed twice: {', '.join(dup)}", "from")
        for n in names:
            self.declare_input(n, self.TYPE)
        n = len(names)
        weights = list(self.opts["weights"])
        if len(weights) not in (1, n):
            raise self.error(f"expected 1 or {n} weights, got {len(weights)}", "weights")
        as_param = list(self.opts["weight_as_parameter"])
        if len(as_param) not in (1, n):
            raise self.error(
                f"expected 1 or {n} entries, got {len(as_param)}", "weight_as_parameter"
            )
        #: weight name -> (buffer, its version, its sign or None): see _unit_sign
        self._unit_signs: dict[str, tuple[torch.Tensor, int, int | None]] = {}
        if len(weights) == 1:
            weights = weights * n
        if len(as_param) == 1:
            as_param = as_param * n
        for i, (w, p) in enumerate(zip(weights, as_param, strict=True)):
            self.declare_parameter(f"w_{i}", Scalar, w, buffer=not p)
        offset = list(self.opts["offset"])
        if len(offset) > 1:
            raise self.error(f"takes one offset, got {len(offset)}", "offset")
        self._has_offset = bool(offset)
        if offset:
            as_param = self.opts["offset_as_parameter"]
            self.declare_parameter("b", Scalar, offset[0], buffer=not as_param)

    def _unit_sign(self, i: int, x: TensorWrapper) -> int | None:
        """``1`` / ``-1`` when weight *i* is a one-element constant buffer of exactly that
        value and *x*'s dtype, needing no gradient (eager calls only), else None:
        multiply."""
        name = f"w_{i}"
        if _tracing() or name in self._promoted_of:
            return None
        w = self._buffers.get(name)
        if w is None or w.numel() != 1 or w.dtype != x.dtype or w.requires_grad:
            return None  # (a weight given with requires_grad, say by functional_call)
        if torch._C._functorch.is_functorch_wrapped_tensor(w):
            return None  # under vmap / grad: its value is not one number to read
        cache = self._unit_signs
        seen = cache.get(name)
        if seen is None or seen[0] is not w or seen[1] != w._version:
            v = float(w)  # once per buffer value: a device sync at most that often
            seen = (w, w._version, 1 if v == 1.0 else (-1 if v == -1.0 else None))
            cache[name] = seen
        return seen[2]

    def forward(self, *xs: TensorWrapper) -> TensorWrapper:
        out = None
        for i, x in enumerate(xs):
            sign = self._unit_sign(i, x)
            if sign is None:
                term = self.param(f"w_{i}") * x
                out = term if out is None else out + term
            elif out is None:
                out = x if sign == 1 else -x
            else:
                out = out + x if sign == 1 else out - x
        if any(out is x for x in xs):
            out = out.clone()  # one variable of weight 1: an output never is an input
        if self._has_offset:
            b = self.param("b")
            if self.TYPE is Scalar:
                out = out + b
            else:
                out = out + b * self.TYPE.ones(dtype=out.dtype, device=out.device)
        return out


def _to(typ: type):
    return (variable("to", typ, output=True, doc=f"the combined {typ.__name__}"),)


@register()
class ScalarLinearCombination(LinearCombination):
    __doc__ = LinearCombination.__doc__
    TYPE = Scalar
    fields = _to(Scalar)


@register()
class VecLinearCombination(LinearCombination):
    __doc__ = LinearCombination.__doc__
    TYPE = Vec
    fields = _to(Vec)


@register()
class SR2LinearCombination(LinearCombination):
    __doc__ = LinearCombination.__doc__
    TYPE = SR2
    fields = _to(SR2)


@register()
class R2LinearCombination(LinearCombination):
    __doc__ = LinearCombination.__doc__
    TYPE = R2
    fields = _to(R2)
