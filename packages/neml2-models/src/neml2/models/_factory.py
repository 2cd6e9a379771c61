"""``load_model(path, name)``: build a model from a HIT input file.

Every failure is a :class:`neml2.tensors.FatalError` whose message starts with
the ``file:line:column`` of the offending block or option.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from neml2 import hit
from neml2.models._registry import lookup, registered_types
from neml2.tensors import FatalError


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = get_close_matches(word, choices, n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def parse_input(path: str | Path, overrides: Sequence[str] = ()) -> hit.Node:
    """Parse a HIT input file, turning HIT errors and a missing file into FatalError."""
    p = Path(path)
    if not p.is_file():
        raise FatalError(f"{p}: input file not found")
    try:
        return hit.parse_file(p, overrides=overrides)
    except hit.HitError as e:
        raise FatalError(str(e)) from e


def model_block(root: hit.Node, name: str, file: str) -> hit.Node:
    """The ``[Models]/<name>`` block, or a FatalError listing the models defined."""
    models = root.find("Models")
    if models is None:
        raise FatalError(f"{file}: no [Models] section; cannot load model '{name}'")
    block = models.find(name)
    if block is None:
        defined = [c.name for c in models.children()]
        raise FatalError(
            f"{models.location}: no model named '{name}' in [Models]"
            f"{_suggest(name, defined)}; defined: {', '.join(defined) or '(none)'}"
        )
    return block


def model_class(block: hit.Node) -> type:
    """The registered class named by the block's ``type`` option."""
    type_param = block.param("type")
    if type_param is None:
        raise FatalError(f"{block.location}: [Models/{block.name}] has no 'type' option")
    type_name = type_param.as_str()
    cls = lookup(type_name)
    if cls is None:
        known = registered_types()
        raise FatalError(
            f"{type_param.location}: unknown model type '{type_name}'"
            f"{_suggest(type_name, known)}; {len(known)} types are registered "
            "(list them with `neml2-syntax`)"
        )
    return cls


def load_model(path: str | Path, name: str, overrides: Sequence[str] = ()) -> Any:
    """Load the model *name* defined under ``[Models]`` in the HIT file *path* (py-eager).

    *overrides* are HIT command-line overrides such as ``Models/elasticity/E=2e5``.
    """
    root = parse_input(path, overrides)
    block = model_block(root, name, str(path))
    cls = model_class(block)
    build = getattr(cls, "from_hit", None)
    if build is None:
        raise FatalError(f"{block.location}: model type {cls.__name__} cannot be built from HIT")
    return build(block, root)
