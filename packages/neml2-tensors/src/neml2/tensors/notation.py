r"""Mandel <-> Voigt notation: neml2's storage of symmetric tensors and a host code's.

neml2 stores a symmetric second-order tensor (``SR2``) as its **Mandel** vector, in the
order ``xx, yy, zz, yz, xz, xy`` with $\sqrt{2}$ on the shear components, and a
fourth-order tensor with both minor symmetries (``SSR4``: a stiffness, or the tangent
``d stress / d strain``) as the 6 x 6 matrix that maps one Mandel vector to another:

$$\hat{x} = W x, \quad W = \mathrm{diag}(1, 1, 1, \sqrt{2}, \sqrt{2}, \sqrt{2}), \quad
\hat{\sigma} = \hat{C} \hat{\varepsilon},$$

where $x = (x_{xx}, x_{yy}, x_{zz}, x_{yz}, x_{xz}, x_{xy})$ lists the tensor components.
A finite-element code speaks **Voigt** notation instead: a stress-like vector holds the
tensor components (``kind="stress"``), a strain-like vector holds *engineering* shears
$\gamma_{ij} = 2 \varepsilon_{ij}$ (``kind="strain"``), and the tangent is the matrix $D$
with $\sigma_v = D \varepsilon_v$. Codes differ in the order of the three shear
components; the ``order`` argument names it (:data:`ORDERS`):

* ``"voigt"``: ``xx, yy, zz, yz, xz, xy``, the textbook Voigt order (that of neml2's
  Mandel vector);
* ``"abaqus"``: ``xx, yy, zz, xy, xz, yz``: Abaqus's ``STRESS``, ``STRAN``, ``DSTRAN``
  and ``DDSDDE`` in ``UMAT`` (Abaqus Analysis User's Guide, "Conventions");
* ``"mfem"``: ``xx, yy, zz, xy, xz, yz``: the stress vector of MFEM's
  ``ElasticityIntegrator::ComputeElementFlux`` (``fem/bilininteg.hpp``);
* ``"dealii"``: ``xx, yy, zz, xy, xz, yz``: deal.II's
  ``SymmetricTensor<2,3>::unrolled_to_component_indices``. deal.II's
  ``Physics::Notation::Kelvin`` vectors and matrices are neml2's Mandel storage as they
  are; a ``SymmetricTensor`` holds tensor components, so convert its strains with
  ``kind="stress"`` (no factor 2), or go through :func:`mandel_to_full` /
  :func:`mandel_to_full4`.

With $P$ the permutation from the Mandel order to ``order``, $(P x)_i = x_{p(i)}$:

$$\sigma_v = P W^{-1} \hat{\sigma}, \quad \varepsilon_v = P W \hat{\varepsilon}, \quad
D = P W^{-1} \hat{C} W^{-1} P^{T}, \quad
\sigma_v \cdot \varepsilon_v = \hat{\sigma} \cdot \hat{\varepsilon}.$$

Every function takes a plain ``torch.Tensor`` with any leading batch axes and acts on the
trailing ones; all are linear (plain torch operations: they trace, export and
differentiate). A typed value (``SR2``, ``SSR4``) passes its ``.data``. A wrong trailing
shape or an unknown ``order`` / ``kind`` is a one-line :class:`~neml2.tensors.FatalError`
naming the argument and what it accepts. The C++ header ``neml2/notation.h`` (namespace
``neml2::notation``) has the same conversions for a host without torch;
docs/conventions.md shows both.
"""

from __future__ import annotations

import difflib
import math

import torch

from neml2.tensors import _mandel
from neml2.tensors._errors import FatalError

#: neml2's Mandel storage order of a symmetric tensor's components.
MANDEL_ORDER: tuple[str, ...] = ("xx", "yy", "zz", "yz", "xz", "xy")

#: The Voigt orders by name: the component each position of the host's vector holds.
ORDERS: dict[str, tuple[str, ...]] = {
    "voigt": ("xx", "yy", "zz", "yz", "xz", "xy"),
    "abaqus": ("xx", "yy", "zz", "xy", "xz", "yz"),
    "mfem": ("xx", "yy", "zz", "xy", "xz", "yz"),
    "dealii": ("xx", "yy", "zz", "xy", "xz", "yz"),
}

#: The Voigt kinds: ``"stress"`` holds tensor shears, ``"strain"`` engineering shears (2x).
KINDS: tuple[str, ...] = ("stress", "strain")

_SQRT2 = math.sqrt(2.0)
#: Mandel -> Voigt factor of each Mandel component, by kind (W^-1 for stress, W for strain)
_TO_VOIGT = {
    "stress": (1.0, 1.0, 1.0, 1.0 / _SQRT2, 1.0 / _SQRT2, 1.0 / _SQRT2),
    "strain": (1.0, 1.0, 1.0, _SQRT2, _SQRT2, _SQRT2),
}


