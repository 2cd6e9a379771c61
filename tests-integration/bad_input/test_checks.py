"""Bad input, item 1: the check drivers cannot pass by accident.

``ModelUnitTest``, ``TransientRegression`` and ``Verification`` must fail on any
non-finite value on one side, on an empty or key-less gold, on a gold key our
result lacks and on shapes that do not broadcast, and print the true worst error
(``nan`` as nan). The last rows pass on purpose: the harness can tell.
"""

from __future__ import annotations

import math
import os

import pytest
import torch
from _table import Cli, check_row, ids

from neml2.drivers._cli import run_main
from neml2.models import load_input

UNIT = """
!include {hello}/input.i
[Tensors]
  [strain]
    type = Python
    expr = '{strain}'
  []
  [stress]
    type = Python
    expr = '{expected}'
  []
[]
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'elasticity'
    input_SR2_names = 'strain'
    input_SR2_values = 'strain'
    {outputs}
    {extra}
  []
[]
"""
GOOD_STRESS = "SR2.fill(200.0, 0.0, 0.0, 15.384615384615385, 0, 0)"
OUTPUTS = "output_SR2_names = 'stress'\n    output_SR2_values = 'stress'"


GOOD_STRAIN = "SR2.fill(1e-3, -3e-4, -3e-4, 1e-4, 0, 0)"


def unit(
    expected: str = GOOD_STRESS, outputs: str = OUTPUTS, extra: str = "", strain=GOOD_STRAIN
) -> str:
    from _table import HELLO

    return UNIT.format(hello=HELLO, expected=expected, outputs=outputs, extra=extra, strain=strain)


TRANSIENT = """
!include {hello}/input.i
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
  [ref]
    type = CSVSR2
    csv_file = 'ref.csv'
    variable = 'stress'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
  [regression]
    type = TransientRegression
    driver = 'driver'
    reference = 'gold.pt'
  []
  [verification]
    type = Verification
    driver = 'driver'
    SR2_names = 'output.stress'
    SR2_values = 'ref'
  []
[]
"""
#: Uniaxial strain 1e-3 * t on E = 200e3, nu = 0.3: sigma_xx = 269.23 t, sigma_yy = zz = 115.38 t
C11, C12 = 200e3 * 0.7 / (1.3 * 0.4) * 1e-3, 200e3 * 0.3 / (1.3 * 0.4) * 1e-3


def _csv(rows: list[list[str]]) -> str:
    head = "time," + ",".join(f"stress_{s}" for s in ("xx", "yy", "zz", "yz", "xz", "xy"))
    return head + "\n" + "\n".join(",".join(r) for r in rows) + "\n"


def _good_rows() -> list[list[str]]:
    out = []
    for k in range(4):
        t = k / 3
        out.append([f"{t!r}", f"{C11 * t!r}", f"{C12 * t!r}", f"{C12 * t!r}", "0", "0", "0"])
    return out


def _ref(edit=None) -> str:
    rows = _good_rows()
    if edit is not None:
        edit(rows)
    return _csv(rows)


def _files(gold_edit=None, csv_edit=None):
    from _table import HELLO

    files = {"t.i": TRANSIENT.format(hello=HELLO), "ref.csv": _ref(csv_edit)}

    def prepare(tmp):
        ctx = load_input(tmp / "t.i")
        driver = ctx.object("Drivers", "driver")
        driver.run()
        gold = {k: v.clone() for k, v in driver.result.items()}
        if gold_edit is not None:
            gold = gold_edit(gold)
        torch.save(gold, tmp / "gold.pt")

    return files, prepare


def _set(key, fn):
    def edit(gold):
        gold[key] = fn(gold[key])
        return gold

    return edit


def _row(rid, driver, exit_code, fragment, gold_edit=None, csv_edit=None, regex=False):
    files, prepare = _files(gold_edit, csv_edit)
    return Cli(
        rid,
        run_main,
        ("t.i", driver, "--quiet"),
        exit_code,
        fragment,
        files=files,
        prepare=prepare,
        regex=regex,
    )


