"""The ``neml2-hit check`` and ``neml2-hit fmt`` command-line tools."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neml2.hit._cli import main

GOOD = "[Models]\n  [a]\n    E = 1 # modulus\n  []\n[]\n"
MESSY = "[Models]\n    [./a]   # hi\n  E=1\n\n\n\n  v = '1 2'\n[../]\n[]"
MESSY_FMT = "[Models]\n  [a]   # hi\n    E = 1\n\n    v = '1 2'\n  []\n[]\n"


def test_check_ok(tmp_path, capsys):
    f = tmp_path / "ok.i"
    f.write_text(GOOD)
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr().err == ""


def test_check_reports_every_failing_file(tmp_path, capsys):
    good, bad1, bad2 = tmp_path / "g.i", tmp_path / "b1.i", tmp_path / "b2.i"
    good.write_text(GOOD)
    bad1.write_text("[Models]\n  x = 1 2\n[]\n")
    bad2.write_text("[Models]\n")
    assert main(["check", str(good), str(bad1), str(bad2), str(tmp_path / "none.i")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{bad1}:2:9: error: unexpected text after the value of 'x' "
        "(quote values that contain spaces: name = 'a b')",
        f"{bad2}:1:1: error: section 'Models' is never closed (missing '[]' before end of file)",
        f"{tmp_path / 'none.i'}:1:1: error: file not found: '{tmp_path / 'none.i'}'",
    ]


def test_check_with_overrides(tmp_path, capsys):
    f = tmp_path / "ok.i"
    f.write_text(GOOD)
    assert main(["check", str(f), "-o", "Models/a/E=2"]) == 0
    assert main(["check", str(f), "-o", "Models/a/E"]) == 1
    assert "<command line>:1:1: error: malformed override" in capsys.readouterr().err


def test_fmt_stdout_check_and_in_place(tmp_path, capsys):
    f = tmp_path / "m.i"
    f.write_text(MESSY)
    assert main(["fmt", str(f)]) == 0
    assert capsys.readouterr().out == MESSY_FMT
    assert main(["fmt", "--check", str(f)]) == 1
    assert f"would reformat {f}" in capsys.readouterr().err
    assert main(["fmt", "-i", str(f)]) == 0
    assert f.read_text() == MESSY_FMT
    assert main(["fmt", "--check", str(f)]) == 0
    mtime = f.stat().st_mtime_ns
    assert main(["fmt", "--in-place", str(f)]) == 0
    assert f.stat().st_mtime_ns == mtime  # unchanged files are not rewritten


def test_fmt_error_and_stdin(tmp_path, capsys, monkeypatch):
    f = tmp_path / "bad.i"
    f.write_text("[a]\n  x = 'open\n[]\n")
    assert main(["fmt", str(f)]) == 1
    assert capsys.readouterr().err.startswith(f"{f}:2:7: error: unterminated string")
    monkeypatch.setattr(sys, "stdin", io.StringIO(MESSY))
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == MESSY_FMT
    assert main(["fmt", str(tmp_path / "missing.i")]) == 1


def test_usage_errors():
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["fmt", "--check", "-i", "x.i"])


def test_python_dash_m(tmp_path):
    f = tmp_path / "bad.i"
    f.write_text("[a]\n")
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "neml2.hit", "check", str(f)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"{f}:1:1: error: section 'a' is never closed (missing '[]' before end of file)"
    )


def test_import_pulls_in_no_torch_and_no_sibling_package():
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    code = (
        "import sys, neml2.hit; "
        "bad = [m for m in sys.modules if m == 'torch' or m.startswith('torch.') "
        "or (m.startswith('neml2.') and not m.startswith('neml2.hit'))]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fmt_does_not_evaluate_substitutions(tmp_path, capsys):
    f = tmp_path / "env.i"
    f.write_text("[a]\n    x = ${env NEML2_HIT_SURELY_UNSET_VARIABLE}\n[]\n")
    assert main(["fmt", str(f)]) == 0
    assert capsys.readouterr().out == "[a]\n  x = ${env NEML2_HIT_SURELY_UNSET_VARIABLE}\n[]\n"
    assert main(["check", str(f)]) == 1
