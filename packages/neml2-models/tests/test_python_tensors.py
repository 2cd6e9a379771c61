"""``[Tensors] type = Python``: the vocabulary of the inputs works, the rest is refused.

Expressions see the typed-tensor API, the listed names of ``torch``, ``math`` and
``np`` and an allow-list of builtins; an attribute starting with ``_``, a name
starting with ``__`` and any other builtin are rejected before evaluation, with the
file:line (test_expression_allow_list.py tests the allow-list itself).
Command-line overrides that name a misspelled option are caught by the schema,
at ``<command line>:N:COL``, with a suggestion.
"""

from __future__ import annotations

import textwrap

import pytest

from neml2.models import load_input, load_model
from neml2.models._expression_vocabulary import BUILTIN_NAMES
from neml2.tensors import SR2, FatalError, Scalar

TENSORS = """
[Tensors]
  [x]
    type = Python
    expr = {expr}
  []
  [ten]
    type = Python
    expr = 'Scalar(10.0)'
  []
  [{other}]
    type = Python
    expr = 'Scalar(2.0)'
  []
[]
"""


def tensor(tmp_path, expr: str, other: str = "two"):
    p = tmp_path / "t.i"
    p.write_text(TENSORS.format(expr=expr, other=other))
    return load_input(p).tensor("x")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("'Scalar(float(sum([1, 2, abs(-3)])))'", 6.0),
        ("'Scalar(float(len(list(range(4)))) + max(1, 2) - min(3, 4) + round(0.4))'", 3.0),
        ("'Scalar(float(sum(a * b for a, b in zip([1, 2], [3, 4]))))'", 11.0),
        ("'Scalar(float(sum(i for i, _ in enumerate(map(abs, [-1, -2, -3])))))'", 3.0),
        ("'Scalar(2.0**3) + ten'", 18.0),  # another [Tensors] block
        ("'Scalar(ten.data * 2) + two'", 22.0),
        ("'(lambda open: Scalar(open))(4.0)'", 4.0),  # a lambda argument shadows a builtin
        ("'Scalar(float(bool(True) and not None)) + Scalar(math.pi - math.pi)'", 1.0),
        ("'Scalar(torch.tensor(np.float64(5.0)))'", 5.0),
        ("'input * 3'", 6.0),  # a [Tensors] block named like a builtin
        # torch's C code imports torch through the frame's builtins: must not fail
        ("'Scalar(torch.linspace(1.0, 10.0, 5, dtype=torch.float64).sum())'", 27.5),
    ],
)
def test_allowed_vocabulary(tmp_path, expr, expected):
    value = tensor(tmp_path, expr, other="input" if "input" in expr else "two")
    assert isinstance(value, Scalar)
    assert float(value.data) == expected


def test_conformance_style_expressions(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(
        textwrap.dedent(
            """
            [Tensors]
              [end_time]
                type = Python
                expr = 'linspace(Scalar(1.0).dynamic_batch, Scalar(10.0).dynamic_batch, 4)'
              []
              [times]
                type = Python
                expr = 'Scalar(torch.stack([torch.linspace(0, t.item(), 5, dtype=torch.float64)
                          for t in end_time.data], dim=-1))'
              []
              [strain]
                type = Python
                expr = '''
                  SR2(torch.tensor([
                      [0.01, -0.005, -0.005, 0.0, 0.0, 0.0],
                      [0.02, -0.01, -0.01, 0.0, 0.0, 0.0],
                  ], dtype=torch.float64))
                '''
              []
              [per_slip]
                type = Python
                expr = 'Scalar([750.0, 850.0, 950.0]).sub_batch.retag(1)'
              []
            []
            """
        )
    )
    ctx = load_input(p)
    assert tuple(ctx.tensor("times").data.shape) == (5, 4)
    assert isinstance(ctx.tensor("strain"), SR2)
    assert ctx.tensor("per_slip") is not None


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("'__import__(\"os\").getcwd()'", "name '__import__' is not allowed"),
        ("'__builtins__'", "name '__builtins__' is not allowed"),
        ("'(lambda __x: __x)(1)'", "name '__x' is not allowed"),
        ("'open(\"t.i\")'", "'open' is not an allowed builtin"),
        ("'eval(\"1\")'", "'eval' is not an allowed builtin"),
        ("'exec(\"y = 1\")'", "'exec' is not an allowed builtin"),
        ('\'compile("1", "f", "eval")\'', "'compile' is not an allowed builtin"),
        ("'getattr(torch, \"zeros\")(1)'", "'getattr' is not an allowed builtin"),
        ("'setattr(torch, \"x\", 1)'", "'setattr' is not an allowed builtin"),
        ("'globals()'", "'globals' is not an allowed builtin"),
        ("'vars(torch)'", "'vars' is not an allowed builtin"),
        ("'type(ten)'", "'type' is not an allowed builtin"),
        ("'ten.__class__'", "attribute '__class__' is not allowed"),
        ("'torch._C'", "attribute '_C' is not allowed"),
        ("'ten._data'", "attribute '_data' is not allowed"),
        ("'[c for c in ().__class__.__bases__]'", "attribute '__class__' is not allowed"),
    ],
)
def test_rejected_constructs(tmp_path, expr, fragment):
    with pytest.raises(FatalError) as info:
        tensor(tmp_path, expr)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 't.i'}:5:5: [Tensors/x] rejected expression: ")
    assert fragment in message


