"""Bad input files: every error names the block or option and its file:line."""

from __future__ import annotations

import re
import textwrap

import pytest
import torch

from neml2.models import ComposedModel, Model, input, load_model, load_string, output, register
from neml2.tensors import FatalError, Scalar


@register("_TestPass")
class _Pass(Model):
    """``to = from`` (a Scalar copy), for wiring tests."""

    fields = (input("from", Scalar), output("to", Scalar))

    def forward(self, x):
        return x * 1.0


def _write(tmp_path, text):
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


ELASTIC = """
[Models]
  [m]
    type = LinearIsotropicElasticity
    coefficients = '1e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    {extra}
  []
[]
"""


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        ("youngs = 3", r":6:5: unknown option 'youngs' in \[Models/m\]; accepted: strain, stress"),
        ("compliance = maybe", r":6:\d+: .*compliance"),
        ("strain = 'a b'", None),  # a name with a space is still one string; no error
    ],
)
def test_option_errors(tmp_path, extra, pattern):
    p = _write(tmp_path, ELASTIC.format(extra=extra))
    if pattern is None:
        load_model(p, "m")
        return
    with pytest.raises(FatalError, match=pattern) as e:
        load_model(p, "m")
    assert str(e.value).startswith(str(p))


def test_unknown_type_suggests(tmp_path):
    p = _write(tmp_path, "[Models]\n  [m]\n    type = LinearIsotropicElastic\n  []\n[]\n")
    with pytest.raises(
        FatalError,
        match=r":3:5: unknown type 'LinearIsotropicElastic'.*"
        r"did you mean 'LinearIsotropicElasticity'",
    ):
        load_model(p, "m")


def test_missing_required_option(tmp_path):
    p = _write(tmp_path, "[Models]\n  [m]\n    type = LinearIsotropicElasticity\n  []\n[]\n")
    with pytest.raises(
        FatalError,
        match=r":2:\d+: \[Models/m\] is missing the required option "
        r"'coefficients'",
    ):
        load_model(p, "m")


def test_wrong_choice(tmp_path):
    p = _write(
        tmp_path,
        ELASTIC.replace("YOUNGS_MODULUS POISSONS", "YOUNG POISSONS").format(extra=""),
    )
    with pytest.raises(
        FatalError, match=r":5:\d+: option 'coefficient_types' = 'YOUNG' is not one"
    ):
        load_model(p, "m")


def test_bad_coefficient_pair_names_the_option(tmp_path):
    p = _write(tmp_path, ELASTIC.replace("POISSONS_RATIO", "YOUNGS_MODULUS").format(extra=""))
    with pytest.raises(FatalError, match=r":5:\d+: coefficient_types repeat a type"):
        load_model(p, "m")


def test_tensors_errors(tmp_path):
    p = _write(
        tmp_path,
        """
        [Tensors]
          [a]
            type = Python
            expr = 'b + 1'
          []
          [b]
            type = Python
            expr = 'a * 2'
          []
          [c]
            type = Python
            expr = 'undefined_name'
          []
          [d]
            type = Python
            expr = 'Scalar(1'
          []
        []
        [Models]
          [m]
            type = LinearIsotropicElasticity
            coefficients = 'c 0.3'
            coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
          []
        []
        """,
    )
    from neml2.models import load_input

    ctx = load_input(p)
    with pytest.raises(FatalError, match=r"cycle: Tensors/a -> Tensors/b -> Tensors/a"):
        ctx.tensor("a")
    with pytest.raises(FatalError, match=r":12:\d+: \[Tensors/c\] failed: NameError"):
        ctx.tensor("c")
    with pytest.raises(FatalError, match=r":16:\d+: invalid Python expression"):
        ctx.tensor("d")
    with pytest.raises(FatalError, match=r"no block named 'e' in \[Tensors\]"):
        ctx.tensor("e")
    with pytest.raises(FatalError, match="NameError"):
        load_model(p, "m")


WIRING = """
[Models]
  [a]
    type = _TestPass
    from = 'x'
    to = 'y'
  []
  [b]
    type = _TestPass
    from = 'y'
    to = '{b_to}'
  []
  [c]
    type = _TestPass
    from = 'z'
    to = 'w'
  []
  [all]
    type = ComposedModel
    models = '{models}'
    {extra}
  []
[]
"""


