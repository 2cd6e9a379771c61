"""``[Tensors] type = Python`` is an allow-list interpreter: expressions cannot run code.

The expression is evaluated node by node (no ``eval``/``exec``); ``torch``, ``math``
and ``np`` are never values, only their listed names are; attributes and calls are
listed; sizes and steps are bounded. Arbitrary Python needs the explicit opt-in
(``allow_python_code=True``, ``NEML2_ALLOW_PYTHON_CODE=1``, ``--allow-python-code``).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
import torch

import neml2.models._expression_check as check_module
import neml2.models._expression_limits as limits_module
import neml2.models._expression_vocabulary as vocabulary
import neml2.models._expressions as expressions
from neml2.models import ALLOW_PYTHON_CODE_ENV, allow_python_code, load_input
from neml2.tensors import FatalError, TensorWrapper

TENSORS = """
[Tensors]
  [x]
    type = Python
    expr = '''{expr}'''
  []
  [ten]
    type = Python
    expr = 'Scalar(10.0)'
  []
[]
"""


@pytest.fixture(autouse=True)
def no_opt_in(monkeypatch):
    """Every test starts without the environment's opt-in (and restores it after)."""
    monkeypatch.delenv(ALLOW_PYTHON_CODE_ENV, raising=False)


def write(tmp_path: Path, expr: str) -> Path:
    p = tmp_path / "t.i"
    p.write_text(TENSORS.format(expr=expr))
    return p


def tensor(tmp_path: Path, expr: str, **kwargs):
    return load_input(write(tmp_path, expr), **kwargs).tensor("x")


def refusal(tmp_path: Path, expr: str) -> str:
    with pytest.raises(FatalError) as info:
        tensor(tmp_path, expr)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 't.i'}:5:5: [Tensors/x] rejected expression")
    assert "--allow-python-code" in message and "NEML2_ALLOW_PYTHON_CODE=1" in message
    return message


# ------------------------------------------------------------------ the escapes
@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ('torch.os.system("touch {tmp}/pwned") + SR2.fill(1, 2, 3, 4, 5, 6)', "'os' of torch"),
        ('torch.sys.modules["os"].system("touch {tmp}/pwned")', "attribute 'sys' of torch"),
        ('torch.save(ten.data, "{tmp}/pwned")', "attribute 'save' of torch"),
        ('torch.load("{tmp}/payload.pt", weights_only=False)', "attribute 'load' of torch"),
        ('torch.from_file("{tmp}/t.i")', "attribute 'from_file' of torch"),
        ('"{{0.__class__}}".format(ten)', "attribute 'format' is not allowed"),
        ('"{{0}}".format(ten)', "attribute 'format' is not allowed"),
        ("np.lib", "attribute 'lib' of np is not allowed"),
        ("math.__loader__", "attribute '__loader__' is not allowed"),
        ("torch", "'torch' is a module, not a value"),
        ("torch.nn", "'torch.nn' is a module, not a value"),
        ("ten.data.numpy()", "attribute 'numpy' is not allowed"),
        ("ten.data.apply_(abs)", "attribute 'apply_' is not allowed"),
        ("SR2.fill.__func__", "attribute '__func__' is not allowed"),
        ("(lambda: 0).__globals__", "attribute '__globals__' is not allowed"),
        ("type(ten)", "'type' is not an allowed builtin"),
        ("dict.fromkeys(range(3))", "attribute 'fromkeys'"),
        ('f"{{ten}}"', "an f-string is not allowed"),
        ('"%s" % ten', "'%' formatting of a string is not allowed"),
        ("torch.exp(ten.data, out=ten.data)", "the argument 'out' is not allowed"),
        ("torch = 1\nresult = torch", "'torch' names a module and cannot be assigned"),
        ("a = [1]\na[0] = 2\nresult = a", "assigning to a subscript is not allowed"),
        ("lambda: 1", "the value is a function"),
    ],
)
def test_escape_is_refused(tmp_path, expr, fragment):
    message = refusal(tmp_path, expr.format(tmp=tmp_path))
    assert fragment in message
    assert not (tmp_path / "pwned").exists()


