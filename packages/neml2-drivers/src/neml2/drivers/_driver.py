"""``Driver``: base of the registered ``[Drivers]`` types."""

from __future__ import annotations

from typing import Any, ClassVar

from neml2.models._schema import Field, Schema
from neml2.tensors import FatalError


class Driver:
    """A registered ``[Drivers]`` block: options from ``fields``, work in ``run()``.

    ``run()`` returns True on success (a failed check returns False); bad input
    raises ``FatalError`` naming the file and line.
    """

    SECTION: ClassVar[str] = "Drivers"
    fields: ClassVar[tuple[Field, ...]] = ()
    hit_name: str | None = None

    def __init__(self, *, _where: str | None = None, _locations=None, _ctx=None, **values: Any):
        self._where = _where or type(self).__name__
        self._locations: dict[str, str] = dict(_locations or {})
        self.ctx = _ctx
        self.opts = Schema.of(type(self)).fill_defaults(values, self._where)
        self.setup()

    def setup(self) -> None:
        """Hook: check options that depend on each other."""

    def error(self, message: str, option: str | None = None) -> FatalError:
        return FatalError(f"{self._locations.get(option or '', self._where)}: {message}")

    def run(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def from_hit(cls, node, ctx) -> Driver:
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(
            _where=f"{node.location}: [{node.fullpath}]", _locations=locations, _ctx=ctx, **values
        )