def test_composition_wires_by_name(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="z", models="c b a", extra=""))
    m = load_model(p, "all")
    assert isinstance(m, ComposedModel)
    assert m.input_names == ["x"] and m.output_names == ["w"]
    assert [c.hit_name for c in m._order] == ["a", "b", "c"]
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    torch.testing.assert_close(m.forward({"x": x})["w"], x)
    _, J = m.jacobian({"x": x})
    torch.testing.assert_close(J["w"]["x"], torch.ones(2, dtype=torch.float64))


def test_additional_outputs(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="z", models="a b c", extra="additional_outputs = 'y'"))
    assert load_model(p, "all").output_names == ["w", "y"]
    p = _write(tmp_path, WIRING.format(b_to="z", models="a b c", extra="additional_outputs = 'q'"))
    with pytest.raises(FatalError, match=r":20:\d+: additional output 'q' is not provided"):
        load_model(p, "all")


def test_cycle_is_reported(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="x", models="a b", extra=""))
    with pytest.raises(
        FatalError,
        match=r":19:\d+: the models depend on each other in a cycle: "
        r"(a -> b -> a|b -> a -> b)",
    ):
        load_model(p, "all")


def test_duplicate_provider_and_priority(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="w", models="a b c", extra=""))
    with pytest.raises(
        FatalError, match=r"variable 'w' is provided by more than one model \(b, c\)"
    ):
        load_model(p, "all")
    p = _write(tmp_path, WIRING.format(b_to="w", models="a b c", extra="priority = 'c b'"))
    m = load_model(p, "all")
    order = [c.hit_name for c in m._order]
    assert order.index("c") < order.index("b")  # the winner runs last


def test_unknown_model_in_composition(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="z", models="a b d", extra=""))
    with pytest.raises(FatalError, match=r":19:\d+: no block named 'd' in \[Models\]"):
        load_model(p, "all")


def test_model_refers_to_itself(tmp_path):
    p = _write(tmp_path, WIRING.format(b_to="z", models="a all", extra=""))
    with pytest.raises(FatalError, match=re.escape("cycle: Models/all -> Models/all")):
        load_model(p, "all")


def test_python_construction_errors():
    with pytest.raises(FatalError, match="missing required option 'coefficients'"):
        from neml2.models.solid_mechanics.elasticity import LinearIsotropicElasticity

        LinearIsotropicElasticity(coefficient_types=["YOUNGS_MODULUS", "POISSONS_RATIO"])
    with pytest.raises(FatalError, match="unknown option"):
        _Pass(frm="x")


def test_settings(tmp_path):
    from neml2.models import load_input

    p = _write(
        tmp_path,
        """
        [Settings]
          [example_batch_shape]
            rho = '(2; 12)'
            e = '(3)'
            bad = '2; 12'
          []
        []
        """,
    )
    ctx = load_input(p)
    assert ctx.example_batch_shape("rho") == ((2,), (12,))
    assert ctx.example_batch_shape("e") == ((3,), ())
    assert ctx.example_batch_shape("other") is None
    with pytest.raises(
        FatalError, match=r":5:\d+: expected '\(batch...; sub...\)' such as '\(N; 12\)'"
    ):
        ctx.example_batch_shape("bad")
    p = _write(tmp_path, "[Settings]\n  default_dtype = float32\n[]\n")
    with pytest.raises(FatalError, match=r":2:\d+: unknown setting 'default_dtype'"):
        load_input(p)


def test_settings_uniform_example_batch_shape(tmp_path):
    """The uniform form (one spec for every variable) of the reference's inputs; it and
    the per-variable block are mutually exclusive; a bad spec fails at load time."""
    from neml2.models import load_input

    ctx = load_input(_write(tmp_path, "[Settings]\n  example_batch_shape = '(1000,)'\n[]\n"))
    assert ctx.example_batch_shape("strain") == ((1000,), ())
    ctx = load_input(_write(tmp_path, "[Settings]\n  example_batch_shape = '(2; 5)'\n[]\n"))
    assert ctx.example_batch_shape("anything") == ((2,), (5,))
    both = (
        "[Settings]\n  example_batch_shape = '(2,)'\n"
        "  [example_batch_shape]\n    e = '(2)'\n  []\n[]\n"
    )
    with pytest.raises(FatalError, match=r":2:\d+: .*both .* mutually exclusive"):
        load_input(_write(tmp_path, both))
    with pytest.raises(
        FatalError, match=r":2:\d+: expected '\(batch...; sub...\)' such as '\(N; 12\)'.*, got '2'"
    ):
        load_input(_write(tmp_path, "[Settings]\n  example_batch_shape = '2'\n[]\n"))
    typo = "[Settings]\n  example_batch_shap = '(2,)'\n[]\n"
    with pytest.raises(FatalError, match="did you mean 'example_batch_shape'"):
        load_input(_write(tmp_path, typo))


