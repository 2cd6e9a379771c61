"""Spellings of the reference NEML2 (older releases, its tutorials) that neml2 writes
differently.

They are not accepted as synonyms: an input that uses one gets an error at its
file:line that names the current spelling ("did you mean ...?"), so that the input
is fixed once and stays unambiguous. Options carry their older spellings in
``Field.formerly`` (see :func:`neml2.models._schema.option`); this module holds the
renames that concern type names: the rotation type ``Rot`` (now ``MRP``) inside
option and type names, and the ``[Tensors]`` types that older releases had
(``FillSR2``, ``LinspaceScalar``, ...) and that a ``type = Python`` expression
replaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Tensor type names that the reference spelled differently: ours -> its older names.
FORMER_TENSOR_TYPES: dict[str, tuple[str, ...]] = {"MRP": ("Rot",)}


def former_type_tokens(type_name: str) -> tuple[str, ...]:
    """The older names of tensor type *type_name* (``"MRP"`` -> ``("Rot",)``)."""
    return FORMER_TENSOR_TYPES.get(type_name, ())


def former_pair_names(prefix: str, type_name: str, suffix: str, prefixes: Iterable[str] = ()):
    """The older spellings of the option ``<prefix>_<type_name>_<suffix>``.

    Args:
        prefix: the option's prefix (``"prescribed"``).
        type_name: its tensor type (``"MRP"``).
        suffix: ``"names"`` or ``"values"``.
        prefixes: older names of the prefix (``("force",)``).

    Returns:
        Every combination of a current or older prefix with a current or older type
        name, except the current spelling itself: for ``prescribed``/``MRP`` with
        ``force``: ``prescribed_Rot_names``, ``force_MRP_names``, ``force_Rot_names``.
    """
    current = f"{prefix}_{type_name}_{suffix}"
    names = [
        f"{p}_{t}_{suffix}"
        for p in (prefix, *prefixes)
        for t in (type_name, *former_type_tokens(type_name))
    ]
    return tuple(n for n in names if n != current)


#: Older ``[Tensors]`` types and the ``type = Python`` expression that replaces them.
_TENSOR_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Fill(Vec|SR2|R2|WR2|Rot|MRP)$"), "{T}.fill(...components)"),
    (re.compile(r"^Full(Scalar|Vec|SR2|R2|WR2|SSR4|Rot|MRP)$"), "{T}.full(value, batch_shape)"),
    (
        re.compile(r"^Linspace(Scalar|Vec|SR2|R2|WR2|SSR4|Rot|MRP|Tensor)$"),
        "linspace(start, end, steps)",
    ),
    (re.compile(r"^Logspace(Scalar|Vec|Tensor)$"), "logspace(start, end, steps)"),
    (re.compile(r"^Identity(SR2|R2|SSR4|Tensor)?$"), "{T}.identity()"),
    (
        re.compile(r"^(Scalar|Vec|SR2|R2|WR2|SSR4|Rot|MRP)$"),
        "{T}(torch.tensor([...], dtype=torch.float64))",
    ),
)


def former_tensor_hint(type_name: str) -> str | None:
    """A hint for an older ``[Tensors]`` type, or None when *type_name* is none of them.

    Args:
        type_name: the ``type`` of a ``[Tensors]`` block that is not registered.

    Returns:
        ``" (did you mean type = Python with expr = 'SR2.fill(...)'? ...)"``: the
        expression that builds the same value here.
    """
    for pattern, expr in _TENSOR_FAMILIES:
        m = pattern.match(type_name)
        if m is None:
            continue
        typ = (m.group(1) if m.groups() else None) or "SR2"
        typ = "MRP" if typ == "Rot" else typ
        example = expr.format(T=typ)
        return (
            f" (did you mean 'type = Python' with expr = '{example}'? '{type_name}' is an "
            "older NEML2 [Tensors] type; here a [Tensors] block is a Python expression "
            "(see neml2-syntax Python) or a CSV column)"
        )
    return None


def former_type_hint(type_name: str, known: Iterable[str]) -> str | None:
    """`` (did you mean 'CopyMRP'? ...)`` when *type_name* is a registered type with
    an older tensor type name in it (``CopyRot``), else None."""
    known = set(known)
    for ours, olds in FORMER_TENSOR_TYPES.items():
        for old in olds:
            # the old name as a token, not the start of a longer word (Rot, not Rotation)
            candidate = re.sub(re.escape(old) + r"(?![a-z])", ours, type_name)
            if candidate != type_name and candidate in known:
                return (
                    f" (did you mean '{candidate}'? older NEML2 called the rotation type "
                    f"'{old}', now '{ours}')"
                )
    return None
