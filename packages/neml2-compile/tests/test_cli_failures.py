"""How ``neml2-compile`` fails: an ``-o`` / ``--cache-dir`` that cannot take files is a
bad command line (exit 2, one line naming the option and the path) found before torch
loads; any error is one line, and ``-v`` adds the traceback of the failure with its
chained causes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neml2.compiler import _cli, _compile, main


@pytest.fixture
def never_compiled(monkeypatch):
    """compile_file replaced by a function that fails the test."""

    def fail(*args, **kwargs):
        pytest.fail("compile_file was called")

    monkeypatch.setattr(_cli, "compile_file", fail)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "{f}"], "--output-dir '{f}' is a regular file, not a directory"),
        (["--output-dir", "{f}/out"], "--output-dir '{f}/out': '{f}' is not a directory"),
        (["--cache-dir", "{f}"], "--cache-dir '{f}' is a regular file, not a directory"),
        (["--cache-dir", "{f}/c", "-o", "{d}"], "--cache-dir '{f}/c': '{f}' is not a directory"),
    ],
)
def test_unusable_folders_are_a_bad_command_line(
    elasticity_input, tmp_path, never_compiled, capsys, args, message
):
    f, d = tmp_path / "afile", tmp_path / "fine"
    f.write_text("mine")
    argv = [str(elasticity_input), "elasticity", *(a.format(f=f, d=d) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"neml2-compile: error: {message.format(f=f)}"]
    assert f.read_text() == "mine" and not d.exists()


def test_the_cache_folder_from_the_environment(
    elasticity_input, tmp_path, never_compiled, capsys, monkeypatch
):
    (tmp_path / "afile").write_text("mine")
    monkeypatch.setenv("NEML2_COMPILE_CACHE", str(tmp_path / "afile"))
    assert main([str(elasticity_input), "elasticity", "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"neml2-compile: error: $NEML2_COMPILE_CACHE '{tmp_path / 'afile'}' is a regular "
        "file, not a directory\n"
    )


def test_an_output_folder_that_is_not_writable(
    elasticity_input, tmp_path, never_compiled, capsys, monkeypatch
):
    """(Tests run as root, for whom every folder is writable: os.access says no here.)"""
    monkeypatch.setattr(_cli.os, "access", lambda *a: False)
    out = tmp_path / "new"
    assert main([str(elasticity_input), "elasticity", "-o", str(out), "--no-cache"]) == 2
    assert capsys.readouterr().err == (
        f"neml2-compile: error: --output-dir '{out}': directory '{tmp_path}' is not "
        f"writable (to create '{out}' in it)\n"
    )


def test_the_folders_are_checked_before_torch_loads(elasticity_input, tmp_path):
    """As a program (supervised): the error comes before the compiler imports torch."""
    (tmp_path / "afile").write_text("mine")
    code = (
        "import sys; from neml2.compiler._cli import main; status = main(); "
        "print('torch' in sys.modules); sys.exit(status)"
    )
    args = [str(elasticity_input), "elasticity", "-o", str(tmp_path / "afile")]
    run = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == "False\n"
    assert run.stderr == (
        f"neml2-compile: error: --output-dir '{tmp_path / 'afile'}' is a regular file, "
        "not a directory\n"
    )


def test_importing_the_command_imports_no_torch():
    code = "import sys, neml2.compiler._cli; print('torch' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout == "False\n", run.stderr


# ---------------------------------------------------------------- -v / --verbose
def _failing_aoti(ep, path):
    try:
        raise ValueError("the root cause")
    except ValueError as e:
        raise RuntimeError("inductor gave up\nand said more") from e


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
def test_verbose_shows_the_chained_traceback(elasticity_input, tmp_path, monkeypatch, capsys, flag):
    monkeypatch.setattr(_compile, "_aoti", _failing_aoti)
    argv = [str(elasticity_input), "elasticity", "-o", str(tmp_path), "--no-cache", "-q"]
    line = (
        "neml2-compile: error: AOT Inductor failed on the forward graph of model "
        "'elasticity' (cpu/float64): RuntimeError: inductor gave up"
    )
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines() == [line]  # without -v: the line alone
    assert main([*argv, flag]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):"), err
    for cause in (
        "ValueError: the root cause",
        "RuntimeError: inductor gave up",
        "The above exception was the direct cause of the following exception:",
        'in _failing_aoti\n    raise ValueError("the root cause")',
    ):
        assert cause in err
    assert err.splitlines()[-1] == line
    assert list(tmp_path.iterdir()) == []