def test_shell_command_through_torch_os_leaves_nothing_behind(tmp_path):
    marker = tmp_path / "ran"
    message = refusal(tmp_path, f'torch.os.system("touch {marker}") + SR2.fill(1, 2, 3, 4, 5, 6)')
    assert "attribute 'os' of torch is not allowed" in message
    assert "allowed torch names: abs, " in message  # what may be used instead
    assert not marker.exists()


def test_pickle_payload_is_never_loaded(tmp_path):
    class Payload:
        def __reduce__(self):
            return (Path.touch, (tmp_path / "unpickled",))

    torch.save(Payload(), tmp_path / "payload.pt")
    refusal(tmp_path, f'torch.load("{tmp_path}/payload.pt", weights_only=False)')
    assert not (tmp_path / "unpickled").exists()


# ------------------------------------------------------------------ sizes and time
@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("sum(range(10**11))", "range(...) would have 100,000,000,000 items"),
        ("torch.zeros(10**12)", "torch.zeros(...) would make 1,000,000,000,000 elements"),
        ("Scalar.full(10**6, 10**6, fill_value=1.0)", "Scalar.full(...) would make"),
        ("torch.linspace(0, 1, 10**9)", "torch.linspace(...) would make 1,000,000,000"),
        ("torch.arange(10**12, step=1)", "torch.arange(...) would make"),
        ("np.zeros((10**5, 10**5))", "np.zeros(...) would make"),
        ("torch.tensor([[0] * 10**6] * 10**6)", "torch.tensor(...) would make"),
        ("torch.ones(10**4, 1) * torch.ones(1, 10**4)", "'*' of shape (10000, 1) and shape"),
        ("torch.ones(10**4, 1) @ torch.ones(1, 10**4)", "'@' of shape"),
        ("torch.ones(10**6).expand(10**3, 10**6)", "would make 1,000,000,000 elements"),
        ("2 ** 10**9", "'**' would be an integer of about 1,000,000,001 bits"),
        ("pow(2, 10**9)", "pow(...) would be an integer"),
        ("[0] * 10**9", "repeating a list would have 1,000,000,000 items"),
        ('"a" * 10**9', "repeating a str would have"),
        ("sum([[1]] * 10, [])", "sum() adds numbers and tensors, not a list"),
        ("len([x * 2 for x in range(10**6)])", "more than 200,000 evaluation steps"),
        ("len(sorted(range(10**5), key=lambda v: -v))", "more than 200,000 evaluation steps"),
        ("(lambda f: f(f))(lambda f: f(f))", "lambdas call each other more than 64 deep"),
        ("[torch.ones(10**7) for i in range(10)]", "more than 50,000,000 tensor elements"),
        ("[[0] * 10**6 for i in range(100)]", "10,000,000 list, tuple, dict or string items"),
        ("np.linspace(0, 1, num=10**9)", "np.linspace(...) would make 1,000,000,000"),
        ("np.eye(N=10**5)", "np.eye(...) would make 10,000,000,000 elements"),
        ("np.sqrt([[0.0] * 10**6] * 10**6)", "np.sqrt(...) would make"),
        ('np.full(10, "a" * 10**6)', "np.full(...) takes no strings"),
        ("np.zeros(5, dtype='U1000000000')", "np.zeros(...) takes no strings"),
        (
            "torch.matmul(input=torch.ones(10**3, 1), other=torch.ones(1, 10**5))",
            "torch.matmul(...) would make 100,000,000 elements",
        ),
    ],
)
def test_limits_are_refused_quickly(tmp_path, expr, fragment):
    start = time.perf_counter()
    message = refusal(tmp_path, expr)
    assert fragment in message
    assert time.perf_counter() - start < 5.0  # the cheap ones take milliseconds


@pytest.mark.parametrize("expr", ["sum(range(10**11))", "torch.zeros(10**12)"])
def test_the_reported_hangs_are_refused_in_well_under_a_second(tmp_path, expr):
    load_input(write(tmp_path, "SR2.fill(1, 2, 3)")).tensor("x")  # torch warmed up
    start = time.perf_counter()
    refusal(tmp_path, expr)
    assert time.perf_counter() - start < 0.5


