"""Attach tangents to inputs and read them back as typed values.

This is the bridge to the model contract: ``v[in_name][leaf]`` is a typed value whose
data has a leading seed axis ``(K, *B, *sub, *base_in)``; ``v2[in_name][a][b]`` has two
``(K_a, K_b, ...)``. :func:`attach` turns one input's ``v[in_name]`` (and ``v2[in_name]``)
into tangents carried by the input value; after the forward, :func:`tangents_of` /
:func:`tangents2_of` give ``v_out[out_name]`` / ``v2_out[out_name]`` back.

Example (a forward written once, derivatives for free)::

    e = attach(strain, v["strain"])                 # strain carries d strain / d leaves
    s = C @ e                                       # every op propagates tangents
    v_out = {"stress": tangents_of(s)}              # {leaf: SR2 (K, *B; 6)}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from neml2.tensors._base import TensorWrapper
from neml2.tensors._broadcast import _region_broadcast, insert_singletons
from neml2.tensors._errors import ShapeError
from neml2.tensors._regions import expand_full
from neml2.tensors._tangents import pad_after_seed


def _direction(value: TensorWrapper, d: Any, nseed: int) -> torch.Tensor:
    """Normalise a seed direction to ``(*seed, ...)`` with ``nseed + value.ndim`` dims."""
    if isinstance(d, TensorWrapper):
        if tuple(d.base_shape) != tuple(value.base_shape):
            raise ShapeError(
                f"tangent of base {tuple(d.base_shape)} cannot seed a "
                f"{type(value).__name__} of base {tuple(value.base_shape)}"
            )
        extra = value.sub_batch_ndim - d.sub_batch_ndim
        if extra < 0:
            raise ShapeError(
                f"tangent has {d.sub_batch_ndim} sub-batch axes, the value only "
                f"{value.sub_batch_ndim}"
            )
        t = insert_singletons(d.data, value.base_ndim + d.sub_batch_ndim, extra)
    else:
        t = torch.as_tensor(d)
    if t.dim() < nseed + value.base_ndim:
        raise ShapeError(f"tangent of shape {tuple(t.shape)} lacks its {nseed} seed axes")
    t = pad_after_seed(t.to(value.dtype) if t.dtype != value.dtype else t, nseed, value.data.dim())
    # a plain-Python check: torch.broadcast_shapes imports torch._refs (seconds) on first use
    if _region_broadcast([tuple(t.shape[nseed:]), tuple(value.data.shape)]) is None:
        raise ShapeError(
            f"tangent of shape {tuple(t.shape)} (seed axes {nseed}) does not broadcast "
            f"against {type(value).__name__} of shape {tuple(value.data.shape)}"
        )
    return t


def identity_seed(value: TensorWrapper) -> torch.Tensor:
    """The identity seed ``(K, *base)`` with ``K = prod(base)`` (full Jacobian)."""
    base = tuple(value.base_shape)
    k = 1
    for s in base:
        k *= s
    return torch.eye(k, dtype=value.dtype, device=value.device).reshape(k, *base)


def seed(
    value: TensorWrapper,
    leaf: str,
    direction: Any = None,
    *,
    second_order: bool = False,
) -> TensorWrapper:
    """Return ``value`` carrying the tangent ``direction`` with respect to seed ``leaf``.

    Args:
        value: The value to seed; its existing tangents are kept.
        leaf: The seed (leaf) name.
        direction: A ``(K, *B, *sub, *base)`` tensor or typed value with a leading ``K``
            axis. ``None`` seeds the identity (``K = prod(base)``, i.e. the full Jacobian
            with respect to ``value``).
        second_order: Turn second-order propagation on (all ordered pairs of leaves are
            computed; their initial second-order tangents are zero).

    Returns:
        The same value (shared data) with the tangent attached.
    """
    d = identity_seed(value) if direction is None else direction
    t = _direction(value, d, 1)
    t1 = dict(value.tangents or {})
    t1[leaf] = t
    t2 = value.tangents2
    if second_order and t2 is None:
        t2 = {}
    return value._new(value.data, value.sub_batch_ndim, t1, t2)


def attach(
    value: TensorWrapper,
    v: Mapping[str, Any] | None,
    v2: Mapping[str, Mapping[str, Any]] | None = None,
) -> TensorWrapper:
    """Attach the contract's ``v[in_name]`` (and ``v2[in_name]``) to ``value``.

    Args:
        value: The primal value; its own tangents are replaced.
        v: ``{leaf: direction}``, each a ``(K, *B, *sub, *base)`` typed value or tensor;
            ``None`` or empty for none.
        v2: ``{a: {b: direction}}``, each ``(K_a, K_b, *B, *sub, *base)``. Passing it (even
            ``{}``) turns second-order propagation on.

    Returns:
        The value carrying the tangents; the primal itself when there are none.
    """
    t1 = {leaf: _direction(value, d, 1) for leaf, d in (v or {}).items()}
    t2 = None
    if v2 is not None:
        t2 = {}
        for a, inner in v2.items():
            for b, d in inner.items():
                t2[(a, b)] = _direction(value, d, 2)
    if not t1 and t2 is None:
        return value.primal()
    return value._new(value.data, value.sub_batch_ndim, t1, t2)


def tangent_wrapper(value: TensorWrapper, t: torch.Tensor, nseed: int) -> TensorWrapper:
    """Wrap a raw tangent as the value's type with the seed axes as leading batch axes."""
    full = expand_full(t, nseed, value.data.shape)
    return value._new(full, value.sub_batch_ndim)


def tangents_of(value: TensorWrapper) -> dict[str, TensorWrapper]:
    """The first-order tangents of a value, as typed values.

    Args:
        value: The value.

    Returns:
        ``{leaf: tangent}``, each of the value's type at ``(K, *B, *sub, *base)``;
            structural zeros are absent (``{}`` without tangents).
    """
    if value.tangents is None:
        return {}
    return {k: tangent_wrapper(value, t, 1) for k, t in value.tangents.items()}


def tangents2_of(value: TensorWrapper) -> dict[str, dict[str, TensorWrapper]]:
    """The second-order tangents of a value, as typed values.

    Args:
        value: The value.

    Returns:
        ``{a: {b: tangent}}``, each of the value's type at
            ``(K_a, K_b, *B, *sub, *base)``; structural zeros are absent.
    """
    out: dict[str, dict[str, TensorWrapper]] = {}
    for (a, b), t in (value.tangents2 or {}).items():
        out.setdefault(a, {})[b] = tangent_wrapper(value, t, 2)
    return out


def jacobian_block(value: TensorWrapper, leaf: str, in_base_shape=None):
    """Jacobian block ``d value / d leaf`` as a dynamic-base Tensor.

    For a leaf seeded with the identity (:func:`seed` without direction,
    ``K = prod(in_base)``).

    Args:
        value: The output value, carrying tangents.
        leaf: The seed name.
        in_base_shape (Sequence[int] | None): The leaf's base shape; default ``(K,)``.

    Returns:
        (Tensor | None): At ``(*B, *sub, *out_base, *in_base)`` with base
            ``(*out_base, *in_base)``; ``None`` when the block is a structural zero.
    """
    from neml2.tensors._tensor import Tensor

    if value.tangents is None or leaf not in value.tangents:
        return None
    t = value.tangents[leaf]
    k = t.shape[0]
    in_base = (k,) if in_base_shape is None else tuple(in_base_shape)
    full = expand_full(t, 1, value.data.shape).movedim(0, -1)
    full = full.reshape(*value.data.shape, *in_base)
    return Tensor(full, value.base_ndim + len(in_base), value.sub_batch_ndim)
