"""Counting the aten operations a call makes (for tests of eager fast paths)."""

from __future__ import annotations

from collections import Counter

from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    """``with CountOps() as ops: ...``; then ``ops["mul"]`` is how many ``aten.mul`` calls
    (any overload) ran inside, and ``ops.shapes["neg"]`` the shapes of their first
    tensor argument."""

    def __init__(self):
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.shapes: dict[str, list[tuple[int, ...]]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        self.counts[name] += 1
        first = args[0] if args else None
        shape = tuple(first.shape) if hasattr(first, "shape") else ()
        self.shapes.setdefault(name, []).append(shape)
        return func(*args, **(kwargs or {}))

    def __getitem__(self, name: str) -> int:
        return self.counts[name]


__all__ = ["CountOps"]