def test_refusal_names_the_line_of_a_multiline_expression(tmp_path):
    message = refusal(tmp_path, "a = 2.0\nb = a * 3\nresult = torch.save(b, 'f')")
    assert "rejected expression (line 3 of the expression): attribute 'save' of torch" in message


def test_the_elements_of_one_file_are_counted_together(tmp_path):
    p = tmp_path / "t.i"
    blocks = "".join(
        f"  [b{i}]\n    type = Python\n    expr = 'torch.zeros(9_000_000)'\n  []\n"
        for i in range(7)
    )
    p.write_text(f"[Tensors]\n{blocks}[]\n")
    ctx = load_input(p)
    for i in range(5):
        ctx.tensor(f"b{i}")
    with pytest.raises(FatalError, match="more than 50,000,000 tensor elements in all"):
        ctx.tensor("b5")


# ------------------------------------------------------------------ what still works
CONFORMANCE_STYLE = [
    "SR2.fill(0.1, -0.05, -0.05, 0.0, 0.0, 0.0).dynamic_batch.expand(20)",
    "linspace(Scalar(1.0).dynamic_batch, Scalar(10.0).dynamic_batch, 20)",
    "Scalar(ten.data.unsqueeze(0) * torch.linspace(0.0, 1.0, 100, dtype=torch.float64)"
    ".unsqueeze(-1))",
    "MillerIndex(torch.tensor([1, 1, 0], dtype=torch.int64))",
    "Scalar([1.0, 4.0, 9.0, 16.0]).sub_batch.retag(1)",
    "Scalar.full(20, fill_value=0.01)",
    "R2.identity()",
    "Scalar(torch.full_like(torch.linspace(0, 1, 5), 0.5), sub_batch_ndim=1)",
    "Scalar(torch.linspace(0, 1, 6)[..., 1:] - torch.linspace(0, 1, 6)[..., :-1], "
    "sub_batch_ndim=1)",
    "Scalar(0.3 * torch.exp(-0.5 * ((torch.linspace(0, 1, 5) - 0.75) / 0.16) ** 2))",
    "MRP((lambda r: r / (torch.sqrt((r * r).sum(-1, keepdim=True) + 1.0) + 1.0))("
    "torch.stack([torch.linspace(0.0, 0.75, 20, dtype=torch.float64), "
    "torch.linspace(0.0, -0.25, 20, dtype=torch.float64), "
    "torch.linspace(-0.1, 0.1, 20, dtype=torch.float64)], dim=-1)))",
    "SSR4((lambda E, nu: (lambda lam, mu: 2.0 * mu * torch.eye(6, dtype=torch.float64) + "
    "torch.nn.functional.pad(torch.full((3, 3), lam, dtype=torch.float64), (0, 3, 0, 3)))"
    "(E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))))(1e5, 0.25))",
    "Scalar(torch.stack([torch.linspace(0, t.item(), 10, dtype=torch.float64) "
    "for t in ten.data.reshape(1)], dim=-1))",
    "WR2(torch.tensor([0.1, -0.05, -0.05], dtype=torch.float64).unsqueeze(0)"
    ".expand(20, 3).contiguous())",
    "F_start = torch.eye(3, dtype=torch.float64)\n"
    "F_end = torch.tensor([[1.05, 0.01, 0.05], [0.01, 0.91, -0.3], [-0.05, 0.02, 1.08]], "
    "dtype=torch.float64)\n"
    "F_full = F_start.reshape(1, 3, 3) + torch.linspace(0.0, 1.0, 10, dtype=torch.float64)"
    ".reshape(10, 1, 1) * (F_end - F_start).reshape(1, 3, 3)\n"
    "result = R2(F_full.contiguous())",
    "Vec.fill(1.0, 2.0, 3.0) if math.sqrt(4.0) == 2.0 else None",
    "Scalar(float(sum(a * b for a, b in zip([1, 2], [3, 4]))))",
    "Scalar(max([3.0, 1.0, 2.0], key=lambda v: -v) + len(sorted({'a': 1, 'b': 2}.keys())))",
    "Scalar(np.linspace(0.0, 1.0, 5).sum() + np.pi + torch.pi)",
]