def _choice(arg: str, value, accepted) -> str:
    if isinstance(value, str) and value in accepted:
        return value
    close = difflib.get_close_matches(str(value), list(accepted), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise FatalError(f"{arg}={value!r} is not known{hint}; accepted: {', '.join(accepted)}")


def _perm(order: str) -> tuple[int, ...]:
    """Mandel position of the component at each position of *order*."""
    order = _choice("order", order, ORDERS)
    return tuple(MANDEL_ORDER.index(c) for c in ORDERS[order])


def _checked(arg: str, x, base: tuple[int, ...]) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        hint = " (pass .data of a typed value)" if hasattr(x, "data") else ""
        raise FatalError(f"{arg}: expected a torch.Tensor, got {type(x).__name__}{hint}")
    n = len(base)
    if x.dim() < n or tuple(x.shape[x.dim() - n :]) != base:
        want = ", ".join(["...", *map(str, base)])
        raise FatalError(f"{arg}: expected shape ({want}), got {tuple(x.shape)}")
    return x


def mandel_to_voigt(x: torch.Tensor, kind: str = "stress", order: str = "voigt") -> torch.Tensor:
    r"""A Mandel vector in a Voigt order, with tensor or engineering shears.

    ``kind="stress"``: $\sigma_v = P W^{-1} \hat{\sigma}$, the shears divided by
    $\sqrt{2}$ (giving $\sigma_{ij}$); ``kind="strain"``: $\varepsilon_v = P W
    \hat{\varepsilon}$, the shears multiplied by $\sqrt{2}$ (giving
    $\gamma_{ij} = 2 \varepsilon_{ij}$).

    Args:
        x: Mandel vectors ``(..., 6)`` (``xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy``).
        kind: ``"stress"`` (tensor shears) or ``"strain"`` (engineering shears).
        order: The Voigt order, a key of :data:`ORDERS`.

    Returns:
        The Voigt vectors ``(..., 6)`` in *order*.

    Raises:
        FatalError: *x* is not ``(..., 6)``, or *kind* / *order* is unknown.
    """
    kind = _choice("kind", kind, KINDS)
    perm = _perm(order)
    x = _checked("x", x, (6,))
    scale = _TO_VOIGT[kind]
    c = x.unbind(-1)
    return torch.stack([c[p] if scale[p] == 1.0 else c[p] * scale[p] for p in perm], -1)


def voigt_to_mandel(v: torch.Tensor, kind: str = "stress", order: str = "voigt") -> torch.Tensor:
    r"""The Mandel vector of a Voigt vector; the inverse of :func:`mandel_to_voigt`.

    ``kind="stress"``: $\hat{\sigma} = W P^{T} \sigma_v$; ``kind="strain"``:
    $\hat{\varepsilon} = W^{-1} P^{T} \varepsilon_v$ (an engineering shear
    $\gamma_{ij}$ becomes $\sqrt{2} \varepsilon_{ij} = \gamma_{ij} / \sqrt{2}$).

    Args:
        v: Voigt vectors ``(..., 6)`` in *order*.
        kind: ``"stress"`` (tensor shears) or ``"strain"`` (engineering shears).
        order: The Voigt order, a key of :data:`ORDERS`.

    Returns:
        The Mandel vectors ``(..., 6)``.

    Raises:
        FatalError: *v* is not ``(..., 6)``, or *kind* / *order* is unknown.
    """
    kind = _choice("kind", kind, KINDS)
    perm = _perm(order)
    v = _checked("v", v, (6,))
    scale = _TO_VOIGT[kind]
    c = v.unbind(-1)
    pos = [perm.index(m) for m in range(6)]  # position in v of each Mandel component
    return torch.stack(
        [c[pos[m]] if scale[m] == 1.0 else c[pos[m]] / scale[m] for m in range(6)], -1
    )


def _tangent_factor(perm, like: torch.Tensor) -> torch.Tensor:
    """``(W^-1 W^-1)`` entrywise, rows and columns in *perm* order."""
    w = [_TO_VOIGT["stress"][p] for p in perm]
    return torch.tensor([[a * b for b in w] for a in w], dtype=like.dtype, device=like.device)


def mandel_to_voigt_tangent(C: torch.Tensor, order: str = "voigt") -> torch.Tensor:
    r"""A Mandel tangent as the Voigt matrix ``D`` with ``sigma_v = D eps_v``.

    $$D = P W^{-1} \hat{C} W^{-1} P^{T}, \quad
    D_{ij} = \hat{C}_{p(i) p(j)} / (w_{p(i)} w_{p(j)}),$$

    so the normal-normal block is unchanged, the normal-shear blocks are divided by
    $\sqrt{2}$ and the shear-shear block by 2; ``eps_v`` carries engineering shears. For
    isotropic elasticity the shear diagonal goes from $2 \mu$ to $\mu$. The tangent need
    not be symmetric.

    Args:
        C: Mandel matrices ``(..., 6, 6)`` (``d stress / d strain``, an ``SSR4``'s data).
        order: The Voigt order of ``D``'s rows and columns, a key of :data:`ORDERS`.

    Returns:
        ``D`` at ``(..., 6, 6)``, row ``i`` the stress component, column ``j`` the strain
        component at position ``i`` / ``j`` of *order*.

    Raises:
        FatalError: *C* is not ``(..., 6, 6)``, or *order* is unknown.
    """
    perm = list(_perm(order))
    C = _checked("C", C, (6, 6))
    return C[..., perm, :][..., perm] * _tangent_factor(perm, C)


def voigt_to_mandel_tangent(D: torch.Tensor, order: str = "voigt") -> torch.Tensor:
    r"""The Mandel tangent of a Voigt matrix; the inverse of :func:`mandel_to_voigt_tangent`.

    $$\hat{C} = W P^{T} D P W.$$

    Args:
        D: Voigt matrices ``(..., 6, 6)`` with ``sigma_v = D eps_v`` (engineering shears
            in ``eps_v``), rows and columns in *order*.
        order: The Voigt order, a key of :data:`ORDERS`.

    Returns:
        The Mandel matrices ``(..., 6, 6)``.

    Raises:
        FatalError: *D* is not ``(..., 6, 6)``, or *order* is unknown.
    """
    perm = _perm(order)
    D = _checked("D", D, (6, 6))
    pos = [perm.index(m) for m in range(6)]
    return D[..., pos, :][..., pos] / _tangent_factor(range(6), D)


def mandel_to_full(x: torch.Tensor) -> torch.Tensor:
    """The symmetric 3 x 3 matrices of Mandel vectors (``SR2.to_R2`` on plain tensors).

    Args:
        x: Mandel vectors ``(..., 6)``.

    Returns:
        ``(..., 3, 3)``, symmetric: ``[[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]``.

    Raises:
        FatalError: *x* is not ``(..., 6)``.
    """
    return _mandel.mandel_to_full(_checked("x", x, (6,)))


def full_to_mandel(a: torch.Tensor) -> torch.Tensor:
    """The Mandel vectors of the symmetric parts of 3 x 3 matrices.

    Args:
        a: Matrices ``(..., 3, 3)``; an asymmetric one gives its symmetric part's vector.

    Returns:
        ``(..., 6)``: ``(a_xx, a_yy, a_zz, sqrt2 a_yz, sqrt2 a_xz, sqrt2 a_xy)`` of
        ``(a + a^T) / 2``.

    Raises:
        FatalError: *a* is not ``(..., 3, 3)``.
    """
    return _mandel.full_to_mandel(_checked("a", a, (3, 3)))


def mandel_to_full4(C: torch.Tensor) -> torch.Tensor:
    r"""The fourth-order tensors ``C_ijkl`` of Mandel matrices (``SSR4.to_full``).

    $C_{ijkl} = \hat{C}_{IJ} / (w_I w_J)$ with $I$ the Mandel position of $(i, j)$ or
    $(j, i)$ and $J$ that of $(k, l)$ or $(l, k)$: the result has both minor symmetries,
    and $\sigma_{ij} = C_{ijkl} \varepsilon_{kl}$ reproduces
    $\hat{\sigma} = \hat{C} \hat{\varepsilon}$.

    Args:
        C: Mandel matrices ``(..., 6, 6)``.

    Returns:
        ``(..., 3, 3, 3, 3)`` indexed ``[i, j, k, l]``.

    Raises:
        FatalError: *C* is not ``(..., 6, 6)``.
    """
    return _mandel.ssr4_to_full(_checked("C", C, (6, 6)))


def full4_to_mandel(C: torch.Tensor) -> torch.Tensor:
    r"""The Mandel matrices of fourth-order tensors, minor-symmetrised.

    $\hat{C}_{IJ} = w_I w_J \bar{C}_{ijkl}$ with $\bar{C}$ the average of $C$ over
    $i \leftrightarrow j$ and $k \leftrightarrow l$; the inverse of :func:`mandel_to_full4`
    on tensors with both minor symmetries.

    Args:
        C: Tensors ``(..., 3, 3, 3, 3)`` indexed ``[i, j, k, l]``.

    Returns:
        ``(..., 6, 6)``.

    Raises:
        FatalError: *C* is not ``(..., 3, 3, 3, 3)``.
    """
    return _mandel.full_to_ssr4(_checked("C", C, (3, 3, 3, 3)))


__all__ = [
    "KINDS",
    "MANDEL_ORDER",
    "ORDERS",
    "full4_to_mandel",
    "full_to_mandel",
    "mandel_to_full",
    "mandel_to_full4",
    "mandel_to_voigt",
    "mandel_to_voigt_tangent",
    "voigt_to_mandel",
    "voigt_to_mandel_tangent",
]
