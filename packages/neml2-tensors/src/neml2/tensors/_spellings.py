"""Missing attributes of typed tensors, answered with what to use instead.

A newcomer often brings spellings from the reference library NEML2 (its tutorials use
``Scalar.linspace``, ``Scalar.from_value``, ``x.torch()``, ...) or from torch
(``x.exp()``, ``x.reshape(...)``). :func:`missing_attribute` writes the
``AttributeError`` message for such a name: ``did you mean`` with the spelling of this
package, or else the closest existing attribute names. It is called only after the
ordinary lookup failed (``__getattr__`` of the metaclass and of the instances), so it
costs nothing on any working path.
"""

from __future__ import annotations

from difflib import get_close_matches

#: ``name -> {class name or "*": what to use}`` for names looked up on a class
#: (``Scalar.linspace``) or an instance. ``{T}`` is replaced by the class name.
REFERENCE_SPELLINGS: dict[str, dict[str, str]] = {
    # factories (class attributes)
    "linspace": {
        "*": "neml2.tensors.linspace(start, end, steps) (start and end: numbers or {T} "
        "values; the new axis leads the dynamic batch, pass start.sub_batch / end.sub_batch "
        "to make it a sub-batch axis)"
    },
    "dynamic_linspace": {
        "*": "neml2.tensors.linspace(start.dynamic_batch, end.dynamic_batch, steps)"
    },
    "intmd_linspace": {"*": "neml2.tensors.linspace(start.sub_batch, end.sub_batch, steps)"},
    "logspace": {"*": "neml2.tensors.logspace(start, end, steps, base=10.0)"},
    "dynamic_logspace": {"*": "neml2.tensors.logspace(start, end, steps, base=10.0)"},
    "arange": {"*": "Scalar(torch.arange(start, end, step))"},
    "from_value": {
        "*": "{T}(value, dtype=like.dtype, device=like.device), or "
        "neml2.tensors.constant({T}, value, like=like)"
    },
    "empty": {
        "Tensor": "Tensor.zeros(batch_shape, base_shape)",
        "*": "{T}.zeros(batch_shape)",
    },
    "empty_like": {
        "Tensor": "Tensor.zeros(other.batch_shape, other.base_shape, other.sub_batch_ndim)",
        "*": "{T}.zeros_like(other)",
    },
    "zeros_like": {
        "Tensor": "Tensor.zeros(other.batch_shape, other.base_shape, other.sub_batch_ndim)"
    },
    "ones_like": {
        "Tensor": "Tensor.ones(other.batch_shape, other.base_shape, other.sub_batch_ndim)"
    },
    "full": {"Tensor": "Tensor(torch.full((*batch_shape, *base_shape), value), len(base_shape))"},
    "full_like": {
        "*": "{T}.full(value, other.batch_shape, other.sub_batch_ndim, dtype=other.dtype)"
    },
    "rand": {
        "MRP": "MRP.from_axis_angle(axis, angle) or MRP.from_matrix(R) with random inputs "
        "(there is no uniform sampler of rotations here)",
        "*": "{T}(torch.rand(*batch_shape, *{T}.BASE_SHAPE))",
    },
    "rand_like": {"*": "{T}(torch.rand_like(other.data), other.sub_batch_ndim)"},
    "fill_matrix": {"*": "MRP.from_matrix(R) (R: an R2 rotation matrix)"},
    "axis_angle": {"*": "MRP.from_axis_angle(axis, angle) (axis: a Vec, angle: a Scalar)"},
    "from_typed": {"*": "Tensor(x) (the base axes of x stay the base; tangents are kept)"},
    "sub_batch_cat": {
        "*": "{T}(torch.cat([a.data, b.data], dim), sub_batch_ndim) on the raw storage "
        "(neml2.tensors.cat joins dynamic batch axes)"
    },
    # instance attributes of the reference (C++-style names)
    "torch": {"*": "x.data (the raw storage: a torch.Tensor of shape (*batch, *base))"},
    "tensor": {"*": "Tensor(x) (the dynamic-base typed tensor)"},
    "batch_sizes": {"*": "x.batch_shape"},
    "base_sizes": {"*": "x.base_shape"},
    "dynamic_sizes": {"*": "x.dynamic_shape"},
    "dynamic_batch_shape": {"*": "x.dynamic_shape"},
    "intmd_sizes": {"*": "x.sub_batch_shape (the reference's intermediate axes)"},
    "batch_dim": {"*": "x.batch_ndim"},
    "base_dim": {"*": "x.base_ndim"},
    "dynamic_dim": {"*": "x.dynamic_ndim"},
    "intmd_dim": {"*": "x.sub_batch_ndim (the reference's intermediate axes)"},
    "intmd": {"*": "x.sub_batch (the reference's intermediate axes are sub-batch axes here)"},
    "dynamic": {"*": "x.dynamic_batch"},
    "ndim": {"*": "x.data.dim() (all axes), or x.batch_ndim / x.base_ndim"},
    "dim": {"*": "x.data.dim() (all axes), or x.batch_ndim / x.base_ndim"},
    "batched": {"*": "x.batch_ndim > 0"},
    "with_sub_batch_ndim": {"*": "x.sub_batch.retag(n)"},
    "requires_grad": {"*": "x.data.requires_grad"},
    "requires_grad_": {"*": "x.data.requires_grad_()"},
    "grad": {"*": "x.data.grad"},
    # torch.Tensor method spellings
    "sum": {"*": "x.batch.sum(dim) (or x.dynamic_batch.sum / x.sub_batch.sum)"},
    "mean": {"*": "x.batch.mean(dim) (or x.dynamic_batch.mean / x.sub_batch.mean)"},
    "reshape": {"*": "x.dynamic_batch.reshape(*shape) (or x.sub_batch.reshape)"},
    "view": {"*": "x.dynamic_batch.reshape(*shape) (or x.sub_batch.reshape)"},
    "flatten": {"*": "x.dynamic_batch.reshape(-1)"},
    "unsqueeze": {"*": "x.dynamic_batch.unsqueeze(dim) (or x.sub_batch.unsqueeze)"},
    "squeeze": {"*": "x.dynamic_batch.squeeze(dim) (or x.sub_batch.squeeze)"},
    "expand": {"*": "x.dynamic_batch.expand(*shape)"},
    "cpu": {"*": "x.to('cpu')"},
    "cuda": {"*": "x.to('cuda')"},
    "double": {"*": "x.to(torch.float64)"},
    "float": {"*": "x.to(torch.float32)"},
}

