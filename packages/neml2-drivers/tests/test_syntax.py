"""``neml2-syntax``: full docstrings, options with choices and lists, derived variable
names, the naming conventions, and a ``--json`` that only ever gains keys."""

from __future__ import annotations

import json

import pytest

from neml2.drivers._cli import EXIT_FATAL, syntax_main
from neml2.drivers._syntax import conventions_text, derived_summary, field_summary
from neml2.models._naming import RULES


def _text(capsys, *argv: str) -> str:
    assert syntax_main(list(argv)) == 0
    return capsys.readouterr().out


def _json(capsys, *argv: str) -> dict:
    return json.loads(_text(capsys, "--json", *argv))


def test_text_shows_the_whole_docstring_choices_and_lists(capsys):
    out = _text(capsys, "LinearIsotropicElasticity")
    assert out.startswith("[Models] LinearIsotropicElasticity\n")
    # every line of the docstring, not only the first
    assert "`σ = 3K vol(ε) + 2G dev(ε)`" in out and "map relates the rates" in out
    assert (
        "coefficient_types (option, list of str, required, one of: YOUNGS_MODULUS, "
        "POISSONS_RATIO" in " ".join(out.split())
    )
    assert "coefficients (parameter, list of Scalar, required)" in out
    assert "rate_form (option, bool, default False)" in out


def test_text_lists_the_derived_variables(capsys):
    out = " ".join(_text(capsys, "SR2BackwardEulerTimeIntegration").split())
    assert "derived variables (named after an option's variable):" in out
    assert "<variable>~1 (input, SR2): <variable> at the previous step" in out
    assert "<variable>_rate (input, SR2): time rate of <variable>; option 'rate' names it" in out
    assert "<time>~1 (input, Scalar)" in out
    assert "<variable>_residual (output, SR2): residual of the equation for <variable>" in out
    el = " ".join(_text(capsys, "LinearIsotropicElasticity").split())
    assert "<strain>_rate (replaces <strain>, SR2): time rate of <strain>; only when" in el
    # a type that derives nothing says nothing about it
    assert "derived variables" not in _text(capsys, "SR2Invariant")


def test_json_keys_are_kept_and_extended(capsys):
    data = _json(capsys, "SR2BackwardEulerTimeIntegration", "LinearIsotropicElasticity")
    assert set(data) == {"types", "conventions"}
    be, el = data["types"]
    # the keys earlier versions printed are all still there
    assert {"type", "section", "doc", "fields"} <= set(be)
    for f in be["fields"] + el["fields"]:
        assert {"name", "kind", "doc", "required", "default"} <= set(f)
    assert be["derived"] == [
        {
            "name": "<variable>~1",
            "from": "variable",
            "rule": "history",
            "kind": "input",
            "type": "SR2",
            "doc": "<variable> at the previous step",
        },
        {
            "name": "<variable>_rate",
            "from": "variable",
            "rule": "rate",
            "kind": "input",
            "type": "SR2",
            "doc": "time rate of <variable>",
            "renamed_by": "rate",
        },
        {
            "name": "<time>~1",
            "from": "time",
            "rule": "history",
            "kind": "input",
            "type": "Scalar",
            "doc": "<time> at the previous step",
        },
        {
            "name": "<variable>_residual",
            "from": "variable",
            "rule": "residual",
            "kind": "output",
            "type": "SR2",
            "doc": "residual of the equation for <variable>",
        },
    ]
    # the docstring is dedented, whole
    assert "\n    " not in be["doc"] and be["doc"].count("\n") >= 2
    rate = {d["from"]: d for d in el["derived"]}
    assert rate["strain"]["kind"] == "replaces" and rate["strain"]["when"] == "rate_form = true"
    assert [c["example"] for c in data["conventions"]] == [r("x") for r in RULES]


def test_variable_defaults_built_by_a_rule_are_derived_names(capsys):
    (fa,) = _json(capsys, "FredrickArmstrongPlasticHardening")["types"]
    assert fa["derived"] == [
        {
            "name": "<back_stress>_rate",
            "from": "back_stress",
            "rule": "rate",
            "kind": "output",
            "type": "SR2",
            "doc": "back stress rate (default: <back_stress>_rate)",
            "renamed_by": "back_stress_rate",
        }
    ]


def test_list_sources_derive_one_name_each(capsys):
    (pred,) = _json(capsys, "LinearExtrapolationPredictor")["types"]
    sr2 = [d for d in pred["derived"] if d["from"] == "unknowns_SR2"]
    assert [d["name"] for d in sr2] == ["<unknowns_SR2>~1", "<unknowns_SR2>~2"]
    assert all(d["each"] and d["type"] == "SR2" for d in sr2)
    assert "one for each name in 'unknowns_SR2'" in derived_summary(sr2[0])


def test_former_spellings_are_shown(capsys):
    out = " ".join(_text(capsys, "TransientDriver").split())
    assert "prescribed_SR2_names (option, list of str, default '')" in out
    assert "(older NEML2 spelling: force_SR2_names)" in out
    assert "ic_MRP_names" in out and "older NEML2 spelling: ic_Rot_names" in out
    (td,) = _json(capsys, "TransientDriver")["types"]
    fields = {f["name"]: f for f in td["fields"]}
    assert fields["prescribed_MRP_values"]["formerly"] == [
        "prescribed_Rot_values",
        "force_MRP_values",
        "force_Rot_values",
    ]
    assert "formerly" not in fields["model"]


def test_python_tensor_type_is_described(capsys):
    out = _text(capsys, "Python")
    assert out.startswith("[Tensors] Python\n")
    for phrase in (
        "`torch`, `math`, `np` and `numpy`",
        "allow-list",
        "--allow-python-code",
        "- `torch`: abs, ",  # the listed names, generated from the allow-list
        "result",
        "float64",
        "expr (option",
    ):
        assert phrase in out


def test_patterns_brief_and_section(capsys):
    brief = _text(capsys, "*BackwardEulerTimeIntegration", "--brief").splitlines()
    assert len(brief) == 4
    assert all(line.startswith("[Models] ") and "BackwardEuler" in line for line in brief)
    drivers = _text(capsys, "--section", "Drivers", "--brief").splitlines()
    assert drivers and all(line.startswith("[Drivers] ") for line in drivers)
    assert syntax_main(["--section", "Nope"]) == EXIT_FATAL
    assert "no type in section 'Nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("CopyRot", "did you mean 'CopyMRP'? older NEML2 called the rotation type 'Rot'"),
        ("LinearIsotropicElastic", "did you mean 'LinearIsotropicElasticity'"),
        ("*Nothing*", "unknown type '*Nothing*'"),
    ],
)
def test_unknown_types_are_answered(capsys, name, hint):
    assert syntax_main([name]) == EXIT_FATAL
    assert hint in capsys.readouterr().err


def test_conventions_explain_every_rule(capsys):
    out = _text(capsys, "--conventions")
    assert out.startswith("Naming conventions\n")
    for rule in RULES:
        assert f"  {rule('x'):<12} {rule.describe(long=True)[:30]}" in out
    assert "state/x" in out and "force_SR2_names" in out
    assert conventions_text(200).count("\n") < out.count("\n")  # wrapped to the width


def test_field_summary_of_a_model_reference():
    f = {"name": "model", "kind": "model", "type": "[Models] name", "many": False}
    assert field_summary({**f, "required": True}) == "model (model, [Models] name, required)"
    assert field_summary({**f, "required": False, "default": "a", "many": True}) == (
        "model (model, list of [Models] name, default 'a')"
    )
