"""The explicit chain rule of the seed's authoring contract.

Most neml2 leaves write no derivative code: their ``forward`` runs on typed values that
carry tangents, and the typed algebra propagates them. A leaf may instead propagate
tangents itself (the seed's form, ``forward(self, *inputs, v=None, v2=None, vh=None)``),
from local *actions*:

* a first-order action maps an incoming tangent of one input, a typed value
  ``(K, *B, *sub, *base_in)``, to its contribution to the output,
  ``(K, *B, *sub, *base_out)`` (for a linear map ``dy = A dx``: ``lambda dx: A * dx``);
* a second-order action ``actions_2[(i, j)](va, vb)`` maps one tangent of input ``i``
  (slot 1) and one of input ``j`` (slot 2), each shaped like its primal (no seed axis),
  to the bilinear term ``y''[va, vb]``.

Tangent dictionaries: ``v[name][leaf]`` (first order), ``v2[name][a][b]`` (second order,
leading axes ``(K_a, K_b)``); a missing entry is a structural zero. A leaf names its
variables in the actions and ``output_name`` by their HIT option names (``"stress"``);
they are translated to the names the input file gave them (``stress = 'S'``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from neml2.tensors import TensorWrapper

#: a first-order local action: incoming tangent of one input -> contribution to the output
ChainRuleAction = Callable[..., TensorWrapper]
#: a second-order local action: (slot-1 tangent, slot-2 tangent) -> bilinear contribution
SecondOrderChainRuleAction = Callable[..., TensorWrapper]
#: ``v[name][leaf]``: typed tangents with a leading seed axis K
ChainRuleDict = dict[str, dict[str, TensorWrapper]]
#: ``v2[name][a][b]``: typed tangents with leading seed axes (K_a, K_b)
SecondOrderChainRuleDict = dict[str, dict[str, dict[str, TensorWrapper]]]
#: one tangent (a typed value)
TangentAction = TensorWrapper


def _typed_tangent(model, name: str, t: Any) -> TensorWrapper:
    """A raw tensor tangent of input *name* as that input's type (seed axes batch)."""
    if isinstance(t, TensorWrapper):
        return t
    return model.input_spec[name](torch.as_tensor(t))


def _retag(contribution: TensorWrapper, output: TensorWrapper | None) -> TensorWrapper:
    """Give a contribution the output's sub-batch rank when it has more (an action may
    have broadcast a per-slip input against a global one)."""
    if output is None or contribution.sub_batch_ndim <= output.sub_batch_ndim:
        return contribution
    return type(contribution)(contribution.data, output.sub_batch_ndim)


def _resolved(model, name: str) -> str:
    """The variable name behind option *name* (a renamed input or output), else *name*."""
    return getattr(model, "var", {}).get(name) or name


def _add(bucket: dict, key: str, value: TensorWrapper) -> None:
    bucket[key] = value if key not in bucket else bucket[key] + value


def apply_chain_rule(
    model,
    v: Mapping[str, Mapping[str, Any]],
    output_name: str,
    actions: Mapping[str, ChainRuleAction],
    *,
    output: TensorWrapper | None = None,
) -> ChainRuleDict:
    """``{output_name: {leaf: sum_i actions[i](v[i][leaf])}}``."""
    out: dict[str, TensorWrapper] = {}
    for name, action in actions.items():
        name = _resolved(model, name)
        for leaf, t in (v or {}).get(name, {}).items():
            _add(out, leaf, _retag(action(_typed_tangent(model, name, t)), output))
    return {_resolved(model, output_name): out}


def _pairwise(action_2: SecondOrderChainRuleAction, va: TensorWrapper, vb: TensorWrapper):
    """``action_2`` on every pair of seed slices, stacked to ``(K_a, K_b, ...)``."""
    ka, kb = int(va.data.shape[0]), int(vb.data.shape[0])
    rows = []
    for i in range(ka):
        a = type(va)(va.data[i], va.sub_batch_ndim)
        for j in range(kb):
            rows.append(action_2(a, type(vb)(vb.data[j], vb.sub_batch_ndim)))
    first = rows[0]
    data = torch.broadcast_tensors(*[r.data for r in rows])
    stacked = torch.stack(data).reshape(ka, kb, *data[0].shape)
    return type(first)(stacked, first.sub_batch_ndim)


def apply_chain_rule_2(
    model,
    v: Mapping[str, Mapping[str, Any]],
    v2: Mapping[str, Mapping[str, Mapping[str, Any]]],
    output_name: str,
    actions_1: Mapping[str, ChainRuleAction],
    actions_2: Mapping[tuple[str, str], SecondOrderChainRuleAction],
    vh: Mapping[str, Mapping[str, Any]] | None = None,
) -> SecondOrderChainRuleDict:
    """Second-order tangents of the output: ``y''[a, b] = g''(v[i][a], w[j][b]) +
    g'(v2[i][a][b])`` with ``w = vh`` when given (only the ``v x vh`` pairs), else ``v``."""
    slot_b = vh if vh is not None else v
    acc: dict[str, dict[str, TensorWrapper]] = {}
    for (i, j), action_2 in actions_2.items():
        i, j = _resolved(model, i), _resolved(model, j)
        for a, ta in (v or {}).get(i, {}).items():
            for b, tb in (slot_b or {}).get(j, {}).items():
                va, vb = _typed_tangent(model, i, ta), _typed_tangent(model, j, tb)
                if va.data.shape[0] == 0 or vb.data.shape[0] == 0:
                    continue
                _add(acc.setdefault(a, {}), b, _pairwise(action_2, va, vb))
    for i, action_1 in actions_1.items():
        i = _resolved(model, i)
        for a, inner in (v2 or {}).get(i, {}).items():
            for b, t in inner.items():
                _add(acc.setdefault(a, {}), b, action_1(_typed_tangent(model, i, t)))
    return {_resolved(model, output_name): acc}


def propagate_tangents(
    model,
    v: Mapping[str, Mapping[str, Any]],
    output_name: str,
    actions_1: Mapping[str, ChainRuleAction],
    *,
    output: TensorWrapper | None = None,
    v2=None,
    actions_2: Mapping[tuple[str, str], SecondOrderChainRuleAction] | None = None,
    vh=None,
) -> tuple:
    """``(v_out,)``; ``(v_out, v2_out)`` with *v2*; ``(v_out, v2_out, vh_out)`` with *vh*."""
    v_out = apply_chain_rule(model, v, output_name, actions_1, output=output)
    if v2 is None and vh is None:
        return (v_out,)
    v2_out = apply_chain_rule_2(model, v, v2 or {}, output_name, actions_1, actions_2 or {}, vh=vh)
    if vh is None:
        return (v_out, v2_out)
    return (v_out, v2_out, apply_chain_rule(model, vh, output_name, actions_1, output=output))
