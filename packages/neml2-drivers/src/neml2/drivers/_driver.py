"""``Driver``: base of the registered ``[Drivers]`` types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from neml2.models._schema import Field, Schema, option
from neml2.models._spellings import former_pair_names
from neml2.tensors import FatalError, TensorWrapper


def pair_fields(
    prefix: str, types: dict[str, type], what: str, formerly: tuple[str, ...] = ()
) -> tuple[Field, ...]:
    """``<prefix>_<Type>_names`` / ``<prefix>_<Type>_values`` options for every type.

    Args:
        prefix: the options' prefix (``"prescribed"``).
        types: tensor type name -> type.
        what: the start of each option's description.
        formerly: older names of the prefix in reference NEML2 inputs (``("force",)``);
            those spellings, and older type names (``Rot`` for ``MRP``), are answered
            with the current option's name.

    Returns:
        Two options per type, names then values.
    """
    out: list[Field] = []
    for t in types:
        for suffix in ("names", "values"):
            out.append(
                option(
                    f"{prefix}_{t}_{suffix}",
                    str,
                    (),
                    many=True,
                    doc=f"{what} {t} {suffix}",
                    formerly=former_pair_names(prefix, t, suffix, formerly),
                )
            )
    return tuple(out)


class Driver:
    """A registered ``[Drivers]`` block: options from ``fields``, work in ``run()``.

    ``run()`` returns True on success (a failed check returns False); bad input
    raises ``FatalError`` naming the file and line.
    """

    SECTION: ClassVar[str] = "Drivers"
    fields: ClassVar[tuple[Field, ...]] = ()
    hit_name: str | None = None

    def __init__(self, *, _where: str | None = None, _locations=None, _ctx=None, **values: Any):
        """Build a driver from option values (as :meth:`from_hit` does from a block).

        Args:
            _where: the block's location for messages (``file:line: [Drivers/name]``);
                default the class name.
            _locations (dict[str, str] | None): option name -> its ``file:line``.
            _ctx (neml2.models.InputFile | None): the input file the driver's
                ``model`` and tensors are looked up in.
            **values (Any): the options (``fields``); missing ones take their defaults.

        Raises:
            FatalError: a required option is missing or a value is invalid.
        """
        self._where = _where or type(self).__name__
        self._locations: dict[str, str] = dict(_locations or {})
        self.ctx = _ctx
        self.opts = Schema.of(type(self)).fill_defaults(values, self._where)
        self.setup()

    def setup(self) -> None:
        """Hook: check options that depend on each other."""

    def error(self, message: str, option: str | None = None) -> FatalError:
        """An error located at *option*'s line (or at the block).

        Args:
            message: what is wrong.
            option: the option the message is about (default ``None``: the block).

        Returns:
            A ``FatalError`` reading ``file:line: message`` (to raise).
        """
        return FatalError(f"{self._locations.get(option or '', self._where)}: {message}")

    def typed_pairs(
        self,
        prefix: str,
        types: dict[str, type],
        value_of: Callable[[type, str, str], TensorWrapper],
    ) -> dict[str, TensorWrapper]:
        """Read the :func:`pair_fields` options: ``{name: value_of(type, token, option)}``.

        Args:
            prefix: the options' prefix (``"prescribed"``, ``"ic"``, ``"input"``).
            types: tensor type name -> type (the ``<Type>`` of the option names).
            value_of: builds one value from its type, its token in ``*_values`` and
                the ``*_values`` option name (for messages).

        Returns:
            Variable name -> its typed value.

        Raises:
            FatalError: ``*_names`` and ``*_values`` differ in length, or a name is
                given twice (naming the option's line).
        """
        out: dict[str, TensorWrapper] = {}
        for tname, typ in types.items():
            names_opt, values_opt = f"{prefix}_{tname}_names", f"{prefix}_{tname}_values"
            names, values = self.opts[names_opt], self.opts[values_opt]
            if len(names) != len(values):
                raise self.error(
                    f"{names_opt} has {len(names)} entries but {values_opt} has {len(values)}",
                    values_opt,
                )
            for n, v in zip(names, values, strict=True):
                if n in out:
                    raise self.error(f"{prefix} variable '{n}' is given twice", names_opt)
                out[n] = value_of(typ, v, values_opt)
        return out

    def run(self) -> bool:  # pragma: no cover - abstract
        """Do the driver's work.

        Returns:
            True on success, False when a check ran and failed.

        Raises:
            FatalError: bad input (naming the file and line).
        """
        raise NotImplementedError

    @classmethod
    def from_hit(cls, node, ctx) -> Driver:
        """Build the driver of a ``[Drivers]`` block.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file it belongs to.

        Returns:
            The driver, its options read and checked.

        Raises:
            FatalError: an unknown, missing or invalid option (naming its line).
        """
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(
            _where=f"{node.location}: [{node.fullpath}]", _locations=locations, _ctx=ctx, **values
        )
