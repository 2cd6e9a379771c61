"""Bad input, items 2, 5 and 6: overrides that cannot miss, bounded reads, sandboxed expressions.

* Command-line overrides must name an existing block (a new parameter may join
  a block that already holds parameters; the model schema then checks its
  name); ``+path=value`` creates missing blocks on purpose.
* Input files (and ``!include`` d files) must be regular files under a size
  bound; ``${...}`` may not expand a value beyond a bound; a UTF-8 byte-order
  mark is accepted; a forgotten ``[]`` is reported at the section it leaves open.
* ``[Tensors] type = Python`` expressions see an allow-list of builtins and no
  ``_``-prefixed attribute or ``__dunder__`` name.

Rows that pass on purpose (exit 0) show the harness can tell.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _table import Api, Cli, check_row, ids

from neml2 import hit
from neml2.drivers._cli import inspect_main, run_main
from neml2.hit._cli import main as hit_main
from neml2.models import load_input
from neml2.tensors import FatalError

NAN = "Models/elasticity/coefficients='nan 0.3'"
GOOD = "[Models]\n  [a]\n    type = X\n    E = 1\n  []\n[]\n"
TENSOR = "[Tensors]\n  [x]\n    type = Python\n    expr = '{expr}'\n  []\n[]\n"


def _tensor(expr: str) -> dict[str, str]:
    return {"t.i": TENSOR.format(expr=expr)}


def _tensor_x(tmp: Path):
    return load_input(tmp / "t.i").tensor("x")


def _fifo(name: str):
    def make(tmp: Path) -> None:
        os.mkfifo(tmp / name)

    return make


def _sparse(name: str, size: int):
    def make(tmp: Path) -> None:
        with open(tmp / name, "wb") as f:
            f.truncate(size)

    return make


# a0 is 16 bytes; each a_k doubles a_(k-1): a20 would be 16 MiB, past the 10 MiB default
BOMB = "a0 = 'xxxxxxxxxxxxxxxx'\n" + "".join(
    f"a{k} = '${{a{k - 1}}}${{a{k - 1}}}'\n" for k in range(1, 40)
)
UNIT_IMPORT = """!include {hello}/input.i
[Tensors]
  [strain]
    type = Python
    expr = '__import__("os").getcwd()'
  []
  [stress]
    type = Python
    expr = 'SR2.fill(200.0, 0.0, 0.0, 15.384615384615385, 0, 0)'
  []
[]
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strain'
    output_SR2_names = 'stress'
    output_SR2_values = 'stress'
  []
