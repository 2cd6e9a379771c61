"""Elasticity tensors as model outputs, eigenstrains and volumetric deformation Jacobians."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models.solid_mechanics.eigenstrains import (
    PhaseTransformationEigenstrain,
    SwellingAndPhaseChangeDeformationJacobian,
    ThermalDeformationJacobian,
    ThermalEigenstrain,
    VolumeChangeEigenstrain,
)
from neml2.tensors import SSR4, FatalError

F64 = torch.float64
I_SR2 = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=F64)


def _write(tmp_path, text: str):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def test_isotropic_tensor_is_named_after_its_block_and_takes_any_pair(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [stiff]
            type = IsotropicElasticityTensor
            coefficient_types = 'SHEAR_MODULUS BULK_MODULUS'
            coefficients = '30 100'
          []
          [named]
            type = IsotropicElasticityTensor
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
            coefficients = 'E 0.25'
            C = 'my_C'
          []
        []
        """,
    )
    m = load_model(p, "stiff")
    assert m.input_names == [] and m.output_names == ["stiff"]
    torch.testing.assert_close(
        m.forward({})["stiff"], SSR4.isotropic_K_G(100.0, 30.0, dtype=F64).data
    )
    n = load_model(p, "named")
    assert n.input_names == ["E"] and n.output_names == ["my_C"]
    E = torch.tensor([1.0, 2.0], dtype=F64)
    out, jac = n.jacobian({"E": E})
    one = SSR4.isotropic_E_nu(1.0, 0.25, dtype=F64).data
    torch.testing.assert_close(out["my_C"], E[:, None, None] * one)
    torch.testing.assert_close(jac["my_C"]["E"], one.expand(2, 6, 6))


def test_cubic_tensor_with_isotropic_constants_is_isotropic(tmp_path):
    p = _write(
        tmp_path,
        """
        [Models]
          [C]
            type = CubicElasticityTensor
            coefficient_types = 'POISSONS_RATIO SHEAR_MODULUS YOUNGS_MODULUS'
            coefficients = '0.3 50 130'
          []
        []
        """,
    )
    got = load_model(p, "C").forward({})["C"]
    torch.testing.assert_close(got, SSR4.isotropic_E_nu(130.0, 0.3, dtype=F64).data)


@pytest.mark.parametrize(
    ("typ", "types", "coefs", "pattern"),
    [
        (
            "CubicElasticityTensor",
            "YOUNGS_MODULUS POISSONS_RATIO",
            "1 0.3",
            r":5:\d+: option 'coefficients' needs exactly 3",
        ),
        (
            "CubicElasticityTensor",
            "YOUNGS_MODULUS POISSONS_RATIO BULK_MODULUS",
            "1 0.3 1",
            r":4:\d+: option 'coefficient_types' takes",
        ),
        (
            "IsotropicElasticityTensor",
            "YOUNGS_MODULUS YOUNGS_MODULUS",
            "1 2",
            r":4:\d+: option 'coefficient_types' repeats",
        ),
        (
            "IsotropicElasticityTensor",
            "YOUNGS_MODULUS POISSONS_RATIO",
            "1 0.3 4",
            r":5:\d+: option 'coefficients' needs exactly 2",
        ),
    ],
)
def test_bad_coefficients_name_the_option(tmp_path, typ, types, coefs, pattern):
    p = _write(
        tmp_path,
        f"""
        [Models]
          [C]
            type = {typ}
            coefficient_types = '{types}'
            coefficients = '{coefs}'
          []
        []
        """,
    )
    with pytest.raises(FatalError, match=pattern):
        load_model(p, "C")


def test_eigenstrains():
    T = torch.tensor([300.0, 500.0], dtype=F64)
    out, jac = ThermalEigenstrain(reference_temperature=300.0, CTE=2e-5).jacobian(
        {"temperature": T}
    )
    torch.testing.assert_close(out["eigenstrain"], (2e-5 * (T - 300.0))[:, None] * I_SR2)
    torch.testing.assert_close(jac["eigenstrain"]["temperature"], (2e-5 * I_SR2).expand(2, 6))

    V = torch.tensor([8.0, 27.0], dtype=F64)
    out, jac = VolumeChangeEigenstrain(reference_volume=1.0).jacobian({"volume": V})
    torch.testing.assert_close(
        out["eigenstrain"], torch.tensor([1.0, 2.0], dtype=F64)[:, None] * I_SR2
    )
    dV = torch.tensor([1 / 12, 1 / 27], dtype=F64)  # (1/3) V^(-2/3)
    torch.testing.assert_close(jac["eigenstrain"]["volume"], dV[:, None] * I_SR2)

    f, dv = torch.tensor([0.5], dtype=F64), torch.tensor([0.1], dtype=F64)
    out, jac = PhaseTransformationEigenstrain().jacobian(
        {"phase_fraction": f, "volume_fraction_change": dv}
    )
    torch.testing.assert_close(out["eigenstrain"], 0.05 * I_SR2[None])
    torch.testing.assert_close(jac["eigenstrain"]["volume_fraction_change"], 0.5 * I_SR2[None])


def test_deformation_jacobians():
    T = torch.tensor([250.0], dtype=F64)
    out = ThermalDeformationJacobian(reference_temperature=300.0, CTE=1e-4).forward(
        {"temperature": T}
    )
    torch.testing.assert_close(out["jacobian"], torch.tensor([1.0 - 5e-3], dtype=F64))
    m = SwellingAndPhaseChangeDeformationJacobian(
        phase_fraction="c", swelling_coefficient=0.1, reference_volume_difference=0.05
    )
    assert m.input_names == ["fluid_fraction", "c"]
    phi, c = torch.tensor([0.8], dtype=F64), torch.tensor([0.25], dtype=F64)
    out, jac = m.jacobian({"fluid_fraction": phi, "c": c})
    torch.testing.assert_close(out["jacobian"], 1.0 + 0.1 * c * phi + 0.75 * phi * 0.05)
    torch.testing.assert_close(jac["jacobian"]["c"], 0.1 * phi - 0.05 * phi)


@pytest.mark.parametrize(
    ("kind", "coefficients", "types", "fragment"),
    [
        ("Isotropic", "'200e3 0.5'", "'YOUNGS_MODULUS POISSONS_RATIO'", "POISSONS_RATIO = 0.5"),
        ("Isotropic", "'-1 0.3'", "'YOUNGS_MODULUS POISSONS_RATIO'", "YOUNGS_MODULUS = -1"),
        (
            "Cubic",
            "'200e3 0.3 -5'",
            "'YOUNGS_MODULUS POISSONS_RATIO SHEAR_MODULUS'",
            "SHEAR_MODULUS = -5",
        ),
    ],
)
def test_unphysical_constants_name_the_option(tmp_path, kind, coefficients, types, fragment):
    p = tmp_path / "c.i"
    p.write_text(
        f"[Models]\n  [C]\n    type = {kind}ElasticityTensor\n"
        f"    coefficients = {coefficients}\n    coefficient_types = {types}\n  []\n[]\n"
    )
    with pytest.raises(FatalError, match=r"c\.i:4:.*option 'coefficients'") as info:
        load_model(p, "C")
    assert fragment in str(info.value)