def test_settings_n_is_the_dynamic_batch(tmp_path):
    """'(N; 12)', as docs/aoti.md writes it: N is the batch, of any size (ANY_SIZE), the
    number after the ';' the sub-batch shape; a bad size's message shows that form."""
    from neml2.models import load_input
    from neml2.models._input_file import ANY_SIZE

    assert ANY_SIZE == -1
    block = "[Settings]\n  [example_batch_shape]\n    rho = '{}'\n  []\n[]\n"
    for spec, shapes in [
        ("(N; 12)", ((ANY_SIZE,), (12,))),
        ("(N;12)", ((ANY_SIZE,), (12,))),
        ("(N, 2; 3, 4)", ((ANY_SIZE, 2), (3, 4))),
        ("(N)", ((ANY_SIZE,), ())),
        ("(1000; 12)", ((1000,), (12,))),
    ]:
        assert load_input(_write(tmp_path, block.format(spec))).example_batch_shape("rho") == shapes
    uniform = load_input(_write(tmp_path, "[Settings]\n  example_batch_shape = '(N; 5)'\n[]\n"))
    assert uniform.example_batch_shape("anything") == ((ANY_SIZE,), (5,))
    ctx = load_input(
        _write(tmp_path, "[Settings]\n[]\n"), ["+Settings/example_batch_shape/rho='(N; 12)'"]
    )
    assert ctx.example_batch_shape("rho") == ((ANY_SIZE,), (12,))
    form = r"the form is '\(N; 12\)': before the ';' the batch \(N: any size, or whole numbers\)"
    for spec, where in [
        ("(N; N)", "'N' after the ';' \\(the sub-batch\\) of '\\(N; N\\)'"),
        ("(n; 12)", "'n' in the batch of '\\(n; 12\\)'"),
        ("(2.5; 3)", "'2.5' in the batch"),
        ("(-1; 3)", "'-1' in the batch"),
    ]:
        ctx = load_input(_write(tmp_path, block.format(spec)))
        with pytest.raises(FatalError, match=rf":3:\d+: {where}.* is not a size; {form}"):
            ctx.example_batch_shape("rho")


@register("_TestRate")
class _Rate(Model):
    """``{x}_rate`` default output name derived from the input's name."""

    fields = (input("x", Scalar), output("rate", Scalar, "{x}_rate"))

    def forward(self, x):
        return x * 2.0


def test_variable_name_templates(tmp_path):
    assert _Rate().output_names == ["x_rate"]
    assert _Rate(x="X1").output_names == ["X1_rate"]
    assert _Rate(x="X1", rate="r").output_names == ["r"]
    with pytest.raises(FatalError, match="bad variable name template"):
        _Rate(rate="{nope}_rate")


def test_settings_accept_dynamic_batch_and_explain_v2_settings():
    base = (
        "[Models]\n  [m]\n    type = ScalarLinearCombination\n    from = 'a'\n    to = 'b'\n"
        "  []\n[]\n"
    )
    ok = base + "[Settings]\n  dynamic_batch = false\n[]\n"
    assert load_string(ok, "m") is not None
    bad_bool = base + "[Settings]\n  dynamic_batch = sometimes\n[]\n"
    with pytest.raises(FatalError, match=r"<string>:9.*dynamic_batch = 'sometimes'.*true or false"):
        load_string(bad_bool, "m")
    v2 = base + "[Settings]\n  default_floating_point_type = 'Float32'\n[]\n"
    with pytest.raises(
        FatalError,
        match=r"<string>:9.*'default_floating_point_type' is a setting of NEML2 v2.*dtype=",
    ):
        load_string(v2, "m")
