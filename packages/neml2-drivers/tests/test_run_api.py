"""neml2.drivers.run: the Python counterpart of neml2-run, and its errors."""

from __future__ import annotations

import textwrap

import pytest
import torch

import neml2
import neml2.drivers
from neml2.drivers import CheckFailed, TransientResult
from neml2.tensors import ConvergenceError, FatalError

INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
  [gold_stress]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1) * torch.tensor([120.0, 40.0, 40.0, 0, 0, 0]))'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
  [verify]
    type = Verification
    driver = 'driver'
    SR2_names = 'output.stress'
    SR2_values = 'gold_stress'
  []
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strains'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(textwrap.dedent(INPUT))
    return p


def test_run_returns_the_stacked_result(input_file):
    r = neml2.drivers.run(input_file, "driver")
    assert isinstance(r, TransientResult) and r.steps == 4
    assert r["stress"].shape == (4, 6) and r["strain"].shape == (4, 6) and r["t"].shape == (4,)
    # E = 1e5, nu = 0.25: lambda = mu = 4e4; eps_xx = 1e-3 at the last step
    torch.testing.assert_close(
        r["stress"][-1], torch.tensor([120.0, 40.0, 40.0, 0, 0, 0], dtype=torch.float64)
    )
    assert bool((r["stress"][0] == 0).all())


def test_overrides_and_dtype(input_file):
    r = neml2.drivers.run(
        input_file, "driver", ["Models/elasticity/coefficients='2e5 0.25'"], dtype=torch.float32
    )
    assert r["stress"].dtype == torch.float32
    torch.testing.assert_close(r["stress"][-1, 0], torch.tensor(240.0))


def test_a_check_that_runs_a_transient_driver(input_file):
    r = neml2.drivers.run(input_file, "verify")
    assert r["stress"].shape == (4, 6)
    with pytest.raises(
        CheckFailed,
        match=rf"^{input_file}: driver 'verify' \(Verification\): "
        r"the check failed: output\.1\.stress",
    ) as e:
        neml2.drivers.run(input_file, "verify", ["Models/elasticity/coefficients='2e5 0.25'"])
    assert isinstance(e.value.result, TransientResult) and e.value.failures
    torch.testing.assert_close(e.value.result["stress"][-1, 0], torch.tensor(240.0).double())
    assert isinstance(e.value, neml2.NEML2Error) and not isinstance(e.value, FatalError)


def test_errors_name_the_file_and_the_driver(input_file, tmp_path):
    with pytest.raises(
        FatalError,
        match=rf"^{input_file}:\d+:\d+: no block named 'drivr' in "
        r"\[Drivers\] \(did you mean 'driver'\?\)",
    ):
        neml2.drivers.run(input_file, "drivr")
    with pytest.raises(
        FatalError,
        match=rf"^{input_file}: driver 'unit' \(ModelUnitTest\) "
        "produces no transient result",
    ):
        neml2.drivers.run(input_file, "unit")
    with pytest.raises(FatalError, match="input file not found"):
        neml2.drivers.run(tmp_path / "none.i", "driver")
    models_only = tmp_path / "m.i"
    models_only.write_text(textwrap.dedent(INPUT[INPUT.index("[Models]") :]))
    with pytest.raises(
        FatalError,
        match=rf"^{models_only}: no \[Drivers\] section; cannot run "
        "driver 'driver'",
    ):
        neml2.drivers.run(models_only, "driver")
    # an error located at an override: prefixed with the file and the driver
    with pytest.raises(
        FatalError,
        match=rf"^{input_file}: driver 'driver': <command line>:1:1: "
        "'nope' is not a \\[Tensors\\] name",
    ):
        neml2.drivers.run(input_file, "driver", ["Drivers/driver/prescribed_SR2_values=nope"])
    # one located in the file already is left as it is
    unknown = tmp_path / "unknown.i"
    unknown.write_text(
        input_file.read_text().replace(
            "prescribed_SR2_values = 'strains'",
            "prescribed_SR2_values = 'strains'\n    prescribed_Scalar_names = 'x'\n"
            "    prescribed_Scalar_values = 'times'",
        )
    )
    with pytest.raises(
        FatalError,
        match=rf"^{unknown}:\d+:\d+: prescribed_Scalar_names: unknown variable 'x': "
        "not an input of model 'elasticity'",
    ):
        neml2.drivers.run(unknown, "driver")


def test_convergence_error_names_the_file_driver_and_step(input_file, monkeypatch):
    def diverge(self, *args, **kwargs):
        raise ConvergenceError("Newton did not converge")

    monkeypatch.setattr(type(neml2.load_model(input_file, "elasticity")), "forward", diverge)
    with pytest.raises(
        ConvergenceError,
        match=rf"^{input_file}: driver 'driver': step 1 of 3 "
        r"\(t = 0\.333333\): Newton did not converge",
    ) as e:
        neml2.drivers.run(input_file, "driver")
    assert e.value.recoverable
