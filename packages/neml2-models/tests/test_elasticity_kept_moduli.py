"""LinearIsotropicElasticity keeps the map coefficients of constant elastic constants.

Eagerly, ``(3K, 2G)`` (or ``(1/3K, 1/2G)`` with ``compliance``) of constant coefficients
is the same at every call, so it is computed once: a transient step evaluates the
elasticity once per Newton pass, and the conversion from E and nu was ~8 % of the
operations of the J2 benchmark's eager step. It must still follow every change of a
coefficient, and never stand in for a computation that autograd, tangents or a trace
need to see.
"""

from __future__ import annotations

import pytest
import torch

from neml2.models.solid_mechanics.elasticity import LinearIsotropicElasticity
from neml2.tensors import SR2, seed

F64 = torch.float64
TYPES = ["YOUNGS_MODULUS", "POISSONS_RATIO"]
EPS = SR2(torch.tensor([1e-3, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=F64))


def _s11(E: float, nu: float) -> float:
    """sigma_11 of a uniaxial strain 1e-3 (lateral strains held at zero)."""
    return E * (1 - nu) / ((1 + nu) * (1 - 2 * nu)) * 1e-3


def _model(**kw) -> LinearIsotropicElasticity:
    return LinearIsotropicElasticity(coefficients=[200e3, 0.3], coefficient_types=TYPES, **kw)


def test_kept_once_and_recomputed_when_a_coefficient_changes():
    m = _model()
    E_name, nu_name = m._coef_names
    with torch.no_grad():
        first = m._map_coefficients()
        assert m._map_coefficients()[0] is first[0]  # kept, not recomputed
        assert m(EPS).data[0].item() == pytest.approx(_s11(200e3, 0.3), rel=1e-14)
        getattr(m, E_name).mul_(2.0)  # in place: the version moves
        assert m(EPS).data[0].item() == pytest.approx(_s11(400e3, 0.3), rel=1e-14)
        setattr(m, nu_name, torch.nn.Parameter(torch.tensor(0.25, dtype=F64)))  # a new tensor
        assert m(EPS).data[0].item() == pytest.approx(_s11(400e3, 0.25), rel=1e-14)
        assert m._map_coefficients()[0] is not first[0]


def test_compliance_keeps_the_inverse_pair():
    m = _model(compliance=True)
    with torch.no_grad():
        a = m._map_coefficients()
        assert m._map_coefficients()[1] is a[1]
        K = 200e3 / (3 * (1 - 2 * 0.3))
        G = 200e3 / (2 * 1.3)
        assert a[0].data.item() == pytest.approx(1 / (3 * K), rel=1e-14)
        assert a[1].data.item() == pytest.approx(1 / (2 * G), rel=1e-14)


def test_every_call_with_gradients_builds_its_own_graph():
    m = _model()
    E = getattr(m, m._coef_names[0])
    assert E.requires_grad
    with torch.no_grad():
        m(EPS)  # a pair kept without a graph must not be reused below
    for k in (1, 2):  # a second backward would fail on a reused, freed graph
        m(EPS).data[0].backward()
        assert E.grad.item() == pytest.approx(k * _s11(1.0, 0.3), rel=1e-12)


def test_tangents_of_a_coefficient_are_never_kept():
    m = _model()
    with torch.no_grad():
        m(EPS)
        kept = m._map_coefficients()
        E_name = m._coef_names[0]
        seeded = seed(m.param(E_name), "E")
        m.param = lambda n, _p=m.param: seeded if n == E_name else _p(n)  # a seeded E
        pair = m._map_coefficients()
        assert pair[0] is not kept[0] and pair[0].tangents is not None
        assert m.__dict__["_kept_map"][1][0] is kept[0]  # the seeded pair was not kept
