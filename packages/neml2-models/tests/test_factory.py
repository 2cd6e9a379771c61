"""load_model: HIT file -> registered class, and the errors a user sees on bad input."""

from __future__ import annotations

import textwrap

import pytest

import neml2
from neml2.models import Model, input, load_model, output, parameter, register, registered_types
from neml2.models._registry import RegistryError
from neml2.tensors import FatalError, Scalar


@register("_TestScale")
class _Scale(Model):
    """A minimal registered model: ``y = factor * x``."""

    fields = (
        input("x", Scalar),
        output("y", Scalar),
        parameter("factor", Scalar),
    )

    def forward(self, x):
        return self.param("factor") * x


def _write(tmp_path, text, name="input.i"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


GOOD = """
[Models]
  [scale]
    type = _TestScale
    factor = 2.5
  []
  [other]
    type = _TestScale
    factor = 1
  []
[]
"""


def test_facade_is_the_models_loader():
    assert neml2.load_model is load_model


def test_load_and_override(tmp_path):
    p = _write(tmp_path, GOOD)
    assert float(load_model(p, "scale").factor) == 2.5
    assert float(load_model(str(p), "scale", overrides=["Models/scale/factor=4"]).factor) == 4.0


def test_registered_types_lists_test_type():
    assert "_TestScale" in registered_types()


def test_duplicate_registration_is_an_error():
    with pytest.raises(RegistryError, match="already registered"):

        @register("_TestScale")
        class Other:
            pass


def test_missing_file(tmp_path):
    with pytest.raises(FatalError, match="input file not found"):
        load_model(tmp_path / "nope.i", "scale")


def test_unknown_model_name_suggests(tmp_path):
    p = _write(tmp_path, GOOD)
    with pytest.raises(FatalError) as e:
        load_model(p, "scael")
    msg = str(e.value)
    assert msg.startswith(f"{p}:1:")
    assert "no block named 'scael' in [Models]" in msg
    assert "did you mean 'scale'" in msg
    assert "defined: scale, other" in msg


def test_unknown_type_names_the_option(tmp_path):
    p = _write(tmp_path, GOOD.replace("type = _TestScale\n    factor = 2.5", "type = _TestScal"))
    with pytest.raises(FatalError) as e:
        load_model(p, "scale")
    msg = str(e.value)
    assert msg.startswith(f"{p}:3:")
    assert "unknown type '_TestScal' in [Models/scale]" in msg
    assert "did you mean '_TestScale'" in msg


def test_missing_type(tmp_path):
    p = _write(tmp_path, "[Models]\n  [m]\n    factor = 1\n  []\n[]\n")
    with pytest.raises(FatalError, match=r":2:\d+: \[Models/m\] has no 'type' option"):
        load_model(p, "m")


def test_no_models_section(tmp_path):
    p = _write(tmp_path, "[Tensors]\n[]\n")
    with pytest.raises(FatalError, match=r"no \[Models\] section"):
        load_model(p, "m")


def test_hit_syntax_error_becomes_fatal_with_location(tmp_path):
    p = _write(tmp_path, "[Models]\n  [m]\n    type = _TestScale\n  []\n")
    with pytest.raises(FatalError) as e:
        load_model(p, "m")
    assert str(e.value).startswith(f"{p}:")
