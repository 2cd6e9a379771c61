"""The [Drivers] types register through the neml2.models entry point group."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_drivers_build_from_python_without_importing_neml2_drivers(tmp_path):
    (tmp_path / "in.i").write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = ScalarLinearCombination
                from = 'a'
                to = 'b'
              []
            []
            [Drivers]
              [unit]
                type = ModelUnitTest
                model = 'm'
                input_Scalar_names = 'a'
                input_Scalar_values = '2'
                output_Scalar_names = 'b'
                output_Scalar_values = '2'
              []
            []
            """
        )
    )
    # a fresh interpreter: nothing has imported neml2.drivers before the lookup
    code = (
        "import sys, neml2\n"
        "assert 'neml2.drivers' not in sys.modules\n"
        "d = neml2.load_input('in.i').object('Drivers', 'unit')\n"
        "print(type(d).__module__, type(d).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["neml2.drivers.model_unit", "ModelUnitTest"]
