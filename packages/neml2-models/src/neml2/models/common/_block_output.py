"""Parameter-like models whose output variable is named after their HIT block.

In the reference library a model that computes a parameter (an interpolation, an
Arrhenius law, ...) names its output after its ``[Models]`` block unless the output
option is given, so ``[E] type = ScalarLinearInterpolation`` provides ``E``.
"""

from __future__ import annotations

from typing import ClassVar

from neml2.models._model import Model
from neml2.models._schema import Schema


class BlockNamedOutput(Model):
    """Base: the output option ``OUTPUT_OPTION`` defaults to the HIT block name.

    Built from Python (no block), the field's own default applies.
    """

    OUTPUT_OPTION: ClassVar[str] = "output"

    @classmethod
    def from_hit(cls, node, ctx) -> Model:
        values = Schema.of(cls).read_hit(node, ctx)
        values.setdefault(cls.OUTPUT_OPTION, node.name)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)
