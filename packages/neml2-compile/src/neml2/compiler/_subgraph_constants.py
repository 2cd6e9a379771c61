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