def test_nothing_runs_before_the_check(tmp_path):
    """The whole expression is refused: an allowed call before a forbidden one never runs."""
    with pytest.raises(FatalError, match="'open' is not an allowed builtin"):
        tensor(tmp_path, "'[torch.zeros(1), open(\"t.i\")]'")


def test_multiline_rejection_and_syntax_error_name_the_line(tmp_path):
    bad = "'''\n      (Scalar(\n        1.0)\n       + ten.__dict__)\n    '''"
    with pytest.raises(FatalError, match=r"rejected expression \(line 3 of the expression\): "):
        tensor(tmp_path, bad)
    with pytest.raises(FatalError) as info:
        tensor(tmp_path, "'''\n      Scalar(\n        1.0))\n    '''")
    assert "t.i:5:5: invalid Python expression in [Tensors/x] (line 2 of the expression)" in str(
        info.value
    )


def test_failing_expressions_name_the_block(tmp_path):
    with pytest.raises(FatalError, match=r"t\.i:5:5: \[Tensors/x\] failed: NameError"):
        tensor(tmp_path, "'Scalar(nope)'")
    with pytest.raises(FatalError, match=r"t\.i:5:5: \[Tensors/x\]: a block of statements must"):
        tensor(tmp_path, "'y = 1'")  # statements must leave their value in 'result'
    with pytest.raises(FatalError, match=r"t\.i:5:5: invalid Python expression in \[Tensors/x\]"):
        tensor(tmp_path, "'Scalar(1.0'")


def test_builtins_namespace_is_the_allow_list():
    assert set(BUILTIN_NAMES) >= {"abs", "min", "max", "range", "len", "float", "int", "sum"}
    assert not {"open", "eval", "exec", "compile", "getattr", "__import__"} & set(BUILTIN_NAMES)


def test_unknown_tensor_option_suggests(tmp_path):
    p = tmp_path / "t.i"
    p.write_text("[Tensors]\n  [x]\n    type = Python\n    expr = '1'\n    tpye = 2\n  []\n[]\n")
    with pytest.raises(
        FatalError, match=r"t\.i:5:5: unknown option 'tpye' in \[Tensors/x\] \(did y"
    ):
        load_input(p).tensor("x")


ELASTIC = """
[Models]
  [el]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def test_misspelled_override_option_is_caught_by_the_schema(tmp_path):
    p = tmp_path / "m.i"
    p.write_text(ELASTIC)
    with pytest.raises(FatalError) as info:
        load_model(p, "el", ["Models/el/coeficients='1 0.3'"])
    assert str(info.value).startswith(
        "<command line>:1:1: unknown option 'coeficients' in [Models/el] "
        "(did you mean 'coefficients'?)"
    )
    with pytest.raises(FatalError, match="no block 'Model' \\(did you mean 'Models/el/"):
        load_model(p, "el", ["Model/el/coefficients='1 0.3'"])
    # an option absent from the file but known to the schema is a fine target
    m = load_model(p, "el", ["Models/el/rate_form=false"])
    assert "stress" in m.output_spec


def test_statements_ending_in_result(tmp_path):
    # the reference library's multi-line form: assignments, the value in 'result'
    x = tensor(tmp_path, "'a = 2.0\nb = a * ten\nresult = Scalar(torch.tensor(b.data + 1))'")
    assert float(x.data) == 21.0


def test_lambda_argument_is_not_a_tensor_reference(tmp_path):
    # 'r' names another [Tensors] block, but inside the lambda it is the argument
    x = tensor(tmp_path, "'(lambda r: r * 3.0)(Scalar(2.0))'", other="r")
    assert float(x.data) == 6.0


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("'a = Scalar(1.0)'", "must assign its value to 'result'"),
        ("'import os\nresult = Scalar(1.0)'", "'Import' statement is not allowed"),
        ("'def f():\n  return 1\nresult = Scalar(1.0)'", "'FunctionDef' statement is not allowed"),
        ("'a = open\nresult = Scalar(1.0)'", "'open' is not an allowed builtin"),
    ],
)
def test_bad_statement_blocks_name_the_line(tmp_path, expr, fragment):
    with pytest.raises(FatalError, match=r"t\.i:\d+:\d+") as info:
        tensor(tmp_path, expr)
    assert fragment in str(info.value)
