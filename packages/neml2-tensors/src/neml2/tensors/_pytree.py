"""Pytree registration: typed values flatten to plain tensors.

Children: ``[data, *tangents.values(), *tangents2.values()]``; context: sub-batch ndim,
base ndim and the tangent keys. So ``torch.export`` / ``torch.compile`` see only plain
tensors, and typed values can be inputs and outputs of exported programs.
"""

from __future__ import annotations

import torch.utils._pytree as pytree

from neml2.tensors._base import TensorWrapper


def _flatten(w: TensorWrapper):
    k1 = tuple(w.tangents) if w.tangents is not None else None
    k2 = tuple(w.tangents2) if w.tangents2 is not None else None
    children = [w.data]
    if k1:
        children += [w.tangents[k] for k in k1]
    if k2:
        children += [w.tangents2[k] for k in k2]
    return children, (w.sub_batch_ndim, w.base_ndim, k1, k2)


def _flatten_with_keys(w: TensorWrapper):
    children, ctx = _flatten(w)
    _, _, k1, k2 = ctx
    keys = [pytree.GetAttrKey("data")]
    keys += [pytree.MappingKey(f"d/{k}") for k in k1 or ()]
    keys += [pytree.MappingKey(f"d2/{a}/{b}") for a, b in k2 or ()]
    return list(zip(keys, children, strict=True)), ctx


def _unflattener(cls):
    def unflatten(children, ctx):
        sub, nb, k1, k2 = ctx
        it = iter(children)
        data = next(it)
        t1 = None if k1 is None else {k: next(it) for k in k1}
        t2 = None if k2 is None else {k: next(it) for k in k2}
        return cls._make(data, sub, t1, t2, nb)

    return unflatten


def _ctx_to_json(ctx):
    sub, nb, k1, k2 = ctx
    return {
        "sub": sub,
        "base": nb,
        "k1": list(k1) if k1 is not None else None,
        "k2": [list(k) for k in k2] if k2 is not None else None,
    }


def _json_to_ctx(d):
    k1 = tuple(d["k1"]) if d["k1"] is not None else None
    k2 = tuple(tuple(k) for k in d["k2"]) if d["k2"] is not None else None
    return (d["sub"], d["base"], k1, k2)


def register(cls: type[TensorWrapper]) -> None:
    """Register ``cls`` as a pytree node (idempotent)."""
    if cls in pytree.SUPPORTED_NODES:
        return
    pytree.register_pytree_node(
        cls,
        _flatten,
        _unflattener(cls),
        serialized_type_name=f"neml2.tensors.{cls.__name__}",
        flatten_with_keys_fn=_flatten_with_keys,
        to_dumpable_context=_ctx_to_json,
        from_dumpable_context=_json_to_ctx,
    )
