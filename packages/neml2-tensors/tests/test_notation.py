"""neml2.tensors.notation: Mandel <-> Voigt against hand-computed vectors and matrices.

The expected values are written out by hand, not computed by the code under test:

* a stress with components xx..xy = 1..6 and a strain with xx..xy = 0.1, 0.2, 0.3,
  0.04, 0.05, 0.06 (engineering shears 0.08, 0.10, 0.12);
* isotropic elasticity E = 200, nu = 0.25: lambda = E nu / ((1 + nu)(1 - 2 nu)) = 80,
  mu = E / (2 (1 + nu)) = 80, so the textbook Voigt matrix has lambda + 2 mu = 240 and
  lambda = 80 in the normal block and mu = 80 on the shear diagonal;
* an asymmetric "anisotropic" tangent whose standard-order Voigt entry (i, j) is the
  two-digit number 10 i + j (1-based), so a row or column out of place shows.
"""

from __future__ import annotations

import math

import pytest
import torch

from neml2.tensors import SR2, SSR4, FatalError
from neml2.tensors import notation as nn

S = math.sqrt(2.0)
F64 = torch.float64


def t(x):
    return torch.tensor(x, dtype=F64)


def close(a, b, tol=1e-12):
    return bool((a - b).abs().max() <= tol)


# ----------------------------------------------------------------------------- data
#: sigma: xx=1 yy=2 zz=3 yz=4 xz=5 xy=6, Mandel
SIG_M = t([1.0, 2.0, 3.0, 4.0 * S, 5.0 * S, 6.0 * S])
#: eps: xx=.1 yy=.2 zz=.3 yz=.04 xz=.05 xy=.06, Mandel
EPS_M = t([0.1, 0.2, 0.3, 0.04 * S, 0.05 * S, 0.06 * S])

#: Voigt stress (tensor shears) and strain (engineering shears) per named order
SIG_V = {
    "voigt": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "abaqus": [1.0, 2.0, 3.0, 6.0, 5.0, 4.0],
    "mfem": [1.0, 2.0, 3.0, 6.0, 5.0, 4.0],
    "dealii": [1.0, 2.0, 3.0, 6.0, 5.0, 4.0],
}
EPS_V = {
    "voigt": [0.1, 0.2, 0.3, 0.08, 0.10, 0.12],
    "abaqus": [0.1, 0.2, 0.3, 0.12, 0.10, 0.08],
    "mfem": [0.1, 0.2, 0.3, 0.12, 0.10, 0.08],
    "dealii": [0.1, 0.2, 0.3, 0.12, 0.10, 0.08],
}
ORDERS = list(SIG_V)

#: isotropic E=200, nu=0.25: Voigt D (any order: the shear block is diagonal)
D_ISO = [
    [240.0, 80.0, 80.0, 0.0, 0.0, 0.0],
    [80.0, 240.0, 80.0, 0.0, 0.0, 0.0],
    [80.0, 80.0, 240.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 80.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 80.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 80.0],
]
#: and its Mandel matrix: 2 mu = 160 on the shear diagonal
C_ISO = [
    [240.0, 80.0, 80.0, 0.0, 0.0, 0.0],
    [80.0, 240.0, 80.0, 0.0, 0.0, 0.0],
    [80.0, 80.0, 240.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 160.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 160.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 160.0],
]

