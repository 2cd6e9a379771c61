"""``[Tensors]`` read from CSV columns: by ``variable`` prefix or by explicit ``column_names``."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_input
from neml2.tensors import SR2, FatalError, Scalar, Vec

CSV = "time,dn,ds1,ds2,s_xx,s_yy,s_zz,s_yz,s_xz,s_xy\n0,1,2,3,1,2,3,4,5,6\n1,4,5,6,7,8,9,10,11,12\n"


def _input(tmp_path, block: str):
    (tmp_path / "data.csv").write_text(CSV)
    p = tmp_path / "input.i"
    p.write_text(textwrap.dedent(block).lstrip())
    return load_input(p)


def test_column_names_and_variable(tmp_path):
    ctx = _input(
        tmp_path,
        """
        [Tensors]
          [t]
            type = CSVScalar
            csv_file = 'data.csv'
            column_names = 'time'
          []
          [jump]
            type = CSVVec
            csv_file = 'data.csv'
            column_names = 'dn ds1 ds2'
          []
          [shuffled]
            type = CSVVec
            csv_file = 'data.csv'
            column_names = 'ds2 dn ds1'
          []
          [s]
            type = CSVSR2
            csv_file = 'data.csv'
            variable = 's'
          []
        []
        """,
    )
    t, jump, shuffled, s = (ctx.tensor(n) for n in ("t", "jump", "shuffled", "s"))
    assert isinstance(t, Scalar) and isinstance(jump, Vec) and isinstance(s, SR2)
    torch.testing.assert_close(t.data, torch.tensor([0.0, 1.0], dtype=torch.float64))
    want = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    torch.testing.assert_close(jump.data, want)
    torch.testing.assert_close(shuffled.data, want[:, [2, 0, 1]])
    torch.testing.assert_close(s.data[1], torch.arange(7.0, 13.0, dtype=torch.float64))


@pytest.mark.parametrize(
    ("options", "pattern"),
    [
        ("variable = 'd'\n    column_names = 'dn ds1 ds2'", r"exactly one of the options"),
        ("", r"exactly one of the options"),
        (
            "column_names = 'dn ds1'",
            r":5:\d+: option 'column_names' of a Vec needs 3 column\(s\), got 2",
        ),
        ("column_names = 'dn ds1 nope'", r":5:\d+: data.csv has no column\(s\) nope"),
    ],
)
def test_bad_column_options(tmp_path, options, pattern):
    ctx = _input(
        tmp_path,
        f"""
[Tensors]
  [jump]
    type = CSVVec
    csv_file = 'data.csv'
    {options}
  []
[]
""",
    )
    with pytest.raises(FatalError, match=pattern):
        ctx.tensor("jump")