def _steps_row(rid, exit_code, fragment, steps, csv_edit=None):
    """A Verification run restricted to ``time_steps = steps``."""
    files, prepare = _files(csv_edit=csv_edit)
    override = f"Drivers/verification/time_steps='{steps}'"
    argv = ("t.i", "verification", override, "--quiet")
    return Cli(rid, run_main, argv, exit_code, fragment, files=files, prepare=prepare)


def _drop_first(rows):
    del rows[0]


def _replaced_row(rid, driver, fragment, name, make, regex=False):
    """A check whose file *name* (``gold.pt``, ``ref.csv``) is replaced by ``make(path)``
    (a directory, a FIFO, an empty or a binary file) once the good one is written."""
    files, write_gold = _files()

    def prepare(tmp):
        write_gold(tmp)
        (tmp / name).unlink()
        make(tmp / name)

    argv = ("t.i", driver, "--quiet")
    return Cli(rid, run_main, argv, 1, fragment, files=files, prepare=prepare, regex=regex)


def _nan_row(rows):
    rows[2][1] = "nan"


def _inf_row(rows):
    rows[3][2] = "inf"


ROWS = [
    # ---------------------------------------------------------------- ModelUnitTest
    Cli(
        "unit-nan-coefficient-override",
        run_main,
        ("{hello}/unit.i", "unit", "Models/elasticity/coefficients='nan 0.3'"),
        1,
        r"(value of 'stress': max \|error\| nan|nan)",
        regex=True,
    ),
    Cli(
        "unit-expected-nan",
        run_main,
        ("u.i", "unit"),
        1,
        "value of 'stress': max |error| nan",
        files={"u.i": unit("SR2.fill(200.0, math.nan, 0.0, 15.384615384615385, 0, 0)")},
    ),
    Cli(
        "unit-expected-inf",
        run_main,
        ("u.i", "unit"),
        1,
        "non-finite on one side only (expected)",
        files={"u.i": unit("SR2.fill(math.inf, 0.0, 0.0, 15.384615384615385, 0, 0)")},
    ),
    Cli(
        "unit-expected-wrong-value",
        run_main,
        ("u.i", "unit"),
        1,
        "1 of 6 entries beyond atol",
        files={"u.i": unit("SR2.fill(201.0, 0.0, 0.0, 15.384615384615385, 0, 0)")},
    ),
    Cli(
        "unit-expected-empty",
        run_main,
        ("u.i", "unit"),
        1,
        "the expected value is empty",
        files={"u.i": unit("SR2(torch.zeros(0, 6, dtype=torch.float64))")},
    ),
    Cli(
        "unit-expected-shape-does-not-broadcast",
        run_main,
        ("u.i", "unit"),
        1,
        "shapes do not broadcast",
        files={
            "u.i": unit(
                "SR2(torch.zeros(3, 6, dtype=torch.float64))",
                strain="SR2(torch.zeros(2, 6, dtype=torch.float64))",
            )
        },
    ),
    Cli(
        "unit-no-expected-outputs",
        run_main,
        ("u.i", "unit"),
        1,
        "no expected outputs given",
        files={"u.i": unit(outputs="")},
    ),
    Cli(
        # E is an input here (a NaN literal coefficient is refused at load)
        "unit-derivatives-nan-on-both-sides",
        run_main,
        ("u.i", "unit", "Models/elasticity/coefficients='E 0.3'"),
        1,
        "dstress/dstrain: max |error| nan",
        files={
            "u.i": unit(
                extra="check_values = false\n    input_Scalar_names = 'E'\n"
                "    input_Scalar_values = 'nan'"
            )
        },
    ),
    Cli(
        "unit-unknown-output-name",
        run_main,
        ("u.i", "unit"),
        1,
        "output(s) strss are not outputs of model 'elasticity'",
        files={"u.i": unit(outputs=OUTPUTS.replace("names = 'stress'", "names = 'strss'"))},
    ),
    Cli(
        "unit-passes-when-right",
        run_main,
        ("u.i", "unit"),
        0,
        "all passed",
        files={"u.i": unit()},
    ),
    # ---------------------------------------------------------------- TransientRegression
    _row(
        "regression-gold-all-nan",
        "regression",
        1,
        "max |error| nan",
        gold_edit=lambda g: {k: torch.full_like(v, math.nan) for k, v in g.items()},
    ),
    _row(
        "regression-gold-one-nan",
        "regression",
        1,
        "non-finite on one side only (expected)",
        gold_edit=_set("output.2.stress", lambda v: v.index_fill(-1, torch.tensor([0]), math.nan)),
    ),
    _row(
        "regression-gold-inf",
        "regression",
        1,
        "non-finite on one side only (expected)",
        gold_edit=_set("output.3.stress", lambda v: v + math.inf),
    ),
    _row(
        "regression-gold-empty",
        "regression",
        1,
        "has no output.<step>.<variable> entries",
        gold_edit=lambda g: {},
    ),
    _row(
        "regression-gold-inputs-only",
        "regression",
        1,
        "has no output.<step>.<variable> entries",
        gold_edit=lambda g: {k: v for k, v in g.items() if k.startswith("input.")},
    ),
    _row(
        "regression-gold-key-we-lack",
        "regression",
        1,
        "our results lack 1 value(s), at step(s) 2: output.2.plastic_strain",
        gold_edit=lambda g: {**g, "output.2.plastic_strain": torch.zeros(6)},
    ),
    _row(
        # the gold ends a step early: the last step would go unchecked
        "regression-gold-lacks-a-step",
        "regression",
        1,
        "the gold file lacks 1 value(s), at step(s) 3: output.3.stress of our results",
        gold_edit=lambda g: {k: v for k, v in g.items() if not k.startswith("output.3.")},
    ),
    _row(
        "regression-gold-has-more-steps",
        "regression",
        1,
        "our results lack 2 value(s), at step(s) 4, 10: output.4.stress, output.10.stress",
        gold_edit=lambda g: {
            **g,
            "output.10.stress": g["output.3.stress"],
            "output.4.stress": g["output.3.stress"],
        },
    ),
    _replaced_row(
        "regression-gold-is-a-directory",
        "regression",
        r"t\.i:\d+:\d+: reference file \S*gold\.pt is a directory, not a regular file",
        "gold.pt",
        lambda p: p.mkdir(),
        regex=True,
    ),
    _replaced_row(
        "regression-gold-is-a-fifo",
        "regression",
        "gold.pt is a FIFO, not a regular file",
        "gold.pt",
        os.mkfifo,
    ),
    Cli(
        "regression-gold-path-through-a-file",
        run_main,
        ("t.i", "regression", "Drivers/regression/reference='t.i/gold.pt'", "--quiet"),
        1,
        r"reference file \S*t\.i/gold\.pt: '\S*t\.i' is not a directory",
        files=_files()[0],
        regex=True,
    ),
    _replaced_row(
        "regression-gold-is-an-empty-file",
        "regression",
        "gold.pt is empty",
        "gold.pt",
        lambda p: p.write_bytes(b""),
    ),
    _replaced_row(
        "regression-gold-is-not-a-torch-file",
        "regression",
        "gold.pt: not a file of tensors written by torch.save",
        "gold.pt",
        lambda p: p.write_bytes(b"\xff\xfe binary \x80"),
    ),
    _row(
        "regression-gold-shape-does-not-broadcast",
        "regression",
        1,
        "shapes do not broadcast",
        gold_edit=_set("output.1.stress", lambda v: torch.zeros(5, 3, dtype=v.dtype)),
    ),
    _row(
        "regression-gold-empty-tensor",
        "regression",
        1,
        "the expected value is empty",
        gold_edit=_set("output.1.stress", lambda v: torch.zeros(0, 6, dtype=v.dtype)),
    ),
    _row(
        "regression-gold-not-a-dict",
        "regression",
        1,
        "holds a Tensor, not a dict of tensors",
        gold_edit=lambda g: g["output.1.stress"],
    ),
    _row(
        "regression-gold-entry-not-a-tensor",
        "regression",
        1,
        "output.1.stress: the gold entry is a float",
        gold_edit=_set("output.1.stress", lambda v: 1.0),
    ),
    _row(
        "regression-gold-off-by-1e-3",
        "regression",
        1,
        r"output\.3\.stress: max \|error\| \d\.\d{3}e-0\d: \d+ of 6 entries beyond",
        gold_edit=_set("output.3.stress", lambda v: v * (1 + 1e-3)),
        regex=True,
    ),
    _row("regression-passes-when-right", "regression", 0, "passed"),
    # ---------------------------------------------------------------- Verification
    _row(
        "verification-reference-nan",
        "verification",
        1,
        "output.2.stress: max |error| nan",
        csv_edit=_nan_row,
    ),
    _row(
        "verification-reference-inf",
        "verification",
        1,
        "non-finite on one side only (expected)",
        csv_edit=_inf_row,
    ),
    _row(
        "verification-reference-one-row",
        "verification",
        1,
        "has no step after the initial state",
        csv_edit=lambda rows: rows.__delitem__(slice(1, None)),
    ),
    _row(
        "verification-reference-longer-than-run",
        "verification",
        1,
        "output.4.stress: missing from our results",
        csv_edit=lambda rows: rows.append(list(rows[-1])),
    ),
    _row(
        # the CSV stops a step early: the last step would go unchecked
        "verification-reference-shorter-than-run",
        "verification",
        1,
        "the reference for output.stress ends at step 2, the run at 3: 1 value(s), at "
        "step(s) 3: output.3.stress not compared",
        csv_edit=lambda rows: rows.pop(),
    ),
    _replaced_row(
        "verification-reference-csv-is-a-directory",
        "verification",
        r"t\.i:\d+:\d+: CSV file \S*ref\.csv is a directory, not a regular file",
        "ref.csv",
        lambda p: p.mkdir(),
        regex=True,
    ),
    _replaced_row(
        "verification-reference-csv-is-a-fifo",
        "verification",
        "ref.csv is a FIFO, not a regular file",
        "ref.csv",
        os.mkfifo,
    ),
    _replaced_row(
        "verification-reference-csv-is-binary",
        "verification",
        "ref.csv is not UTF-8 text",
        "ref.csv",
        lambda p: p.write_bytes(b"\xff\xfe binary \x80"),
    ),
    _row(
        "verification-reference-off",
        "verification",
        1,
        "entries beyond atol",
        csv_edit=lambda rows: rows[1].__setitem__(1, "1.0"),
    ),
    _row("verification-passes-when-right", "verification", 0, "worst max |error|"),
    _steps_row("verification-step-beyond-run", 1, "step(s) [4] outside the run's steps", "1 4"),
    _steps_row("verification-step-negative", 1, "step(s) [-1] outside the run's steps", "-1"),
    _steps_row("verification-steps-vs-reference", 1, "needs one entry per listed step", "1 2"),
    _steps_row("verification-step-zero", 1, "step(s) [0] outside the run's steps 1 .. 3", "0 2"),
    _steps_row("verification-listed-steps-wrong", 1, "at step 2", "2 1 3", _drop_first),
    _steps_row("verification-listed-steps-pass", 0, "over 3 of 3 steps", "1 2 3", _drop_first),
]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_row(row, tmp_path):
    check_row(row, tmp_path)