#: the anisotropic tangent in Mandel storage: normal-shear blocks x sqrt2, shear-shear x 2
C_ANI = [
    [11.0, 12.0, 13.0, 14.0 * S, 15.0 * S, 16.0 * S],
    [21.0, 22.0, 23.0, 24.0 * S, 25.0 * S, 26.0 * S],
    [31.0, 32.0, 33.0, 34.0 * S, 35.0 * S, 36.0 * S],
    [41.0 * S, 42.0 * S, 43.0 * S, 88.0, 90.0, 92.0],
    [51.0 * S, 52.0 * S, 53.0 * S, 108.0, 110.0, 112.0],
    [61.0 * S, 62.0 * S, 63.0 * S, 128.0, 130.0, 132.0],
]
#: ... and as Voigt D: standard order rows/columns yz, xz, xy; the others xy, xz, yz
D_ANI_VOIGT = [
    [11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
    [21.0, 22.0, 23.0, 24.0, 25.0, 26.0],
    [31.0, 32.0, 33.0, 34.0, 35.0, 36.0],
    [41.0, 42.0, 43.0, 44.0, 45.0, 46.0],
    [51.0, 52.0, 53.0, 54.0, 55.0, 56.0],
    [61.0, 62.0, 63.0, 64.0, 65.0, 66.0],
]
D_ANI_XY_XZ_YZ = [
    [11.0, 12.0, 13.0, 16.0, 15.0, 14.0],
    [21.0, 22.0, 23.0, 26.0, 25.0, 24.0],
    [31.0, 32.0, 33.0, 36.0, 35.0, 34.0],
    [61.0, 62.0, 63.0, 66.0, 65.0, 64.0],
    [51.0, 52.0, 53.0, 56.0, 55.0, 54.0],
    [41.0, 42.0, 43.0, 46.0, 45.0, 44.0],
]
D_ANI = {
    "voigt": D_ANI_VOIGT,
    "abaqus": D_ANI_XY_XZ_YZ,
    "mfem": D_ANI_XY_XZ_YZ,
    "dealii": D_ANI_XY_XZ_YZ,
}


# ----------------------------------------------------------------------------- vectors
@pytest.mark.parametrize("order", ORDERS)
def test_stress_and_strain_by_hand(order):
    assert close(nn.mandel_to_voigt(SIG_M, "stress", order), t(SIG_V[order]))
    assert close(nn.mandel_to_voigt(EPS_M, "strain", order), t(EPS_V[order]))
    assert close(nn.voigt_to_mandel(t(SIG_V[order]), "stress", order), SIG_M)
    assert close(nn.voigt_to_mandel(t(EPS_V[order]), "strain", order), EPS_M)


def test_defaults_are_stress_in_the_standard_order():
    assert close(nn.mandel_to_voigt(SIG_M), t([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert close(nn.voigt_to_mandel(t([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])), SIG_M)


def test_the_orders_table():
    assert nn.MANDEL_ORDER == ("xx", "yy", "zz", "yz", "xz", "xy")
    assert nn.ORDERS["voigt"] == nn.MANDEL_ORDER
    for name in ("abaqus", "mfem", "dealii"):
        assert nn.ORDERS[name] == ("xx", "yy", "zz", "xy", "xz", "yz")
    assert sorted(nn.ORDERS) == sorted(ORDERS)
    assert nn.KINDS == ("stress", "strain")


@pytest.mark.parametrize("order", ORDERS)
def test_energy_is_the_same_in_both_notations(order):
    # sigma : eps = 1.4 + 2 (0.16 + 0.25 + 0.36) = 2.94
    sv = nn.mandel_to_voigt(SIG_M, "stress", order)
    ev = nn.mandel_to_voigt(EPS_M, "strain", order)
    assert abs(float(sv @ ev) - 2.94) <= 1e-12
    assert abs(float(SIG_M @ EPS_M) - 2.94) <= 1e-12
    x = torch.randn(7, 6, dtype=F64)
    y = torch.randn(7, 6, dtype=F64)
    lhs = (nn.mandel_to_voigt(x, "stress", order) * nn.mandel_to_voigt(y, "strain", order)).sum(-1)
    assert close(lhs, (x * y).sum(-1))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("kind", ["stress", "strain"])
def test_vector_round_trips_and_batch_axes(order, kind):
    x = torch.randn(4, 3, 6, dtype=F64)
    v = nn.mandel_to_voigt(x, kind, order)
    assert v.shape == (4, 3, 6)
    assert close(nn.voigt_to_mandel(v, kind, order), x)
    assert close(nn.mandel_to_voigt(nn.voigt_to_mandel(x, kind, order), kind, order), x)
    # each batch entry converts on its own
    assert close(v[2, 1], nn.mandel_to_voigt(x[2, 1], kind, order))


def test_typed_values_round_trip_through_data():
    s = SR2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, dtype=F64)  # xx yy zz yz xz xy
    assert close(nn.mandel_to_voigt(s.data, order="abaqus"), t(SIG_V["abaqus"]))
    assert close(SR2(nn.voigt_to_mandel(t(SIG_V["mfem"]), order="mfem")).data, s.data)


# ----------------------------------------------------------------------------- tangents
@pytest.mark.parametrize("order", ORDERS)
def test_isotropic_tangent_is_the_textbook_matrix(order):
    C = SSR4.isotropic_E_nu(200.0, 0.25, dtype=F64).data
    assert close(C, t(C_ISO), 1e-10)
    assert close(nn.mandel_to_voigt_tangent(C, order), t(D_ISO), 1e-10)
    assert close(nn.voigt_to_mandel_tangent(t(D_ISO), order), t(C_ISO), 1e-10)


@pytest.mark.parametrize("order", ORDERS)
def test_anisotropic_tangent_by_hand(order):
    assert close(nn.mandel_to_voigt_tangent(t(C_ANI), order), t(D_ANI[order]), 1e-12)
    assert close(nn.voigt_to_mandel_tangent(t(D_ANI[order]), order), t(C_ANI), 1e-12)


@pytest.mark.parametrize("order", ORDERS)
def test_voigt_tangent_maps_voigt_strain_to_voigt_stress(order):
    C = t(C_ANI)
    D = nn.mandel_to_voigt_tangent(C, order)
    eps_v = nn.mandel_to_voigt(EPS_M, "strain", order)
    sig_v = nn.mandel_to_voigt(C @ EPS_M, "stress", order)
    assert close(D @ eps_v, sig_v, 1e-12)


@pytest.mark.parametrize("order", ORDERS)
def test_tangent_round_trips_and_batch_axes(order):
    C = torch.randn(2, 5, 6, 6, dtype=F64)
    D = nn.mandel_to_voigt_tangent(C, order)
    assert D.shape == (2, 5, 6, 6)
    assert close(nn.voigt_to_mandel_tangent(D, order), C)
    assert close(D[1, 3], nn.mandel_to_voigt_tangent(C[1, 3], order))


# ----------------------------------------------------------------------------- full tensors
def test_full_second_order_by_hand():
    full = t([[1.0, 6.0, 5.0], [6.0, 2.0, 4.0], [5.0, 4.0, 3.0]])
    assert close(nn.mandel_to_full(SIG_M), full)
    assert close(nn.full_to_mandel(full), SIG_M)
    # an asymmetric matrix gives its symmetric part: (6 + 8) / 2 = 7 on xy
    asym = full.clone()
    asym[1, 0] = 8.0
    assert close(nn.full_to_mandel(asym), t([1.0, 2.0, 3.0, 4.0 * S, 5.0 * S, 7.0 * S]))
    x = torch.randn(3, 2, 6, dtype=F64)
    a = nn.mandel_to_full(x)
    assert a.shape == (3, 2, 3, 3) and close(a, a.transpose(-1, -2))
    assert close(nn.full_to_mandel(a), x)


def test_full_fourth_order_by_hand():
    C = nn.mandel_to_full4(t(C_ANI))
    assert C.shape == (3, 3, 3, 3)
    # C_ijkl = D_ij,kl for normal rows; shear entries equal the Voigt D's (see module doc)
    assert float(C[0, 0, 0, 0]) == pytest.approx(11.0)
    assert float(C[0, 0, 1, 1]) == pytest.approx(12.0)
    assert float(C[1, 2, 0, 0]) == pytest.approx(41.0)  # yz row, xx column
    assert float(C[0, 0, 1, 2]) == pytest.approx(14.0)  # xx row, yz column
    assert float(C[1, 2, 1, 2]) == pytest.approx(44.0)
    assert float(C[0, 1, 0, 2]) == pytest.approx(65.0)  # xy row, xz column
    # both minor symmetries
    assert close(C, C.transpose(0, 1)) and close(C, C.transpose(2, 3))
    iso = nn.mandel_to_full4(t(C_ISO))
    assert float(iso[0, 0, 0, 0]) == pytest.approx(240.0)
    assert float(iso[0, 0, 1, 1]) == pytest.approx(80.0)
    assert float(iso[0, 1, 0, 1]) == pytest.approx(80.0)  # mu
    assert float(iso[0, 1, 1, 0]) == pytest.approx(80.0)


def test_full_fourth_order_reproduces_the_mandel_product():
    C = torch.randn(4, 6, 6, dtype=F64)
    eps = torch.randn(4, 6, dtype=F64)
    sig_full = torch.einsum("...ijkl,...kl->...ij", nn.mandel_to_full4(C), nn.mandel_to_full(eps))
    sig_mandel = nn.mandel_to_full(torch.einsum("...IJ,...J->...I", C, eps))
    assert close(sig_full, sig_mandel)
    assert close(nn.full4_to_mandel(nn.mandel_to_full4(C)), C)


def test_full4_to_mandel_symmetrises():
    C = torch.zeros(3, 3, 3, 3, dtype=F64)
    C[0, 1, 0, 0] = 2.0  # only the (xy, xx) entry, not its minor partner (yx, xx)
    M = nn.full4_to_mandel(C)
    assert float(M[5, 0]) == pytest.approx(S * 1.0)  # sqrt2 * (2 + 0) / 2
    assert float(M.abs().sum()) == pytest.approx(S)


# ----------------------------------------------------------------------------- graphs
def test_conversions_export_with_a_dynamic_batch():
    class Host(torch.nn.Module):
        def forward(self, eps, C):
            return (
                nn.mandel_to_voigt(eps, "strain", "abaqus"),
                nn.mandel_to_voigt_tangent(C, "abaqus"),
                nn.voigt_to_mandel_tangent(C, "mfem"),
            )

    b = torch.export.Dim("b")
    args = (torch.randn(4, 6, dtype=F64), torch.randn(4, 6, 6, dtype=F64))
    ep = torch.export.export(Host(), args, dynamic_shapes=({0: b}, {0: b}))
    eps, C = torch.randn(7, 6, dtype=F64), torch.randn(7, 6, 6, dtype=F64)
    for got, want in zip(ep.module()(eps, C), Host()(eps, C), strict=True):
        assert torch.equal(got, want)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: nn.mandel_to_voigt(torch.zeros(5)), "x: expected shape (..., 6), got (5,)"),
        (lambda: nn.voigt_to_mandel(torch.zeros(2, 3)), "v: expected shape (..., 6), got (2, 3)"),
        (
            lambda: nn.mandel_to_voigt_tangent(torch.zeros(6)),
            "C: expected shape (..., 6, 6), got (6,)",
        ),
        (
            lambda: nn.voigt_to_mandel_tangent(torch.zeros(6, 5)),
            "D: expected shape (..., 6, 6), got (6, 5)",
        ),
        (lambda: nn.mandel_to_full(torch.zeros(3, 3)), "x: expected shape (..., 6)"),
        (lambda: nn.full_to_mandel(torch.zeros(6)), "a: expected shape (..., 3, 3), got (6,)"),
        (lambda: nn.mandel_to_full4(torch.zeros(3, 3)), "C: expected shape (..., 6, 6)"),
        (lambda: nn.full4_to_mandel(torch.zeros(6, 6)), "C: expected shape (..., 3, 3, 3, 3)"),
        (
            lambda: nn.mandel_to_voigt(SR2.fill(1.0, 2.0, 3.0)),
            "x: expected a torch.Tensor, got SR2 (pass .data of a typed value)",
        ),
        (
            lambda: nn.mandel_to_voigt(SIG_M, order="abacus"),
            "order='abacus' is not known (did you mean 'abaqus'?); "
            "accepted: voigt, abaqus, mfem, dealii",
        ),
        (
            lambda: nn.voigt_to_mandel_tangent(t(D_ISO), order="mandel"),
            "order='mandel' is not known; accepted: voigt, abaqus, mfem, dealii",
        ),
        (
            lambda: nn.mandel_to_voigt(SIG_M, kind="stres"),
            "kind='stres' is not known (did you mean 'stress'?); accepted: stress, strain",
        ),
        (
            lambda: nn.voigt_to_mandel(SIG_M, kind=None),
            "kind=None is not known; accepted: stress, strain",
        ),
    ],
)
def test_errors_name_the_argument_and_what_it_accepts(call, needle):
    with pytest.raises(FatalError) as info:
        call()
    msg = str(info.value)
    assert needle in msg and "\n" not in msg, msg
