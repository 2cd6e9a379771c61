"""Derived variable names (``x~1``, ``x_rate``, ``x_residual``): declared once, applied
by the models, listed by the catalogue; and reference spellings answered with ours."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import neml2.models
from neml2.models import Model, input, load_input, load_nonlinear_system, load_string, output
from neml2.models._naming import HISTORY, RATE, RESIDUAL, RULES, rule_of_template
from neml2.models._schema import Schema, catalogue, derived
from neml2.tensors import FatalError, Scalar

SRC = Path(neml2.models.__file__).resolve().parents[1]


def _load(text: str, name: str | None = None):
    return load_string(textwrap.dedent(text), name)


def _concrete(model: Model) -> tuple[set[str], set[str]]:
    """The input and output names the catalogue entry of *model*'s type predicts
    (entries with a ``when`` condition are left out: they may not apply)."""
    ins, outs = set(), set()
    for d in catalogue(type(model))["derived"]:
        if d.get("when"):
            continue
        rule = next(r for r in RULES if r.key == d["rule"])
        source = model.opts[d["from"]] if d.get("each") else [model.var.get(d["from"])]
        renamed = d.get("renamed_by") and (
            model.var.get(d["renamed_by"]) or model.opts.get(d["renamed_by"])
        )
        names = {renamed} if renamed else {rule(n) for n in source}
        if d["kind"] == "replaces":
            ins |= names & set(model.input_spec)
            outs |= names & set(model.output_spec)
            assert names <= ins | outs, (d, names)
        else:
            (ins if d["kind"] == "input" else outs).update(names)
    return ins, outs


def _declared(model: Model) -> tuple[set[str], set[str]]:
    return set(model.input_spec), set(model.output_spec)


@pytest.mark.parametrize(
    ("block", "inputs", "outputs"),
    [
        (
            "type = SR2VariableRate\n variable = 'E'",
            {"E", "E~1", "t", "t~1"},
            {"E_rate"},
        ),
        (
            "type = SR2BackwardEulerTimeIntegration\n variable = 'stress'\n time = 'time'",
            {"stress", "stress~1", "stress_rate", "time", "time~1"},
            {"stress_residual"},
        ),
        (
            "type = ScalarForwardEulerTimeIntegration\n variable = 'h'\n rate = 'hdot'\n"
            " old_variable = 'g~1'",
            {"g~1", "hdot", "t", "t~1"},
            {"h"},
        ),
        (
            "type = WR2ImplicitExponentialTimeIntegration\n variable = 'orientation'",
            {"orientation", "orientation~1", "orientation_rate", "t", "t~1"},
            {"orientation_residual"},
        ),
        ("type = IrreversibleScalar\n from = 'trial'\n to = 'd'", {"trial", "d~1"}, {"d"}),
        (
            "type = KelvinVoigtElement\n modulus = 1\n viscosity = 2",
            {"strain", "strain_rate"},
            {"stress"},
        ),
        (
            "type = ZenerElement\n equilibrium_modulus = 1\n maxwell_modulus = 2\n"
            " maxwell_viscosity = 3\n viscous_strain = 'ev'",
            {"strain", "ev"},
            {"stress", "ev_rate"},
        ),
        (
            "type = LinearIsotropicElasticJ2TrialStressUpdate\n coefficients = '1e5 0.3'\n"
            " coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n"
            " equivalent_plastic_strain = 'ep'",
            {"elastic_trial_stress", "ep", "ep~1"},
            {"updated_trial_stress"},
        ),
        (
            "type = LinearIsotropicElasticity\n coefficients = '1e5 0.3'\n"
            " coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n rate_form = true\n"
            " compliance = true",
            {"stress_rate"},
            {"strain_rate"},
        ),
        (
            "type = ChabochePlasticHardening\n C = 1\n g = 2\n A = 3\n a = 4\n back_stress = 'X'",
            {"flow_rate", "flow_direction", "X"},
            {"X_rate"},
        ),
        (
            "type = ConstantExtrapolationPredictor\n unknowns_SR2 = 'stress'\n"
            " unknowns_Scalar = 'ep'\n cold = 'stress:s0'\n time = 'tt'",
            {"ep~1", "stress~1", "tt", "tt~1", "tt~2", "s0"},
            {"stress", "ep"},
        ),
        (
            "type = LinearExtrapolationPredictor\n unknowns_SR2 = 'stress'",
            {"t", "t~1", "t~2", "stress~1", "stress~2"},
            {"stress"},
        ),
    ],
)
def test_models_declare_what_the_catalogue_lists(block, inputs, outputs):
    m = _load(f"[Models]\n [m]\n {block}\n []\n[]\n")
    assert _declared(m) == (inputs, outputs)
    predicted_in, predicted_out = _concrete(m)
    # every derived name the catalogue lists (without a condition) is declared
    assert predicted_in <= inputs and predicted_out <= outputs


def test_nonlinear_system_residual_names(tmp_path):
    p = tmp_path / "sys.i"
    p.write_text(
        textwrap.dedent(
            """
            [Models]
              [m]
                type = SR2BackwardEulerTimeIntegration
                variable = 'stress'
              []
            []
            [EquationSystems]
              [eq]
                type = NonlinearSystem
                model = 'm'
                unknowns = 'stress'
              []
            []
            """
        )
    )
    system = load_nonlinear_system(p, "eq")
    assert system.residuals == ["stress_residual"]
    (d,) = catalogue(type(system))["derived"]
    assert (d["name"], d["kind"], d["renamed_by"]) == (
        "<unknowns>_residual",
        "output",
        "residuals",
    )


class _Undeclared(Model):
    fields = (input("x", Scalar), output("y", Scalar))

    def setup(self):
        self.declare_input(self.derived_name(HISTORY, "x"), Scalar)

    def forward(self, x, x_old):
        return x - x_old


class _Declared(_Undeclared):
    derives = (derived(HISTORY, "x"),)


def test_a_derivation_must_be_declared():
    with pytest.raises(TypeError, match=r"derives '<x>~1' without declaring it"):
        _Undeclared()
    m = _Declared()
    assert list(m.input_spec) == ["x", "x~1"]
    assert catalogue(_Declared)["derived"][0]["name"] == "<x>~1"


def test_a_declaration_must_name_an_option():
    class Bad(Model):
        fields = (input("x", Scalar), output("y", Scalar))
        derives = (derived(RATE, "z", output=True),)

    with pytest.raises(TypeError, match=r"Bad: derived '<z>_rate' refers to 'z', no option"):
        catalogue(Bad)


def test_templates_are_rules():
    assert rule_of_template(RATE.template("back_stress")) == (RATE, "back_stress")
    assert rule_of_template("{a}_b") is None
    assert [r("x") for r in RULES] == ["x~1", "x~2", "x_rate", "x_residual"]
    assert RESIDUAL.describe("<u>") == "residual of the equation for <u>"


def test_no_model_spells_a_suffix_itself():
    """A derived name built by hand (f"{x}~1") would be missing from the catalogue."""
    suffix = "|".join(re.escape(r.suffix) for r in RULES)
    pattern = re.compile(r"""f["'][^"'\n]*\}(""" + suffix + r""")["']""")
    found = []
    for path in sorted((SRC / "models").rglob("*.py")) + sorted((SRC / "solvers").rglob("*.py")):
        if path.name == "_naming.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(SRC)}:{i}: {line.strip()}")
    assert found == []


# ------------------------------------------------------------ reference spellings


def test_former_option_spelling_is_answered(tmp_path):
    text = """
    [Models]
      [p]
        type = ConstantExtrapolationPredictor
        unknowns_Rot = 'orientation'
      []
    []
    """
    with pytest.raises(FatalError) as e:
        _load(text)
    assert str(e.value) == (
        "<string>:5:5: unknown option 'unknowns_Rot' in [Models/p] (did you mean "
        "'unknowns_MRP'? 'unknowns_Rot' is the reference NEML2's older spelling)"
    )
    schema = Schema.of(neml2.models.lookup("ConstantExtrapolationPredictor"))
    with pytest.raises(FatalError, match=r"unknown option\(s\) unknowns_Rot \(did you mean"):
        schema.fill_defaults({"unknowns_Rot": ["a"]}, "here")


def test_former_type_name_is_answered():
    text = "[Models]\n  [c]\n    type = CopyRot\n    from = 'a'\n    to = 'b'\n  []\n[]\n"
    with pytest.raises(
        FatalError,
        match=r"<string>:3:5: unknown type 'CopyRot' in \[Models/c\] \(did you mean 'CopyMRP'\? "
        r"older NEML2 called the rotation type 'Rot', now 'MRP'\)",
    ):
        _load(text)


@pytest.mark.parametrize(
    ("old", "expr"),
    [
        ("FillSR2", "SR2.fill(...components)"),
        ("LinspaceScalar", "linspace(start, end, steps)"),
        ("FullScalar", "Scalar.full(value, batch_shape)"),
        ("FillRot", "MRP.fill(...components)"),
        ("SR2", "SR2(torch.tensor([...], dtype=torch.float64))"),
    ],
)
def test_former_tensor_types_point_to_python(tmp_path, old, expr):
    p = tmp_path / "t.i"
    p.write_text(f"[Tensors]\n  [x]\n    type = {old}\n    values = '1 2 3'\n  []\n[]\n")
    with pytest.raises(FatalError) as e:
        load_input(p).tensor("x")
    msg = str(e.value)
    assert msg.startswith(f"{p}:3:5: unknown tensor type '{old}' in [Tensors/x] (did you mean ")
    assert f"'type = Python' with expr = '{expr}'?" in msg
    assert msg.endswith("the [Tensors] types: CSVSR2, CSVScalar, CSVVec, CSVWR2, Python")


def test_unknown_tensor_type_without_history_gets_the_closest(tmp_path):
    p = tmp_path / "t.i"
    p.write_text("[Tensors]\n  [x]\n    type = Pyhton\n    expr = '1'\n  []\n[]\n")
    with pytest.raises(FatalError, match=r"unknown tensor type 'Pyhton' .*did you mean 'Python'"):
        load_input(p).tensor("x")


def test_former_name_in_an_expression_is_answered(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(
        "[Tensors]\n  [q]\n    type = Python\n    expr = 'Rot.fill(0.1, 0, 0)'\n  []\n[]\n"
    )
    with pytest.raises(FatalError) as e:
        load_input(p).tensor("q")
    assert str(e.value) == (
        f"{p}:4:5: [Tensors/q] failed: NameError: name 'Rot' is not defined (did you mean "
        "'MRP'? older NEML2 called the rotation type 'Rot', now 'MRP')"
    )
    p.write_text("[Tensors]\n  [q]\n    type = Python\n    expr = 'linspac(0, 1, 3)'\n  []\n[]\n")
    with pytest.raises(FatalError, match=r"NameError: name 'linspac' .*did you mean 'linspace'"):
        load_input(p).tensor("q")