@pytest.mark.parametrize("expr", CONFORMANCE_STYLE)
def test_conformance_style_expressions_match_python(tmp_path, expr):
    mine = tensor(tmp_path, expr)
    python = tensor(tmp_path, expr, allow_python_code=True)
    assert type(mine) is type(python)
    if isinstance(mine, TensorWrapper):
        assert mine.sub_batch_ndim == python.sub_batch_ndim
        mine, python = mine.data, python.data
    assert torch.equal(mine, python)


# ------------------------------------------------------------------ the opt-in
OPTED_IN = "Scalar(float(torch.get_default_dtype() == torch.float64))"


def test_default_refuses_what_needs_python(tmp_path):
    assert "attribute 'get_default_dtype' of torch" in refusal(tmp_path, OPTED_IN)


def test_keyword_opts_in(tmp_path):
    assert float(tensor(tmp_path, OPTED_IN, allow_python_code=True).data) == 1.0


def test_environment_opts_in_and_the_keyword_can_opt_out(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_PYTHON_CODE_ENV, "1")
    assert float(tensor(tmp_path, OPTED_IN).data) == 1.0
    with pytest.raises(FatalError, match="rejected expression"):
        tensor(tmp_path, OPTED_IN, allow_python_code=False)
    monkeypatch.setenv(ALLOW_PYTHON_CODE_ENV, "0")
    refusal(tmp_path, OPTED_IN)


def test_allow_python_code_sets_the_environment(tmp_path):
    allow_python_code()
    try:
        assert float(tensor(tmp_path, OPTED_IN).data) == 1.0
    finally:
        allow_python_code(False)
    refusal(tmp_path, OPTED_IN)


def test_opted_in_python_keeps_the_guard_against_accidents(tmp_path):
    with pytest.raises(FatalError) as info:
        tensor(tmp_path, '__import__("os").getcwd()', allow_python_code=True)
    message = str(info.value)
    assert "rejected expression: name '__import__' is not allowed" in message
    assert "--allow-python-code" not in message  # opted in already


# ------------------------------------------------------------------ the design
def test_no_text_is_evaluated_by_python():
    """The interpreter's modules never call eval, exec or compile."""
    for module in (expressions, check_module, vocabulary, limits_module):
        tree = ast.parse(Path(module.__file__).read_text())
        called = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert not called & {"eval", "exec", "compile", "__import__"}


def test_the_docstring_lists_the_vocabulary():
    from neml2.models.python_tensors import Python

    assert "- ``torch``: abs, " in Python.__doc__
    assert "- ``torch.nn.functional``: pad" in Python.__doc__
    assert "NEML2_ALLOW_PYTHON_CODE=1" in Python.__doc__


def test_the_vocabulary_is_listed_names_only():
    for name in ("torch.save", "torch.load", "torch.from_file", "torch.os", "torch.sys"):
        assert name not in vocabulary.QUALIFIED
    assert "torch.linspace" in vocabulary.QUALIFIED_FUNCTIONS
    assert "math.pi" in vocabulary.QUALIFIED_CONSTANTS
    for value, _ in vocabulary.QUALIFIED_FUNCTIONS.values():
        assert callable(value) and not isinstance(value, type(torch))
    assert not any(a.startswith("_") for a in vocabulary.ALL_ATTRIBUTES)
    assert (
        not {"format", "join", "numpy", "tolist", "apply_", "storage"} & vocabulary.ALL_ATTRIBUTES
    )


def test_functions_cannot_be_called_from_outside_the_interpreter():
    """Listed functions and lambdas have no __call__: no C code (map, sorted, numpy) can
    call them behind the interpreter's checks."""
    assert not callable(expressions.Function("f", abs, vocabulary.BROADCAST))
    assert not callable(expressions.Lambda(ast.parse("lambda: 0", mode="eval").body, [], []))
