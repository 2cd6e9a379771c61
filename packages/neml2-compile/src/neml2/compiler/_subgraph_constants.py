"""Rewrite tensor constants inside higher-order-op subgraphs so AOT Inductor can lower them.

``torch.export`` lifts the constants of the top-level graph into graph inputs, but a
``torch.tensor(...)`` created inside a ``while_loop`` body (e.g. a Mandel factor or a
``SR2LinearCombination`` weight used by the Newton residual) stays a ``get_attr`` of the
body subgraph followed by ``aten.lift_fresh_copy``. AOT Inductor (torch 2.13) re-traces
the body under functionalization with that attribute already wrapped, and fails with
"Attempting to use FunctionalTensor on its own". Minimal repro (plain torch)::

    def body(i, y):
        return i + 1, y * torch.tensor([1.0, 2.0], dtype=y.dtype)
    ep = torch.export.export(M(), ...)      # M.forward: while_loop(cond, body, (i0, x))
    torch._inductor.aoti_compile_and_package(ep)   # RuntimeError: ... FunctionalTensor ...

The fix here: every such constant is rebuilt from its literal values inside the
subgraph (``scalar_tensor`` per element, ``stack``, ``view``), which Inductor folds back
into a constant after functionalization. Constants are small (weights, factors, slip
systems); a large one is refused with a clear error rather than bloating the graph.
"""

from __future__ import annotations

import torch

from neml2.tensors import FatalError

#: Largest subgraph constant (elements) rebuilt from literals.
MAX_INLINE = 4096

_aten = torch.ops.aten


def _rebuild(graph: torch.fx.Graph, value: torch.Tensor, before: torch.fx.Node) -> torch.fx.Node:
    flat = value.detach().to("cpu").flatten().tolist()
    kw = {"dtype": value.dtype, "device": value.device}
    with graph.inserting_before(before):
        if value.dim() == 0:
            return graph.call_function(_aten.scalar_tensor.default, (flat[0],), kw)
        elems = [graph.call_function(_aten.scalar_tensor.default, (v,), kw) for v in flat]
        if not elems:
            return graph.call_function(_aten.empty.memory_format, (list(value.shape),), kw)
        stacked = graph.call_function(_aten.stack.default, (elems,))
        return graph.call_function(_aten.view.default, (stacked, list(value.shape)))


def inline_subgraph_constants(ep: torch.export.ExportedProgram, what: str) -> int:
    """Replace ``get_attr`` tensor constants of every subgraph of *ep* (in place).

    Returns the number of constants rewritten; *what* names the graph in errors.
    """
    root = ep.graph_module
    count = 0
    for sub_name, sub in root.named_modules():
        if sub is root or not isinstance(sub, torch.fx.GraphModule):
            continue
        changed = False
        for node in list(sub.graph.nodes):
            if node.op != "get_attr":
                continue
            value = getattr(sub, node.target, None)
            if not isinstance(value, torch.Tensor):
                continue
            if value.numel() > MAX_INLINE:
                raise FatalError(
                    f"{what}: a tensor constant of shape {tuple(value.shape)} is created inside "
                    f"the loop body '{sub_name}'; neml2-compile inlines constants of at most "
                    f"{MAX_INLINE} elements there. Create it outside the loop or pass it as a "
                    "parameter."
                )
            new = _rebuild(sub.graph, value, node)
            new.meta = dict(node.meta)
            # the fresh tensor needs no lift: drop lift_fresh_copy users
            for user in list(node.users):
                if user.op == "call_function" and user.target in (
                    _aten.lift_fresh_copy.default,
                    _aten.lift_fresh.default,
                ):
                    user.replace_all_uses_with(new)
                    sub.graph.erase_node(user)
            node.replace_all_uses_with(new)
            sub.graph.erase_node(node)
            if hasattr(sub, node.target):
                delattr(sub, node.target)
            changed = True
            count += 1
        if changed:
            sub.graph.lint()
            sub.recompile()
    return count


# ------------------------------------------------------------- literals in loop bodies
_while_loop = getattr(torch.ops.higher_order, "while_loop", None)


def _literal_value(node) -> float | int | bool | None:
    """The value of a ``scalar_tensor(v)`` node (a literal parameter), else ``None``."""
    if (
        isinstance(node, torch.fx.Node)
        and node.op == "call_function"
        and node.target is _aten.scalar_tensor.default
        and isinstance(node.args[0], (int, float, bool))
    ):
        return node.args[0]
    return None


def _literal_powers(gm: torch.fx.GraphModule) -> int:
    """``pow(x, scalar_tensor(v))`` -> ``pow(x, v)`` in *gm*'s own graph.

    Inductor multiplies out a small integer exponent given as a number (``x*x`` for 2)
    and takes ``sqrt`` for 0.5; an exponent given as a tensor stays a call of ``pow``.
    """
    count = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not _aten.pow.Tensor_Tensor:
            continue
        base, exponent = node.args[:2]
        value = _literal_value(exponent)
        if value is None or isinstance(value, bool) or not isinstance(base, torch.fx.Node):
            continue
        base_val, exp_val = base.meta.get("val"), exponent.meta.get("val")
        # the tensor form keeps the base's dtype unless the exponent's promotes it
        if base_val is None or exp_val is None or base_val.dtype != exp_val.dtype:
            continue
        node.target = _aten.pow.Tensor_Scalar
        node.args = (base, value)
        count += 1
    return count


def inline_loop_literals(ep: torch.export.ExportedProgram) -> int:
    """Make the literal operands of every ``while_loop`` literals of its subgraphs too.

    A 0-dim parameter written into the graph as a literal (``scalar_tensor(v)``,
    ``_Graph.set_literals``) reaches a ``while_loop``'s condition and body as an operand,
    so the loop's kernels read it through a pointer: a Perzyna rate exponent of 2 was a
    call of libm's ``pow`` per point and Newton iteration (J2 radial return, 1e3
    points, one thread: a fifth of the samples). Each such operand's placeholder in the
    subgraphs is replaced by its own ``scalar_tensor(v)`` (the operand stays passed, now
    unused), nested loops included; then every ``pow`` with a literal exponent takes it
    as a number (:func:`_literal_powers`). Rewrites *ep* in place; returns the number of
    placeholders and powers rewritten.
    """
    return _inline_literals(ep.graph_module)


def _inline_literals(gm: torch.fx.GraphModule) -> int:
    count = _literal_powers(gm)
    loops = [
        n
        for n in gm.graph.nodes
        if n.op == "call_function" and _while_loop is not None and n.target is _while_loop
    ]
    uses: dict[str, int] = {}
    for node in loops:
        for attr in node.args[:2]:
            uses[attr.target] = uses.get(attr.target, 0) + 1
    for node in loops:
        cond_attr, body_attr, carried, additional = node.args[:4]
        for attr in (cond_attr, body_attr):
            sub = getattr(gm, attr.target)
            if uses[attr.target] == 1:  # a subgraph two loops share is left as it is
                holders = [n for n in sub.graph.nodes if n.op == "placeholder"]
                for j, operand in enumerate(additional):
                    value = _literal_value(operand)
                    holder = holders[len(carried) + j]
                    if value is None or not holder.users:
                        continue
                    with sub.graph.inserting_after(holders[-1]):
                        lit = sub.graph.call_function(
                            _aten.scalar_tensor.default, (value,), dict(operand.kwargs)
                        )
                    lit.meta = dict(holder.meta)
                    holder.replace_all_uses_with(lit)
                    count += 1
            count += _inline_literals(sub)
            sub.graph.lint()
            sub.recompile()
    gm.graph.lint()
    gm.recompile()
    return count
