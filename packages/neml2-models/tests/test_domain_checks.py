"""Per-point domain checks of the newer physics at forward time (py-eager).

A value outside an equation's domain is a one-line error naming the block, the variable,
the domain and the points (flat indices, listed as a ConvergenceError lists its failed
points); traced calls (torch.compile, torch.export) and calls inside an implicit solve
skip the check and compute the equation's value as before.
"""

from __future__ import annotations

import pytest
import torch

from neml2.models import load_string
from neml2.models._domain import require, suspended
from neml2.tensors import FatalError, Scalar

T = torch.float64


def _scalar(*xs: float) -> Scalar:
    return Scalar(torch.tensor(xs, dtype=T))


def _model(body: str, name: str = "m"):
    return load_string(f"[Models]\n  [{name}]\n{body}  []\n[]\n", name)


def _one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


DEGRADATION = "    type = PowerDegradationFunction\n    phase = 'd'\n    power = 2\n"


def test_degradation_outside_zero_one_names_the_points():
    g = _model(DEGRADATION)
    with pytest.raises(FatalError) as e:
        g(_scalar(0.1, 1.7, 0.2, -0.1))
    assert _one_line(e) == (
        "<string>:2:3: [Models/m]: input 'd' (the phase-field d) is outside [0, 1] at 2 of 4 "
        "points (points 1, 3; first value 1.7): a degradation function g(d) is defined for "
        "0 <= d <= 1 (intact to broken)"
    )


def test_valid_inputs_still_evaluate():
    g = _model(DEGRADATION)
    torch.testing.assert_close(
        g(_scalar(0.0, 0.5, 1.0)).data, torch.tensor([1.0, 0.25, 0.0], dtype=T)
    )


def test_many_points_are_abbreviated_as_convergence_errors_are():
    g = _model(DEGRADATION)
    with pytest.raises(
        FatalError, match=r"at 8 of 8 points \(points 0, 1, 2, 3, 4, \.\.\. \(3 more\)"
    ):
        g(_scalar(*[2.0] * 8))


def test_effective_saturation_with_a_variable_max_fraction():
    s = _model(
        "    type = EffectiveSaturation\n    residual_saturation = 0\n    max_fraction = 'phimax'\n"
    )
    out = s(_scalar(0.1, 0.2), _scalar(0.5, 0.4))
    assert bool(torch.isfinite(out.data).all())
    with pytest.raises(FatalError) as e:
        s(_scalar(0.1, 0.2), _scalar(0.5, 0.0))
    assert "parameter 'max_fraction' (φmax) is outside (0, 1] at 1 of 2 points (points 1;" in (
        _one_line(e)
    )


def test_avrami_negative_conversion_names_the_point():
    a = _model(
        "    type = AvramiErofeevNucleation\n    coef = 0.7\n    order = 2.75\n"
        "    conversion_degree = 'alpha'\n"
    )
    assert bool(torch.isfinite(a(_scalar(0.0, 0.5)).data).all())
    with pytest.raises(FatalError) as e:
        a(_scalar(0.5, -0.2, 1.0))
    text = _one_line(e)
    assert "[Models/m]: input 'alpha' (the conversion degree α) is outside [0, 1)" in text
    assert "at 2 of 3 points (points 1, 2; first value -0.2)" in text


@pytest.mark.parametrize(
    ("body", "inputs", "message"),
    [
        (
            "    type = KozenyCarmanPermeability\n    reference_permeability = 1\n"
            "    reference_porosity = 0.3\n    n = 2\n    m = 2\n",
            (_scalar(0.2, 1.0),),
            "input 'porosity' (the porosity φ) is outside [0, 1) at 1 of 2 points (points 1;",
        ),
        (
            "    type = BrooksCoreyCapillaryPressure\n    threshold_pressure = 1\n"
            "    exponent = 2\n",
            (_scalar(0.5, 0.0),),
            "input 'effective_saturation' (the effective saturation S) is outside (0, inf)",
        ),
        (
            "    type = IdealSolutionVolumetricDrivingForce\n    current_concentrations = 'x'\n"
            "    equilibrium_concentrations = 0.1\n    gas_constant = 8.314\n",
            (_scalar(300.0), _scalar(0.2, -0.1)),
            "input 'x' (a concentration x) is outside (0, inf) at 1 of 2 points (points 1;",
        ),
        (
            "    type = SemiInfiniteCoordinateTransform\n    coordinate = 'x'\n    shift = 1\n",
            (_scalar(-2.0),),
            "input 'x' (the coordinate x) is outside [0, inf) at 1 of 1 points (points 0;",
        ),
    ],
)
def test_other_domains(body, inputs, message):
    with pytest.raises(FatalError) as e:
        _model(body)(*inputs)
    assert message in _one_line(e)


def test_the_check_is_skipped_inside_an_implicit_solve():
    g = _model(DEGRADATION)
    with suspended():
        out = g(_scalar(1.7))
    torch.testing.assert_close(out.data, torch.tensor([0.49], dtype=T))
    with pytest.raises(FatalError):
        g(_scalar(1.7))  # the suspension ends with the block


def test_require_reads_nothing_when_compiled():
    # no data-dependent branch under torch.compile: the check is skipped, no graph break
    calls = []

    class Probe:
        def error(self, message):
            calls.append(message)
            return FatalError(message)

    def f(x):
        require(Probe(), "x", x, "[0, 1]")
        return x * 2.0

    compiled = torch.compile(f, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(torch.tensor([1.7], dtype=T)), torch.tensor([3.4], dtype=T))
    assert calls == []
    with pytest.raises(FatalError):
        f(torch.tensor([1.7], dtype=T))


def test_export_skips_the_check():
    g = _model(DEGRADATION)

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.g = g

        def forward(self, d):
            return self.g(Scalar(d)).data

    x = torch.tensor([0.1, 1.7], dtype=T)
    ep = torch.export.export(Wrapped(), (x,), strict=False)
    torch.testing.assert_close(ep.module()(x), torch.tensor([0.81, 0.49], dtype=T))
