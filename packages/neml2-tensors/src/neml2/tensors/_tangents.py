"""Forward-mode tangents (first and second order) on plain torch tensors.

A :class:`Dual` is a truncated multivariate Taylor expansion of a raw tensor ``p``:

* ``t1``: ``None`` (no tangents) or ``dict[leaf, Tensor]``; the tangent of ``p`` with
  respect to the seed leaf, shape ``(K, *shape_of_p)`` (sizes may be 1 where ``p``'s are
  not: a tangent only has to broadcast against ``p``).
* ``t2``: ``None`` (second order off) or ``dict[(leaf_a, leaf_b), Tensor]`` of shape
  ``(K_a, K_b, *shape_of_p)``.

A missing key is a structural zero: no zero tensor is ever materialised.

Every rule here acts on the *trailing* dimensions of its operands and lets torch
broadcast the leading ones, which is what keeps the seed axes leading. This only holds
when a tangent has exactly ``seed axes + ndim(p)`` dimensions and the primal operands
have been aligned to the output's batch rank first (see :mod:`neml2.tensors._broadcast`,
which inserts singleton axes after the seed axes). The typed wrappers guarantee both.

Each derivative rule sits next to its primal op: :meth:`Dual.lin` (linear maps),
:meth:`Dual.bilin` (bilinear maps: products, contractions), :meth:`Dual.unary`
(elementwise functions with first and second derivative), :func:`matrix_inverse`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Tangents1 = dict[str, torch.Tensor]
Tangents2 = dict[tuple[str, str], torch.Tensor]


def _acc(d: dict, k, v: torch.Tensor) -> None:
    """Accumulate ``v`` into ``d[k]`` (structural zero when absent)."""
    old = d.get(k)
    d[k] = v if old is None else old + v


def _dec(d: dict, k, v: torch.Tensor) -> None:
    """Subtract ``v`` from ``d[k]`` (one ``sub``, not ``neg`` + ``add``, when present)."""
    old = d.get(k)
    d[k] = -v if old is None else old - v


def _tracing() -> bool:
    """Whether Dynamo or ``torch.export`` is tracing the call (the graph is then fused by
    Inductor, so the eager-only layouts below stay out of it)."""
    return torch.compiler.is_compiling() or torch.compiler.is_exporting()


def laid_out_as(p: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """A factor *p* of an elementwise product (or a divisor) as a contiguous tensor of
    the product's *shape*, where it is broadcast there and holds more than one value.

    The factor then meets every tangent it scales (``(K, *shape)``) with the same
    contiguous trailing layout, and the products run as one vectorized loop over
    ``*shape`` instead of short inner loops over a broadcast axis: a per-point Scalar
    ``(N, 1)`` against SR2 tangents ``(6, N, 6)``, N = 3334, one thread: 80 -> 33 us per
    tangent, for one copy of ``N x 6`` values. The products are the same bits.
    """
    if p.shape == shape or p.numel() <= 1:
        return p
    return p.expand(shape).contiguous()


def pad_after_seed(t: torch.Tensor, nseed: int, ndim: int) -> torch.Tensor:
    """Insert singleton axes right after the ``nseed`` leading seed axes.

    Brings a tangent of a value with ``ndim`` dimensions to exactly ``nseed + ndim``
    dimensions (right-aligned, like torch broadcasting but keeping seeds leading).
    """
    while t.dim() < nseed + ndim:
        t = t.unsqueeze(nseed)
    if t.dim() != nseed + ndim:
        raise ValueError(
            f"tangent of shape {tuple(t.shape)} has more dimensions than "
            f"{nseed} seed axes + {ndim} value axes"
        )
    return t


class Dual:
    """A raw tensor with optional first/second-order forward tangents."""

    __slots__ = ("p", "t1", "t2")

    def __init__(
        self,
        p: torch.Tensor,
        t1: Tangents1 | None = None,
        t2: Tangents2 | None = None,
    ):
        self.p = p
        if t2 is not None and t1 is None:
            t1 = {}
        self.t1 = t1
        self.t2 = t2

    # ------------------------------------------------------------------ helpers
    @property
    def has_tangents(self) -> bool:
        return self.t1 is not None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        k1 = list(self.t1) if self.t1 is not None else None
        k2 = list(self.t2) if self.t2 is not None else None
        return f"Dual(p={tuple(self.p.shape)}, t1={k1}, t2={k2})"

    # ------------------------------------------------------------------ linear
    def lin(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Dual:
        """Apply a linear map acting on trailing dims: ``d fn(x) = fn(dx)``."""
        out = fn(self.p)
        if self.t1 is None:
            return Dual(out)
        t1 = {k: fn(v) for k, v in self.t1.items()}
        t2 = None if self.t2 is None else {k: fn(v) for k, v in self.t2.items()}
        return Dual(out, t1, t2)

    def __neg__(self) -> Dual:
        return self.lin(torch.neg)

    def __add__(self, other: Dual | float) -> Dual:
        if not isinstance(other, Dual):
            return Dual(self.p + other, self.t1, self.t2)
        out = self.p + other.p
        if self.t1 is None and other.t1 is None:
            return Dual(out)
        t1: Tangents1 = dict(self.t1 or {})
        for k, v in (other.t1 or {}).items():
            _acc(t1, k, v)
        t2 = None
        if self.t2 is not None or other.t2 is not None:
            t2 = dict(self.t2 or {})
            for k, v in (other.t2 or {}).items():
                _acc(t2, k, v)
        return Dual(out, t1, t2)

    __radd__ = __add__

    def __sub__(self, other: Dual | float) -> Dual:
        if not isinstance(other, Dual):
            return Dual(self.p - other, self.t1, self.t2)
        out = self.p - other.p
        if self.t1 is None and other.t1 is None:
            return Dual(out)
        t1: Tangents1 = dict(self.t1 or {})
        for k, v in (other.t1 or {}).items():
            _dec(t1, k, v)
        t2 = None
        if self.t2 is not None or other.t2 is not None:
            t2 = dict(self.t2 or {})
            for k, v in (other.t2 or {}).items():
                _dec(t2, k, v)
        return Dual(out, t1, t2)

    def __rsub__(self, other: float) -> Dual:
        return (-self) + other

    # ---------------------------------------------------------------- bilinear
    def bilin(self, other: Dual, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Dual:
        """Apply a bilinear map ``fn(a, b)``.

        ``d fn = fn(da, b) + fn(a, db)`` and
        ``d2 fn[i, j] = fn(d2a[i, j], b) + fn(a, d2b[i, j]) + fn(da[i], db[j]) + fn(da[j], db[i])``.

        Eagerly, for the elementwise product (*fn* ``torch.mul``), a factor broadcast at
        the product's shape is laid out there once (:func:`laid_out_as`) and a seed that
        both operands carry takes ``torch.addcmul(fn(da, b), a, db)``: one pass over the
        tangent instead of a product and a sum (a ``(6, N, 6)`` SR2 tangent, N = 3334, one
        thread: 66 -> 45 us). The multiply-add may round once where the two operations
        round twice (a fused multiply-add), so the last bit can differ from a traced
        graph's.
        """
        a, b = self, other
        out = fn(a.p, b.p)
        if a.t1 is None and b.t1 is None:
            return Dual(out)
        a1 = a.t1 or {}
        b1 = b.t1 or {}
        ap, bp = a.p, b.p
        fused = fn is torch.mul and not _tracing()
        if fused:
            ap = laid_out_as(ap, out.shape) if b1 else ap
            bp = laid_out_as(bp, out.shape) if a1 else bp
        t1: Tangents1 = {}
        for k, v in a1.items():
            t1[k] = fn(v, bp)
        for k, v in b1.items():
            old = t1.get(k) if fused else None
            if old is None:
                _acc(t1, k, fn(ap, v))
            else:  # da b + a db as one multiply-add pass over the tangent, not two
                t1[k] = torch.addcmul(old, ap, v)
        t2 = None
        if a.t2 is not None or b.t2 is not None:
            t2 = {}
            for k, v in (a.t2 or {}).items():
                _acc(t2, k, fn(v, b.p))
            for k, v in (b.t2 or {}).items():
                _acc(t2, k, fn(a.p, v))
            for ka, va in a1.items():
                for kb, vb in b1.items():
                    # pair (ka, kb): axes (K_ka, K_kb); pair (kb, ka): axes (K_kb, K_ka)
                    _acc(t2, (ka, kb), fn(va.unsqueeze(1), vb.unsqueeze(0)))
                    _acc(t2, (kb, ka), fn(va.unsqueeze(0), vb.unsqueeze(1)))
        return Dual(out, t1, t2)

    def __mul__(self, other: Dual | float) -> Dual:
        if not isinstance(other, Dual):
            return self.lin(lambda x: x * other)
        return self.bilin(other, torch.mul)

    __rmul__ = __mul__

    def __truediv__(self, other: Dual | float) -> Dual:
        if not isinstance(other, Dual):
            return self.lin(lambda x: x / other)
        if other.t1 is None:
            return self.lin(lambda x: x / other.p)
        return self * reciprocal(other)

    def __rtruediv__(self, other: float) -> Dual:
        return reciprocal(self) * other

    # ------------------------------------------------------------ elementwise
    def unary(
        self,
        f: Callable[[torch.Tensor], torch.Tensor],
        df: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        d2f: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None,
    ) -> Dual:
        """Elementwise ``f`` with derivatives ``df(x, f(x))`` and ``d2f(x, f(x))``.

        ``d f = f'(x) dx`` and ``d2 f[i, j] = f'(x) d2x[i, j] + f''(x) dx[i] dx[j]``.
        """
        out = f(self.p)
        if self.t1 is None:
            return Dual(out)
        d = df(self.p, out)
        t1 = {k: d * v for k, v in self.t1.items()}
        t2 = None
        if self.t2 is not None:
            t2 = {k: d * v for k, v in self.t2.items()}
            if self.t1:
                assert d2f is not None, "second-order tangent requested for a C1-only op"
                dd = d2f(self.p, out)
                for ka, va in self.t1.items():
                    for kb, vb in self.t1.items():
                        _acc(t2, (ka, kb), dd * (va.unsqueeze(1) * vb.unsqueeze(0)))
        return Dual(out, t1, t2)


# ------------------------------------------------------------------ elementwise ops
def reciprocal(x: Dual) -> Dual:
    """``1/x``: ``-1/x^2``, ``2/x^3``."""
    return x.unary(torch.reciprocal, lambda x, y: -y * y, lambda x, y: 2.0 * y * y * y)


def sqrt(x: Dual) -> Dual:
    """``sqrt(x)``: ``1/(2 y)``, ``-1/(4 y^3)``."""
    return x.unary(torch.sqrt, lambda x, y: 0.5 / y, lambda x, y: -0.25 / (y * y * y))


def exp(x: Dual) -> Dual:
    """``exp(x)``: ``y``, ``y``."""
    return x.unary(torch.exp, lambda x, y: y, lambda x, y: y)


def log(x: Dual) -> Dual:
    """``log(x)``: ``1/x``, ``-1/x^2``."""
    return x.unary(torch.log, lambda x, y: 1.0 / x, lambda x, y: -1.0 / (x * x))


def pow_const(x: Dual, n: float | torch.Tensor) -> Dual:
    """``x**n`` for a constant exponent (a number, or a tensor broadcasting with ``x``)."""
    return x.unary(
        lambda x: torch.pow(x, n),
        lambda x, y: n * torch.pow(x, n - 1),
        lambda x, y: n * (n - 1) * torch.pow(x, n - 2),
    )


def sin(x: Dual) -> Dual:
    return x.unary(torch.sin, lambda x, y: torch.cos(x), lambda x, y: -y)


def cos(x: Dual) -> Dual:
    return x.unary(torch.cos, lambda x, y: -torch.sin(x), lambda x, y: -y)


def tan(x: Dual) -> Dual:
    return x.unary(torch.tan, lambda x, y: 1.0 + y * y, lambda x, y: 2.0 * y * (1.0 + y * y))


def tanh(x: Dual) -> Dual:
    return x.unary(torch.tanh, lambda x, y: 1.0 - y * y, lambda x, y: -2.0 * y * (1.0 - y * y))


def sinh(x: Dual) -> Dual:
    return x.unary(torch.sinh, lambda x, y: torch.cosh(x), lambda x, y: y)


def cosh(x: Dual) -> Dual:
    return x.unary(torch.cosh, lambda x, y: torch.sinh(x), lambda x, y: y)


def arctan(x: Dual) -> Dual:
    return x.unary(
        torch.atan, lambda x, y: 1.0 / (1.0 + x * x), lambda x, y: -2.0 * x / (1.0 + x * x) ** 2
    )


def arccos(x: Dual) -> Dual:
    return x.unary(
        torch.acos,
        lambda x, y: -torch.rsqrt(1.0 - x * x),
        lambda x, y: -x * torch.pow(1.0 - x * x, -1.5),
    )


def abs(x: Dual) -> Dual:
    """``|x|``: ``sign(x)``, ``0`` (the kink at 0 gets derivative 0)."""
    return x.unary(torch.abs, lambda x, y: torch.sign(x), lambda x, y: torch.zeros_like(x))


def macaulay(x: Dual) -> Dual:
    """``<x> = max(x, 0)``: ``H(x)``, ``0`` (derivative 0 at the kink ``x = 0``)."""
    return x.unary(
        lambda x: torch.clamp(x, min=0.0),
        lambda x, y: (x > 0).to(x.dtype),
        lambda x, y: torch.zeros_like(x),
    )


def where(cond: torch.Tensor, a: Dual, b: Dual) -> Dual:
    """``torch.where`` with tangents selected the same way (absent = zero)."""
    out = torch.where(cond, a.p, b.p)
    if a.t1 is None and b.t1 is None:
        return Dual(out)

    def sel(va, vb):
        if va is None:
            return torch.where(cond, 0.0, vb)
        if vb is None:
            return torch.where(cond, va, 0.0)
        return torch.where(cond, va, vb)

    a1, b1 = a.t1 or {}, b.t1 or {}
    t1 = {k: sel(a1.get(k), b1.get(k)) for k in {**a1, **b1}}
    t2 = None
    if a.t2 is not None or b.t2 is not None:
        a2, b2 = a.t2 or {}, b.t2 or {}
        t2 = {k: sel(a2.get(k), b2.get(k)) for k in {**a2, **b2}}
    return Dual(out, t1, t2)


def matrix_inverse(a: Dual) -> Dual:
    """Inverse of square matrices in the last two dims.

    ``d inv = -Y dA Y`` and
    ``d2 inv[i, j] = Y dA_i Y dA_j Y + Y dA_j Y dA_i Y - Y d2A[i, j] Y`` with ``Y = inv(A)``.
    """
    y = torch.linalg.inv(a.p)
    if a.t1 is None:
        return Dual(y)

    def sandwich(m):
        return -(y @ m @ y)

    t1 = {k: sandwich(v) for k, v in a.t1.items()}
    t2 = None
    if a.t2 is not None:
        t2 = {k: sandwich(v) for k, v in a.t2.items()}
        for ka, va in a.t1.items():
            for kb, vb in a.t1.items():
                ya = (y @ va).unsqueeze(1)
                yb = (y @ vb).unsqueeze(0)
                _acc(t2, (ka, kb), (ya @ yb + yb @ ya) @ y)
    return Dual(y, t1, t2)
