"""The top-level API the reference documentation uses: neml2.__version__, neml2.factory
(load_model, load_string, load_nonlinear_system), register_neml2_object and
neml2.solvers.ConvergenceError."""

from __future__ import annotations

import importlib
import importlib.metadata
import textwrap

import pytest
import torch

import neml2
from neml2.models import Model, input, lookup, output, registered_types
from neml2.models._registry import RegistryError
from neml2.tensors import FatalError, Scalar


@neml2.register_neml2_object
class _TestFactoryResidual(Model):
    """``x_residual = x - g``: solved for ``x`` by the ImplicitUpdate below."""

    fields = (input("x", Scalar), input("g", Scalar), output("x_residual", Scalar))

    def forward(self, x, g):
        return x - g


SCALE = """\
[Models]
  [res]
    type = _TestFactoryResidual
  []
[]
"""

IMPLICIT = """\
[Models]
  [res]
    type = _TestFactoryResidual
  []
  [solve]
    type = ImplicitUpdate
    equation_system = 'eq'
    solver = 'newton'
  []
[]
[EquationSystems]
  [eq]
    type = NonlinearSystem
    model = 'res'
    unknowns = 'x'
  []
[]
[Solvers]
  [newton]
    type = Newton
  []
[]
"""


def _write(tmp_path, text, name="input.i"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


# ---------------------------------------------------------------- version, module, facade
def test_version_is_the_installed_distribution_version():
    assert neml2.__version__ == importlib.metadata.version("neml2-models")


def test_factory_is_a_submodule_reexporting_the_same_functions():
    factory = importlib.import_module("neml2.factory")
    assert neml2.factory is factory
    assert factory.load_model is neml2.load_model is neml2.models.load_model
    assert factory.load_string is neml2.models.load_string
    assert factory.load_nonlinear_system is neml2.models.load_nonlinear_system
    assert factory.register_neml2_object is neml2.models.register_neml2_object


def test_facade_reaches_the_new_loaders():
    assert neml2.load_string is neml2.factory.load_string
    assert neml2.load_nonlinear_system is neml2.factory.load_nonlinear_system
    assert neml2.register_neml2_object is neml2.factory.register_neml2_object


def test_solvers_convergence_error_is_the_tensors_class():
    from neml2.solvers import ConvergenceError

    assert ConvergenceError is neml2.tensors.ConvergenceError


# ---------------------------------------------------------------- load_string
def test_load_string_loads_the_named_model():
    m = neml2.factory.load_string(IMPLICIT, "solve")
    out = m(Scalar(torch.tensor([1.5, -2.0], dtype=torch.float64)))
    torch.testing.assert_close(out.data, torch.tensor([1.5, -2.0], dtype=torch.float64))


def test_load_string_without_a_name_loads_the_only_model():
    m = neml2.load_string(SCALE)
    assert m.hit_name == "res"
    assert list(m.input_spec) == ["x", "g"]


def test_load_string_without_a_name_needs_exactly_one_model():
    with pytest.raises(
        FatalError,
        match=r"^<string>:1:1: \[Models\] defines 2 models \(res, solve\); name the one to load",
    ):
        neml2.load_string(IMPLICIT)


def test_load_string_applies_overrides():
    text = """
    [Models]
      [e]
        type = LinearIsotropicElasticity
        coefficients = '200e3 0.3'
        coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
      []
    []
    """
    strain = neml2.tensors.SR2(torch.tensor([1e-3, 0, 0, 0, 0, 0], dtype=torch.float64))
    base = neml2.load_string(text, "e")(strain)
    half = neml2.load_string(text, "e", ["Models/e/coefficients='100e3 0.3'"])(strain)
    torch.testing.assert_close(half.data, base.data / 2)


def test_load_string_syntax_error_names_string_and_line():
    with pytest.raises(FatalError, match=r"^<string>:\d+:\d+: "):
        neml2.load_string("[Models]\n  [m]\n    type = _TestFactoryResidual\n  []\n")


def test_load_string_errors_name_string_like_file_errors_name_the_file(tmp_path):
    bad = SCALE.replace("_TestFactoryResidual", "_TestFactoryResidul")
    with pytest.raises(FatalError) as from_text:
        neml2.load_string(bad, "res")
    p = _write(tmp_path, bad)
    with pytest.raises(FatalError) as from_file:
        neml2.load_model(p, "res")
    assert str(from_text.value).startswith("<string>:3:")
    assert str(from_file.value).startswith(f"{p}:3:")
    assert str(from_text.value).removeprefix("<string>") == str(from_file.value).removeprefix(
        str(p)
    )


def test_load_string_without_models_section():
    with pytest.raises(
        FatalError, match=r"^<string>: no \[Models\] section; cannot load model 'm'"
    ):
        neml2.load_string("[Tensors]\n[]\n", "m")


def test_load_string_unknown_model_name_suggests():
    with pytest.raises(FatalError, match=r"^<string>:\d+:\d+: no block named 'slove'.*'solve'"):
        neml2.load_string(IMPLICIT, "slove")


def test_load_string_rejects_non_text():
    with pytest.raises(TypeError, match="must be a str, not bytes"):
        neml2.load_string(SCALE.encode(), "res")


# ---------------------------------------------------------------- load_nonlinear_system
def test_load_nonlinear_system_returns_the_equation_system(tmp_path):
    p = _write(tmp_path, IMPLICIT)
    system = neml2.factory.load_nonlinear_system(p, "eq")
    assert isinstance(system, neml2.solvers.NonlinearSystem)
    assert system.hit_name == "eq"
    assert system.unknowns == ["x"] and system.residuals == ["x_residual"]
    assert system.givens == ["g"]
    assert isinstance(system.model, _TestFactoryResidual)


def test_load_nonlinear_system_unknown_name(tmp_path):
    p = _write(tmp_path, IMPLICIT)
    with pytest.raises(FatalError) as e:
        neml2.load_nonlinear_system(p, "qe")
    msg = str(e.value)
    assert msg.startswith(f"{p}:")
    assert "no block named 'qe' in [EquationSystems]" in msg and "defined: eq" in msg


def test_load_nonlinear_system_without_section(tmp_path):
    p = _write(tmp_path, SCALE)
    with pytest.raises(FatalError, match=r"no \[EquationSystems\] section; cannot load"):
        neml2.load_nonlinear_system(p, "eq")


def test_load_nonlinear_system_missing_file(tmp_path):
    with pytest.raises(FatalError, match="input file not found"):
        neml2.load_nonlinear_system(tmp_path / "nope.i", "eq")


# ---------------------------------------------------------------- register_neml2_object
def test_register_neml2_object_bare_registers_under_the_class_name():
    assert lookup("_TestFactoryResidual") is _TestFactoryResidual
    assert "_TestFactoryResidual" in registered_types()


def test_register_neml2_object_called_forms():
    @neml2.register_neml2_object()
    class _TestFactoryCalled:
        pass

    @neml2.register_neml2_object("_TestFactoryNamed")
    class _Named:
        pass

    @neml2.register_neml2_object(name="_TestFactoryKeyword")
    class _Keyword:
        pass

    assert lookup("_TestFactoryCalled") is _TestFactoryCalled
    assert lookup("_TestFactoryNamed") is _Named
    assert lookup("_TestFactoryKeyword") is _Keyword


def test_register_neml2_object_shares_the_register_registry():
    with pytest.raises(RegistryError, match="'_TestFactoryResidual' is already registered"):

        @neml2.models.register("_TestFactoryResidual")
        class _Other:
            pass

    with pytest.raises(RegistryError, match="'ImplicitUpdate' is already registered"):

        @neml2.register_neml2_object("ImplicitUpdate")
        class _Clash:
            pass


def test_register_neml2_object_rejects_a_non_class():
    with pytest.raises(TypeError, match="decorates a class, not a int"):
        neml2.register_neml2_object(3)
