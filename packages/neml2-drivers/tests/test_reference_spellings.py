"""Inputs written for older NEML2 releases (its tutorials still use them): each older
spelling is an error at its file:line that names the current one."""

from __future__ import annotations

import pytest

from neml2.drivers._cli import EXIT_FATAL, run_main

TUTORIAL = """[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 1.0, 5))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0.0, 1.0, 5).reshape(5, 1) * SR2.fill(1e-3, 0.0, 0.0).data)'
  []
  [q0]
    type = Python
    expr = 'MRP.fill(0.0, 0.0, 0.0)'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    {options}
  []
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    {unit}
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def _input(tmp_path, options: str, unit: str = "output_SR2_names = 'stress'"):
    p = tmp_path / "tutorial.i"
    p.write_text(TUTORIAL.format(options=options, unit=unit))
    return p


def test_force_names_answer_prescribed(tmp_path, capsys):
    p = _input(tmp_path, "force_SR2_names = 'strain'\n    force_SR2_values = 'strains'")
    assert run_main([str(p), "driver"]) == EXIT_FATAL
    err = capsys.readouterr().err.strip()
    assert err == (
        f"neml2-run: error: {p}:20:5: unknown option 'force_SR2_names' in [Drivers/driver] "
        "(did you mean 'prescribed_SR2_names'? 'force_SR2_names' is the reference NEML2's "
        f"older spelling); rename also 'force_SR2_values' ({p}:21:5) -> 'prescribed_SR2_values'"
    )
    # with the current spelling the same input runs
    p = _input(tmp_path, "prescribed_SR2_names = 'strain'\n    prescribed_SR2_values = 'strains'")
    assert run_main([str(p), "driver", "--quiet"]) == 0


@pytest.mark.parametrize(
    ("old", "ours"),
    [
        ("ic_Rot_names", "ic_MRP_names"),
        ("force_Rot_names", "prescribed_MRP_names"),
        ("prescribed_Rot_names", "prescribed_MRP_names"),
        ("force_Scalar_values", "prescribed_Scalar_values"),
    ],
)
def test_rotation_and_force_spellings(tmp_path, capsys, old, ours):
    p = _input(tmp_path, f"prescribed_SR2_names = 'strain'\n    {old} = 'q'")
    assert run_main([str(p), "driver"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert f"{p}:21:5: unknown option '{old}' in [Drivers/driver] (did you mean '{ours}'?" in err


def test_model_unit_test_rot_spellings(tmp_path, capsys):
    p = _input(tmp_path, "", unit="input_Rot_names = 'q'\n    input_Rot_values = 'q0'")
    assert run_main([str(p), "unit"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert (
        "unknown option 'input_Rot_names' in [Drivers/unit] (did you mean 'input_MRP_names'?" in err
    )
    assert "rename also 'input_Rot_values'" in err


def test_a_plain_misspelling_still_gets_the_closest_option(tmp_path, capsys):
    p = _input(tmp_path, "prescribed_SR2_name = 'strain'")
    assert run_main([str(p), "driver"]) == EXIT_FATAL
    err = capsys.readouterr().err
    assert "(did you mean 'prescribed_SR2_names'?); accepted: model," in err