[]
"""
HELLO_BOM = "\ufeff!include {hello}/input.i\n"


def _hello_bom(tmp: Path) -> None:
    from _table import HELLO

    (tmp / "bom.i").write_bytes(HELLO_BOM.format(hello=HELLO).encode("utf-8"))


ROWS = [
    # ------------------------------------------------------- item 2: command-line overrides
    Cli(
        "run-override-unknown-block-Model",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", NAN.replace("Models/", "Model/")),
        1,
        r"<command line>:1:1: .*no block 'Model'.*did you mean "
        r"'Models/elasticity/coefficients'\?",
        regex=True,
    ),
    Cli(
        "run-override-misspelled-model-block",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "Models/elastcity/coefficients='1 0.3'"),
        1,
        "no block 'Models/elastcity' (did you mean 'Models/elasticity/coefficients'?)",
    ),
    Cli(
        "run-override-unknown-option-suggests",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "Models/elasticity/coeficients='1 0.3'"),
        1,
        "<command line>:1:1: unknown option 'coeficients' in [Models/elasticity] "
        "(did you mean 'coefficients'?)",
    ),
    Cli(
        "run-override-param-in-container-block",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "Models/coefficients='1 0.3'"),
        1,
        "[Models] holds no parameters (did you mean 'Models/elasticity/coefficients'?)",
    ),
    Cli(
        "run-override-top-level-param",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "verbose=false"),
        1,
        "no parameter 'verbose' at the top level (did you mean 'Drivers/unit/verbose'?)",
    ),
    Cli(
        "run-override-names-a-block",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "Models/elasticity=1"),
        1,
        "'Models/elasticity' is a block, not a parameter",
    ),
    Cli(
        "run-override-plus-still-checks-schema",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "+Models/elasticity/coeficients=1"),
        1,
        "<command line>:1:2: unknown option 'coeficients' in [Models/elasticity]",
    ),
    Cli(
        "run-override-malformed",
        run_main,
        ("--quiet", "{hello}/unit.i", "unit", "Models/elasticity/coefficients"),
        1,
        "<command line>:1:1: malformed override",
    ),
    Cli(
        "inspect-override-unknown-block",
        inspect_main,
        ("{hello}/input.i", "elasticity", "Model/elasticity/coefficients='1 0.3'"),
        1,
        "no block 'Model'",
    ),
    Cli(
        "hit-check-override-unknown-block",
        hit_main,
        ("check", "{hello}/input.i", "-o", "Modles/elasticity/coefficients=1"),
        1,
        "<command line>:1:1: error: override 'Modles/elasticity/coefficients': no block 'Modles'",
    ),
    Api(
        "api-parse-override-unknown-section",
        lambda tmp: hit.parse(GOOD, "m.i", overrides=["Models/b/E=2"]),
        hit.HitOverrideError,
        "no block 'Models/b' (did you mean 'Models/a/E'?)",
    ),
    # ------------------------------------------------------------ item 5: reader limits
    Cli(
        "hit-check-dev-zero",
        hit_main,
        ("check", "/dev/zero"),
        1,
        "'/dev/zero' is not a regular file (a character device)",
    ),
    Cli(
        "hit-fmt-dev-zero",
        hit_main,
        ("fmt", "/dev/zero"),
        1,
        "'/dev/zero' is not a regular file (a character device)",
    ),
    Cli(
        "hit-check-fifo",
        hit_main,
        ("check", "pipe.i"),
        1,
        "'pipe.i' is not a regular file (a FIFO)",
        prepare=_fifo("pipe.i"),
    ),
    Cli(
        "hit-check-directory",
        hit_main,
        ("check", "{tmp}"),
        1,
        "is not a regular file (a directory)",
    ),
    Cli(
        "run-dev-zero",
        run_main,
        ("/dev/zero", "unit"),
        1,
        "'/dev/zero' is not a regular file (a character device)",
    ),
    Cli(
        "run-fifo",
        run_main,
        ("pipe.i", "unit"),
        1,
        "'pipe.i' is not a regular file (a FIFO)",
        prepare=_fifo("pipe.i"),
    ),
    Cli(
        "include-dev-zero",
        hit_main,
        ("check", "a.i"),
        1,
        "a.i:2:3: error: '/dev/zero' is not a regular file (a character device)",
        files={"a.i": "[A]\n  !include /dev/zero\n[]\n"},
    ),
    Cli(
        "include-fifo",
        hit_main,
        ("check", "a.i"),
        1,
        "a.i:1:1: error: 'pipe.i' is not a regular file (a FIFO)",
        files={"a.i": "!include pipe.i\n"},
        prepare=_fifo("pipe.i"),
    ),
    Cli(
        "include-directory",
        hit_main,
        ("check", "a.i"),
        1,
        "a.i:1:1: error: 'sub' is not a regular file (a directory)",
        files={"a.i": "!include sub\n", "sub/x.i": "x = 1\n"},
    ),
    Cli(
        "hit-check-file-over-64MiB",
        hit_main,
        ("check", "big.i"),
        1,
        "'big.i' has 67109888 bytes, more than the limit of 67108864 "
        "(NEML2_HIT_MAX_FILE_BYTES or max_file_bytes=)",
        prepare=_sparse("big.i", 64 * 2**20 + 1024),
    ),
    Api(
        "api-parse-file-max-file-bytes",
        lambda tmp: hit.parse_file(tmp / "m.i", max_file_bytes=16),
        hit.HitIncludeError,
        "m.i' has 46 bytes, more than the limit of 16",
        files={"m.i": GOOD},
    ),
    Api(
        "api-include-over-max-file-bytes",
        lambda tmp: hit.parse_file(tmp / "a.i", max_file_bytes=40),
        hit.HitIncludeError,
        r"a\.i:2:1: '\S*m\.i' has 46 bytes, more than the limit of 40",
        files={"a.i": "x = 1\n!include m.i\n", "m.i": GOOD},
        regex=True,
    ),
    Cli(
        "hit-check-brace-expansion-bomb",
        hit_main,
        ("check", "bomb.i"),
        1,
        r"bomb\.i:21:\d+: error: the value of 'a20' expands beyond 10485760 bytes",
        regex=True,
        files={"bomb.i": BOMB},
    ),
    Api(
        "api-parse-max-value-bytes",
        lambda tmp: hit.parse("a = 'xxxxxxxx'\nb = '${a} ${a}'\n", "m.i", max_value_bytes=16),
        hit.HitSubstitutionError,
        "m.i:2:5: the value of 'b' expands beyond 16 bytes",
    ),
    Cli(
        "hit-check-bom-accepted",
        hit_main,
        ("check", "bom.i"),
        0,
        "",
        files={"bom.i": "\ufeff[A]\n  x = 1\n[]\n".encode()},
    ),
    Cli(
        "inspect-bom-input-accepted",
        inspect_main,
        ("bom.i", "elasticity"),
        0,
        "elasticity: LinearIsotropicElasticity",
        prepare=_hello_bom,
    ),
    Cli(
        "hit-check-unclosed-names-the-block",
        hit_main,
        ("check", "m.i"),
        1,
        "m.i:5:3: error: section 'b' is never closed",
        files={"m.i": "[Models]\n  [a]\n    x = 1\n  []\n  [b]\n    y = 2\n[]\n"},
    ),
    Cli(
        "hit-check-unclosed-in-include",
        hit_main,
        ("check", "a.i"),
        1,
        "inc.i:1:1: error: section 'B' is never closed",
        files={"a.i": "[A]\n  !include inc.i\n[]\n", "inc.i": "[B]\n  y = 2\n"},
    ),
    Cli(
        "hit-check-not-utf8",
        hit_main,
        ("check", "latin.i"),
        1,
        "'latin.i' is not UTF-8 text",
        files={"latin.i": b"x = '\xe9'\n"},
    ),
    # ------------------------------------------------------- item 6: Python expressions
    Api(
        "tensor-import",
        _tensor_x,
        FatalError,
        "t.i:4:5: [Tensors/x] rejected expression: name '__import__' is not allowed",
        files=_tensor('__import__("os").getcwd()'),
    ),
    Api(
        "tensor-open",
        _tensor_x,
        FatalError,
        "t.i:4:5: [Tensors/x] rejected expression: 'open' is not an allowed builtin",
        files=_tensor('open("t.i").read()'),
    ),
    Api(
        "tensor-eval",
        _tensor_x,
        FatalError,
        "'eval' is not an allowed builtin",
        files=_tensor('eval("1 + 1")'),
    ),
    Api(
        "tensor-exec",
        _tensor_x,
        FatalError,
        "'exec' is not an allowed builtin",
        files=_tensor('exec("y = 1")'),
    ),
    Api(
        "tensor-getattr",
        _tensor_x,
        FatalError,
        "'getattr' is not an allowed builtin",
        files=_tensor('getattr(torch, "zeros")(3)'),
    ),
    Api(
        "tensor-globals",
        _tensor_x,
        FatalError,
        "'globals' is not an allowed builtin",
        files=_tensor("globals()"),
    ),
    Api(
        "tensor-dunder-attribute",
        _tensor_x,
        FatalError,
        "attribute '__class__' is not allowed",
        files=_tensor("Scalar(1.0).__class__.__mro__"),
    ),
    Api(
        "tensor-private-attribute",
        _tensor_x,
        FatalError,
        "attribute '_C' is not allowed",
        files=_tensor("torch._C"),
    ),
    Api(
        "tensor-builtins-name",
        _tensor_x,
        FatalError,
        "name '__builtins__' is not allowed",
        files=_tensor("__builtins__"),
    ),
    Api(
        "tensor-dunder-in-lambda-multiline",
        _tensor_x,
        FatalError,
        "(line 3 of the expression): attribute '__globals__' is not allowed",
        files={
            "t.i": "[Tensors]\n  [x]\n    type = Python\n    expr = '''\n"
            "      (lambda f:\n        f)(\n        abs.__globals__)\n    '''\n  []\n[]\n"
        },
    ),
    Api(
        "tensor-runtime-error-names-the-line",
        _tensor_x,
        FatalError,
        "t.i:4:5: [Tensors/x] failed: RuntimeError",
        files=_tensor("torch.zeros(2) + torch.zeros(3)"),
    ),
    Api(
        "tensor-statements-without-result",
        _tensor_x,
        FatalError,
        "t.i:4:5: [Tensors/x]: a block of statements must assign its value to 'result'",
        files=_tensor("y = 1"),
    ),
    Api(
        "tensor-import-statement",
        _tensor_x,
        FatalError,
        "'Import' statement is not allowed",
        files=_tensor("import os"),
    ),
    Cli(
        "run-unit-strain-imports",
        run_main,
        ("--quiet", "u.i", "unit"),
        1,
        "u.i:5:5: [Tensors/strain] rejected expression: name '__import__' is not allowed",
        prepare=lambda tmp: (tmp / "u.i").write_text(
            UNIT_IMPORT.format(hello=Path(__file__).resolve().parents[2] / "examples" / "hello")
        ),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)
