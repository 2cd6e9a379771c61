"""``save_as`` on a disk that fills up, and neml2-run's usage line.

A full disk while the result is written is one line naming the ``save_as`` option,
the output file and the OS reason ("No space left on device"), never torch's
``RuntimeError: basic_ios::clear`` traceback; the old file stays and no temporary
file is left.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import torch

from neml2.drivers import _output
from neml2.drivers._cli import EXIT_FATAL, run_main
from neml2.drivers._output import save_torch

INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4))'
  []
  [strains]
    type = Python
    expr = 'SR2(torch.linspace(0, 1, 4).reshape(4, 1) * torch.tensor([1e-3, 0, 0, 0, 0, 0]))'
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'elasticity'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
    save_as = 'result.pt'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


class _FullDisk:
    """A file opened for writing on a full disk: ``write`` fails with ENOSPC."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _run(tmp_path: Path, capsys) -> tuple[int, str]:
    (tmp_path / "t.i").write_text(INPUT)
    (tmp_path / "result.pt").write_bytes(b"the old result")
    code = run_main([str(tmp_path / "t.i"), "driver", "--quiet"])
    return code, capsys.readouterr().err


def _assert_nothing_lost(tmp_path: Path) -> None:
    assert (tmp_path / "result.pt").read_bytes() == b"the old result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.pt", "t.i"]


def test_a_full_disk_is_one_line_with_the_os_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_output, "open", lambda path, mode: _FullDisk(path), raising=False)
    code, err = _run(tmp_path, capsys)
    assert code == EXIT_FATAL
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"save_as: cannot write '{tmp_path / 'result.pt'}': No space left on device" in err
    assert err.startswith(f"neml2-run: error: {tmp_path / 't.i'}:")
    _assert_nothing_lost(tmp_path)


def test_a_failing_torch_writer_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    """torch's C++ writer hides the OS error; its message still becomes one line."""

    def basic_ios(obj, f, *args, **kwargs):
        raise RuntimeError("basic_ios::clear: iostream error\nmore C++ detail")

    monkeypatch.setattr(torch, "save", basic_ios)
    code, err = _run(tmp_path, capsys)
    assert code == EXIT_FATAL
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"cannot write '{tmp_path / 'result.pt'}': basic_ios::clear: iostream error" in err
    _assert_nothing_lost(tmp_path)


def test_save_torch_round_trips(tmp_path):
    data = {"output.1.stress": torch.arange(6.0)}
    save_torch(data, str(tmp_path / "x.pt"))
    back = torch.load(tmp_path / "x.pt", weights_only=True)
    assert torch.equal(back["output.1.stress"], data["output.1.stress"])


def test_save_torch_on_dev_full_raises_the_os_error(monkeypatch):
    """The real thing, without a full disk: /dev/full fails every write with ENOSPC."""
    if not os.path.exists("/dev/full"):  # not Linux: the same failure, simulated
        monkeypatch.setattr(_output, "open", lambda path, mode: _FullDisk(path), raising=False)
    with pytest.raises(OSError) as e:
        save_torch({"x": torch.zeros(1000)}, "/dev/full")
    assert e.value.errno == errno.ENOSPC


def test_usage_lists_only_the_required_arguments(capsys):
    with pytest.raises(SystemExit) as e:
        run_main([])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage: neml2-run " in err and "input driver [overrides ...]" in err
    assert err.splitlines()[-1] == (
        "neml2-run: error: the following arguments are required: input, driver"
    )
