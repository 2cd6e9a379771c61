"""``ComposedModel``: several models wired together by variable name."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from neml2.models._model import Model, _as_tuple, attribute_name, direct_calls, has_hooks
from neml2.models._registry import register
from neml2.models._schema import Schema, model_ref, option


@register("ComposedModel")
class ComposedModel(Model):
    """Evaluate ``models`` in dependency order; a child's output feeds every input of that name.

    Inputs are the variables some child consumes and no child provides; outputs
    are the variables no child consumes, plus ``additional_outputs``. Two
    children providing one variable is an error unless ``priority`` ranks them
    (the later in ``priority`` wins and runs after the others). A model whose
    parameter is another model's output pulls that model in automatically.
    """

    fields = (
        model_ref("models", many=True, doc="the models to compose"),
        option(
            "additional_outputs",
            str,
            (),
            many=True,
            doc="variables consumed inside the composition that should also be outputs",
        ),
        option(
            "priority",
            str,
            (),
            many=True,
            doc="model names, lowest priority first, that may provide the same variable",
        ),
    )

    def setup(self) -> None:
        """Register the children, order them by dependency and derive the variables.

        Inputs are the variables some child consumes and no child provides; outputs
        are the variables no child consumes, plus ``additional_outputs``.

        Raises:
            FatalError: If ``models`` is empty, two unranked children provide one
                variable, a child consumes its own output, the children depend on each
                other in a cycle, one variable has two types, or an additional output
                is provided by no child.
        """
        children: list[Model] = list(self.opts["models"])
        if not children:
            raise self.error("'models' is empty", "models")
        names = self._register_children(children)
        self._order = self._sort(children, names)
        self._wire()
        # second-order capable iff every child is (Normality checks it on the leaves)
        self.SUPPORTS_SECOND_ORDER = all(
            getattr(c, "SUPPORTS_SECOND_ORDER", True) for c in self._order
        )

    # ------------------------------------------------------------------ wiring
    def _register_children(self, children: list[Model]) -> list[str]:
        names: list[str] = []
        seen: set[int] = set()
        unique = []
        for i, c in enumerate(children):
            if id(c) in seen:
                continue
            seen.add(id(c))
            unique.append(c)
            base = attribute_name(c.hit_name) or f"model{i}"  # [yield] -> yield_
            name = base
            k = 1
            while name in names or _has_attribute(self, name):
                name = f"{base}_{k}"
                k += 1
            self.add_module(name, c)
            names.append(name)
        children[:] = unique
        return names

    def _sort(self, children: list[Model], names: list[str]) -> list[Model]:
        label = {id(c): (c.hit_name or n) for c, n in zip(children, names, strict=True)}
        rank = {n: i for i, n in enumerate(self.opts["priority"])}
        providers: dict[str, list[Model]] = {}
        for c in children:
            for v in c.output_spec:
                providers.setdefault(v, []).append(c)
        final: dict[str, Model] = {}
        before: dict[int, set[int]] = {id(c): set() for c in children}  # c depends on these
        for v, ps in providers.items():
            if len(ps) > 1:
                unranked = [label[id(p)] for p in ps if label[id(p)] not in rank]
                if unranked and _claims_rank(ps, v):
                    # output(priority=) claims: low, then unclaimed, then high (wins)
                    level = {"low": 0, None: 1, "high": 2}
                    rank_of = {id(p): level[p.output_priorities.get(v)] for p in ps}
                    ps = sorted(ps, key=lambda p: rank_of[id(p)])
                    for lo, hi in itertools.pairwise(ps):
                        before[id(hi)].add(id(lo))
                    final[v] = ps[-1]
                    continue
                if unranked:
                    raise self.error(
                        f"variable '{v}' is provided by more than one model "
                        f"({', '.join(label[id(p)] for p in ps)}); remove one or rank them "
                        "with 'priority'",
                        "models",
                    )
                ps = sorted(ps, key=lambda p: rank[label[id(p)]])
                for lo, hi in itertools.pairwise(ps):
                    before[id(hi)].add(id(lo))
            final[v] = ps[-1]
        for c in children:
            for v in c.input_spec:
                p = final.get(v)
                if p is c:
                    raise self.error(
                        f"model '{label[id(c)]}' consumes its own output '{v}'", "models"
                    )
                if p is not None:
                    before[id(c)].add(id(p))
        order: list[Model] = []
        done: set[int] = set()
        while len(order) < len(children):
            ready = [c for c in children if id(c) not in done and before[id(c)] <= done]
            if not ready:
                cycle = _find_cycle({k: before[k] - done for k in before if k not in done})
                raise self.error(
                    "the models depend on each other in a cycle: "
                    + " -> ".join(label[i] for i in cycle),
                    "models",
                )
            order.append(ready[0])
            done.add(id(ready[0]))
        self._final = {v: label[id(p)] for v, p in final.items()}
        return order

    def _wire(self) -> None:
        provided: dict[str, type] = {}
        consumed: dict[str, type] = {}
        for c in self._order:
            for v, t in c.input_spec.items():
                if v in provided:
                    _check_type(self, v, provided[v], t)
                elif v in consumed:
                    _check_type(self, v, consumed[v], t)
                else:
                    consumed[v] = t
                    self.declare_input(v, t)
            for v, t in c.output_spec.items():
                provided.setdefault(v, t)
        used = {v for c in self._order for v in c.input_spec}
        for v, t in provided.items():
            if v not in used:
                self.declare_output(v, t)
        for v in self.opts["additional_outputs"]:
            if v not in provided:
                raise self.error(
                    f"additional output '{v}' is not provided by any of the models "
                    f"(provided: {', '.join(provided)})",
                    "additional_outputs",
                )
            if v not in self.output_spec:
                self.declare_output(v, provided[v])

    # ------------------------------------------------------------------ evaluation
    def forward(self, *inputs):
        """Evaluate the children in dependency order.

        Args:
            *inputs (TensorWrapper): One typed value per input, in :attr:`input_spec`
                order, at ``(*B, *sub, *base)``.

        Returns:
            (TensorWrapper | tuple[TensorWrapper, ...]): The outputs in ``output_spec``
                order: one typed value, or a tuple of them when there are several.
        """
        values = dict(zip(self.input_spec, inputs, strict=True))
        direct = direct_calls()
        for c in self._order:
            args = [values[n] for n in c.input_spec]
            outs = c._call_within(args) if direct and not has_hooks(c) else _as_tuple(c(*args))
            values.update(zip(c.output_spec, outs, strict=True))
        out = tuple(values[n] for n in self.output_spec)
        return out if len(out) != 1 else out[0]

    @classmethod
    def from_hit(cls, node, ctx) -> Model:
        """Build the composition from its ``[Models]`` block.

        Besides the listed ``models``, the composition pulls in, transitively, every
        ``[Models]`` block that provides a promoted parameter of one of them.

        Args:
            node (hit.Node): The block.
            ctx (InputFile): The input file being read.

        Returns:
            The composed model.
        """
        values = Schema.of(cls).read_hit(node, ctx)
        values["models"] = with_providers(values["models"], ctx)
        locations = {p.name: str(p.location) for p in node.params()}
        return cls(_where=f"{node.location}: [{node.fullpath}]", _locations=locations, **values)


def with_providers(models: Sequence[Model], ctx: Any) -> list[Model]:
    """*models* plus, transitively, the [Models] providing their promoted parameters."""
    out = list(models)
    i = 0
    while i < len(out):
        for provider in out[i].nl_providers.values():
            if provider is not None:
                m = ctx.model(provider)
                if all(m is not o for o in out):
                    out.append(m)
        i += 1
    return out


def _check_type(model: Model, v: str, a: type, b: type) -> None:
    if a is not b:
        raise model.error(
            f"variable '{v}' is a {a.__name__} in one model and a {b.__name__} in another",
            "models",
        )


def _find_cycle(deps: dict[int, set[int]]) -> list[int]:
    """One cycle in the dependency graph ``node -> nodes it waits for``."""
    start = next(iter(deps))
    path: list[int] = []
    seen: dict[int, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = next(iter(sorted(deps[node] & deps.keys())))
    cyc = path[seen[node] :]
    return [*reversed(cyc), cyc[-1]] if len(cyc) > 1 else [node, node]


__all__ = ["ComposedModel", "with_providers"]


def _has_attribute(model: Model, name: str) -> bool:
    """Whether *model* has an attribute *name* already (a method, an option store such as
    ``opts``, a sub-model): ``add_module`` refuses such a name; a property that fails
    counts as taken."""
    try:
        return hasattr(model, name)
    except Exception:
        return True


def _claims_rank(providers: list[Model], variable: str) -> bool:
    """Do the providers' ``output_priorities`` claims order them with one winner?"""
    claims = [p.output_priorities.get(variable) for p in providers]
    if all(c is None for c in claims):
        return False
    level = {"low": 0, None: 1, "high": 2}
    levels = sorted(level[c] for c in claims)
    return len(set(levels)) == len(levels)