#: elementwise functions of ``neml2.tensors`` that torch users call as methods (``x.exp()``)
_ELEMENTWISE = (
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "arctan",
    "arccos",
    "abs",
    "pow",
    "clamp",
)
for _name in _ELEMENTWISE:
    REFERENCE_SPELLINGS.setdefault(
        _name,
        {"*": f"neml2.tensors.{_name}(x) (or torch.{_name}(x)), elementwise on Scalar and Tensor"},
    )
del _name


def article(type_name: str) -> str:
    """``a`` or ``an`` before a type name as read aloud (``an SR2``, ``an MRP``, ``a Vec``)."""
    acronym = len(type_name) > 1 and not type_name[1].islower()
    letters = "AEFHILMNORSX" if acronym else "AEIOU"  # letter names that start with a vowel
    return "an" if type_name[0] in letters else "a"


def suggestion(cls: type, name: str) -> str | None:
    """What to use instead of ``cls.name`` (``None`` when no spelling is known)."""
    if name in _ELEMENTWISE and not getattr(cls, "_elementwise", True):
        return (
            f"neml2.tensors.{name} on a Scalar invariant of the {cls.__name__} (e.g. "
            f"neml2.tensors.{name}(neml2.tensors.norm(x))); elementwise math is defined on "
            f"Scalar and Tensor only, the components of {article(cls.__name__)} "
            f"{cls.__name__} are not independent numbers"
        )
    entry = REFERENCE_SPELLINGS.get(name)
    if entry is None:
        return None
    for klass in cls.__mro__:
        text = entry.get(klass.__name__)
        if text is not None:
            break
    else:
        text = entry.get("*")
    return None if text is None else text.replace("{T}", cls.__name__)


def missing_attribute(cls: type, name: str, on_class: bool) -> str:
    """The ``AttributeError`` message for ``cls.name`` (or ``instance.name``).

    Args:
        cls: the typed tensor class.
        name: the attribute that the ordinary lookup did not find.
        on_class: the lookup was on the class (``Scalar.linspace``), not an instance.

    Returns:
        Python's usual message, plus ``did you mean ...?`` naming this package's
            spelling (or the closest existing attribute names) for public names.
    """
    owner = f"type object '{cls.__name__}'" if on_class else f"'{cls.__name__}' object"
    msg = f"{owner} has no attribute '{name}'"
    if name.startswith("_"):
        return msg
    hint = suggestion(cls, name)
    if hint is not None:
        return f"{msg}; did you mean {hint}?"
    public = [a for a in dir(cls) if not a.startswith("_")]
    close = get_close_matches(name, public, n=3, cutoff=0.75)
    if close:
        return f"{msg}; did you mean {', '.join(repr(c) for c in close)}?"
    return msg


__all__ = ["REFERENCE_SPELLINGS", "missing_attribute", "suggestion"]
