"""Counting the aten operations a call makes (for tests of eager fast paths)."""

from __future__ import annotations

from collections import Counter

from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    """``with CountOps() as ops: ...``; then ``ops["mul"]`` is how many ``aten.mul`` calls
    (any overload) ran inside."""

    def __init__(self):
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))

    def __getitem__(self, name: str) -> int:
        return self.counts[name]


__all__ = ["CountOps"]
