"""``NonlinearSystem``: which inputs of a model are unknowns and which outputs are residuals."""

from __future__ import annotations

from neml2.models._naming import RESIDUAL
from neml2.models._registry import register
from neml2.models._schema import Schema, derived, derived_name, model_ref, option
from neml2.tensors import FatalError


def _groups(text: str) -> list[list[str]]:
    return [g.split() for g in text.split(";")] if text.strip() else []


@register()
class NonlinearSystem:
    """``r(u; g) = 0``: the ``residuals`` outputs of ``model`` as functions of its ``unknowns``.

    ``unknowns`` / ``residuals`` may be split into groups with ``;`` (used by
    block solvers such as SchurComplement); ``residuals`` defaults to
    ``<unknown>_residual``. Every other input of the model is given.

    Attributes:
        model: the model computing the residuals.
        unknowns: the unknown variable names, all groups in order (``list[str]``).
        unknown_groups: the unknowns by group (``list[list[str]]``).
        residuals: the residual variable names, paired with :attr:`unknowns`
            by position (``list[str]``).
        residual_groups: the residuals by group (``list[list[str]]``).
        givens: the model's other inputs (``list[str]``).
        structure: one kind per unknown group, ``"dense"`` or ``"block"``
            (``list[str]``).
        opts: the option values, defaults filled in (``dict``).
    """

    SECTION = "EquationSystems"
    fields = (
        model_ref("model", doc="the model computing the residuals"),
        option("unknowns", str, doc="unknown variables (';' separates groups)"),
        option("residuals", str, "", doc="residual variables, default '<unknown>_residual'"),
        option(
            "structure",
            str,
            "",
            doc="per group: 'dense' or 'block' (each sub-batch entry's residuals depend on "
            "that entry's unknowns only: the Jacobian is seeded per entry)",
        ),
    )
    derives = (
        derived(
            RESIDUAL,
            "unknowns",
            output=True,
            renamed_by="residuals",
            doc="the residual paired with each unknown: an output of 'model'",
        ),
    )
    hit_name: str | None = None

    def __init__(self, *, _where: str = "NonlinearSystem", _locations=None, **values):
        """Make a system from its options and check it against the model.

        Args:
            _where: the text error messages start with (internal; :meth:`from_hit`
                passes the block's location).
            _locations (dict[str, str] | None): the location of each option by
                name (internal; from :meth:`from_hit`).
            **values (Any): the options: ``model`` (the :class:`~neml2.models.Model`
                computing the residuals; required), ``unknowns`` (names of input
                variables, ``;`` between groups; required), ``residuals`` (names
                of output variables, grouped the same way; default
                ``<unknown>_residual`` for each unknown), ``structure`` (per
                unknown group, ``dense`` or ``block``: each sub-batch entry's
                residuals depend on that entry's unknowns only, so the Jacobian
                is seeded per entry; default ``dense`` for all).

        Raises:
            FatalError: an unknown or missing option; no unknowns; residual
                groups that do not match the unknown groups in number or size;
                an unknown that is not an input of the model, or a residual
                that is not an output; an unknown and its residual of different
                shapes; a bad ``structure``.
        """
        self.opts = Schema.of(type(self)).fill_defaults(values, _where)
        loc = dict(_locations or {})
        self.model = self.opts["model"]
        self.unknown_groups = _groups(self.opts["unknowns"])
        self.unknowns = [u for g in self.unknown_groups for u in g]
        if not self.unknowns:
            raise FatalError(f"{loc.get('unknowns', _where)}: no unknowns given")
        if self.opts["residuals"].strip():
            self.residual_groups = _groups(self.opts["residuals"])
        else:
            self.residual_groups = [
                [derived_name(type(self), RESIDUAL, "unknowns", u) for u in g]
                for g in self.unknown_groups
            ]
        self.residuals = [r for g in self.residual_groups for r in g]
        where_r = loc.get("residuals", loc.get("unknowns", _where))
        if [len(g) for g in self.residual_groups] != [len(g) for g in self.unknown_groups]:
            raise FatalError(
                f"{where_r}: {len(self.residuals)} residuals in groups "
                f"{[len(g) for g in self.residual_groups]} do not match {len(self.unknowns)} "
                f"unknowns in groups {[len(g) for g in self.unknown_groups]}"
            )
        ins, outs = self.model.input_spec, self.model.output_spec
        missing = [u for u in self.unknowns if u not in ins]
        if missing:
            raise FatalError(
                f"{loc.get('unknowns', _where)}: unknown(s) {', '.join(missing)} are not inputs of "
                f"model '{self.model.hit_name}' (its inputs: {', '.join(ins)})"
            )
        missing = [r for r in self.residuals if r not in outs]
        if missing:
            raise FatalError(
                f"{where_r}: residual(s) {', '.join(missing)} are not outputs of model "
                f"'{self.model.hit_name}' (its outputs: {', '.join(outs)})"
            )
        for u, r in zip(self.unknowns, self.residuals, strict=True):
            if tuple(ins[u].BASE_SHAPE) != tuple(outs[r].BASE_SHAPE):
                raise FatalError(
                    f"{where_r}: unknown '{u}' ({ins[u].__name__}) and residual '{r}' "
                    f"({outs[r].__name__}) have different shapes"
                )
        self.givens = [n for n in ins if n not in self.unknowns]
        self.structure = self._structure(loc.get("structure", _where))

    #: the kinds a ``structure`` token may name
    STRUCTURES = ("dense", "block")

    def _structure(self, where: str) -> list[str]:
        """One kind per unknown group ('dense' where ``structure`` is not given)."""
        kinds = self.opts["structure"].split()
        if not kinds:
            return ["dense"] * len(self.unknown_groups)
        bad = [k for k in kinds if k not in self.STRUCTURES]
        if bad:
            raise FatalError(
                f"{where}: structure '{bad[0]}' is not one of {', '.join(self.STRUCTURES)}"
            )
        if len(kinds) != len(self.unknown_groups):
            raise FatalError(
                f"{where}: structure gives {len(kinds)} kind(s) ({' '.join(kinds)}) for "
                f"{len(self.unknown_groups)} unknown group(s); give one per group "
                "(groups are separated by ';' in unknowns)"
            )
        return kinds

    @classmethod
    def from_hit(cls, node, ctx):
        """Build the system of an ``[EquationSystems]`` block of an input file.

        Args:
            node (neml2.hit.Node): the block.
            ctx (neml2.models.InputFile): the input file being built;
                the ``model`` block is built first.

        Returns:
            (NonlinearSystem): The system; its errors name the file, line and column of the
                option at fault.

        Raises:
            FatalError: as for the constructor, or an unknown option or bad
                value in the block.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)
