"""``NonlinearSystem``: which inputs of a model are unknowns and which outputs are residuals."""

from __future__ import annotations

from neml2.models._registry import register
from neml2.models._schema import Schema, model_ref, option
from neml2.tensors import FatalError


def _groups(text: str) -> list[list[str]]:
    return [g.split() for g in text.split(";")] if text.strip() else []


@register()
class NonlinearSystem:
    """``r(u; g) = 0``: the ``residuals`` outputs of ``model`` as functions of its ``unknowns``.

    ``unknowns`` / ``residuals`` may be split into groups with ``;`` (used by
    block solvers such as SchurComplement); ``residuals`` defaults to
    ``<unknown>_residual``. Every other input of the model is given.
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
    hit_name: str | None = None

    def __init__(self, *, _where: str = "NonlinearSystem", _locations=None, **values):
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
            self.residual_groups = [[f"{u}_residual" for u in g] for g in self.unknown_groups]
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
        values = Schema.of(cls).read_hit(node, ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)
