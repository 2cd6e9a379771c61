"""Output files (save_as, --plot): checked before the run, written atomically, kept
from signals; the CLI conventions (--version, usage, INPUT that is not a file)."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest
import torch

from neml2.drivers import _output
from neml2.drivers._cli import EXIT_FATAL, inspect_main, run_main, syntax_main
from neml2.drivers._output import atomic_write, check_target
from neml2.drivers.transient import TransientDriver
from neml2.models import load_input
from neml2.tensors import FatalError
from neml2.tensors.interrupt import Interrupted

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False

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
    save_as = '{save_as}'
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


def write_input(folder: Path, save_as: str = "result.pt", name: str = "t.i") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(textwrap.dedent(INPUT.format(save_as=save_as)))
    return p


def leftovers(folder: Path) -> list[str]:
    """Temporary files of atomic_write left in *folder*."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


# ---------------------------------------------------------------- check_target


def test_target_in_a_missing_directory_is_fine(tmp_path):
    assert check_target("a/b/out.pt", "opt", tmp_path) == tmp_path / "a" / "b" / "out.pt"
    assert not (tmp_path / "a").exists()  # checking creates nothing


def test_relative_target_resolves_against_base(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert check_target("x.pt", "opt") == tmp_path / "x.pt"
    assert check_target("x.pt", "opt", tmp_path / "sub") == tmp_path / "sub" / "x.pt"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: os.mkfifo(p), "is a FIFO"),
        (lambda p: os.symlink("/dev/null", p), "(a symlink to '/dev/null') is a character device"),
    ],
    ids=["directory", "fifo", "symlink-to-device"],
)
def test_target_that_is_not_a_regular_file(tmp_path, make, fragment):
    make(tmp_path / "out.pt")
    with pytest.raises(FatalError, match=r"^opt: '.*out\.pt'") as e:
        check_target("out.pt", "opt", tmp_path)
    assert fragment in str(e.value)


def test_target_symlink_to_a_file_replaces_the_file_and_keeps_the_link(tmp_path):
    (tmp_path / "real.pt").write_text("old")
    os.symlink("real.pt", tmp_path / "link.pt")
    target = check_target("link.pt", "opt", tmp_path)
    assert target == tmp_path / "real.pt"
    atomic_write(target, lambda tmp: Path(tmp).write_text("new"), "opt")
    assert os.path.islink(tmp_path / "link.pt")
    assert (tmp_path / "link.pt").read_text() == "new"


def test_target_errors_name_the_option(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(FatalError, match=r"^opt: 'd/' ends with '/'"):
        check_target("d/", "opt", tmp_path)
    with pytest.raises(FatalError, match=r"^opt: the path is empty"):
        check_target("  ", "opt", tmp_path)
    with pytest.raises(FatalError, match=r"^opt: cannot write 'x' in '.*file': '.*file' is not a"):
        check_target("file/x", "opt", tmp_path)
    with pytest.raises(FatalError, match="is the input; writing there would overwrite it"):
        check_target("file", "opt", tmp_path, protect=[(tmp_path / "file", "the input")])


def test_target_in_a_read_only_directory(tmp_path):
    if ROOT:  # root writes into a read-only directory: a device parent stops it
        with pytest.raises(FatalError, match="'/dev/null' is not a directory"):
            check_target("/dev/null/new/x.pt", "opt", tmp_path)
        return
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(FatalError, match=r"directory '.*ro' is not writable"):
            check_target("ro/new/x.pt", "opt", tmp_path)
    finally:
        ro.chmod(0o700)


# ---------------------------------------------------------------- atomic_write


def test_atomic_write_gets_the_umask(tmp_path, umask_027):
    atomic_write(tmp_path / "sub" / "x.bin", lambda tmp: Path(tmp).write_bytes(b"1"), "opt")
    assert (tmp_path / "sub" / "x.bin").stat().st_mode & 0o777 == 0o640
    assert _output.umask() == 0o027
    assert leftovers(tmp_path / "sub") == []


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt(), Interrupted(15)])
def test_failed_write_keeps_the_old_file_and_no_temporary(tmp_path, error):
    (tmp_path / "x.bin").write_text("old")

    def write(tmp):
        Path(tmp).write_text("half")
        raise error

    with pytest.raises(type(error)):
        atomic_write(tmp_path / "x.bin", write, "opt")
    assert (tmp_path / "x.bin").read_text() == "old"
    assert leftovers(tmp_path) == []


def test_os_error_while_writing_is_fatal_and_names_the_option(tmp_path):
    def write(tmp):
        raise OSError(28, "No space left on device")

    with pytest.raises(FatalError, match=r"^opt: cannot write '.*x\.bin': No space left"):
        atomic_write(tmp_path / "x.bin", write, "opt")
    assert leftovers(tmp_path) == []


# ---------------------------------------------------------------- signals


def test_sigterm_while_saving_leaves_no_temporary(tmp_path, monkeypatch, capsys):
    inp = write_input(tmp_path)
    real_save = torch.save

    def slow_save(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)):  # (else a buffer: the temporary file exists)
            Path(f).write_bytes(b"partial")
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
        return real_save(obj, f, *args, **kwargs)  # pragma: no cover - interrupted first

    monkeypatch.setattr(torch, "save", slow_save)
    assert run_main([str(inp), "driver", "--quiet"]) == 143
    err = capsys.readouterr().err
    assert err.splitlines() == ["neml2-run: interrupted (SIGTERM); no result written"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.i"]


def test_signal_during_the_rename_still_writes_the_file_and_says_so(tmp_path, monkeypatch, capsys):
    inp = write_input(tmp_path)
    real_replace = os.replace

    def replace(src, dst):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
        real_replace(src, dst)

    monkeypatch.setattr(_output.os, "replace", replace)
    assert run_main([str(inp), "driver", "--quiet"]) == 130
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"neml2-run: interrupted (SIGINT); wrote only {tmp_path / 'result.pt'}"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.pt", "t.i"]


# ---------------------------------------------------------------- save_as


def test_save_as_resolves_against_the_input_directory(tmp_path, monkeypatch, umask_027):
    inp = write_input(tmp_path / "case", "out/r.pt")
    monkeypatch.chdir(tmp_path)
    assert run_main([str(inp), "driver", "--quiet"]) == 0
    saved = tmp_path / "case" / "out" / "r.pt"
    assert saved.stat().st_mode & 0o777 == 0o640
    assert "output.3.stress" in torch.load(saved, weights_only=True)
    assert not (tmp_path / "out").exists()
    assert leftovers(saved.parent) == []


def test_bad_save_as_fails_before_the_first_step(tmp_path, monkeypatch):
    inp = write_input(tmp_path, "out")
    (tmp_path / "out").mkdir()

    def never(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("stepping started before save_as was checked")

    monkeypatch.setattr(TransientDriver, "_inputs", never)
    driver = load_input(inp).object("Drivers", "driver")
    with pytest.raises(FatalError, match=r"t\.i:\d+:\d+: save_as: '.*out' is a directory"):
        driver.run()
    assert driver.saved_to is None


# ---------------------------------------------------------------- --plot


def test_plot_component_and_format(tmp_path, monkeypatch, capsys, umask_027):
    pytest.importorskip("matplotlib")
    inp = write_input(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = [str(inp), "driver", "--quiet", "--plot", "p.svg", "--plot-outputs", "stress[1]"]
    assert run_main(argv) == 0
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "p.svg").stat().st_mode & 0o777 == 0o640
    assert "plot written to p.svg" in capsys.readouterr().out
    assert leftovers(tmp_path) == []


def test_plot_outputs_checked_before_the_run(tmp_path, monkeypatch, capsys):
    inp = write_input(tmp_path)
    monkeypatch.setattr(TransientDriver, "run", lambda self: pytest.fail("the run started"))
    argv = [str(inp), "driver", "--plot", str(tmp_path / "p.png"), "--plot-outputs", "sress"]
    assert run_main(argv) == EXIT_FATAL
    assert "(did you mean 'stress'?)" in capsys.readouterr().err


# ---------------------------------------------------------------- CLI conventions


@pytest.mark.parametrize("main", [run_main, inspect_main, syntax_main])
def test_version_lists_every_package_and_torch(main, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for dist in (*_output_packages(), "torch"):
        assert f"  {dist} " in out, out


def _output_packages():
    from neml2.hit._cli_support import PACKAGES

    assert len(PACKAGES) == 6
    return PACKAGES


def test_version_says_not_installed(monkeypatch):
    from importlib import metadata

    from neml2.hit import _cli_support

    real = metadata.version

    def version(dist):
        if dist == "neml2-aoti-runtime":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(_cli_support.metadata, "version", version)
    text = _cli_support.versions("neml2-run", "neml2-drivers")
    assert "neml2-aoti-runtime  not installed" in text


def test_usage_shows_overrides_as_optional(capsys):
    with pytest.raises(SystemExit):
        run_main(["--help"])
    out = capsys.readouterr().out
    assert "input driver [overrides ...]" in out
    assert "A relative save_as" in out and "130 interrupted by SIGINT, 143 by SIGTERM" in out


@pytest.mark.parametrize("main", [run_main, inspect_main])
def test_input_directory_or_fifo_is_reported(main, tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.i")
    assert main([str(tmp_path), "x"]) == EXIT_FATAL
    assert f"INPUT '{tmp_path}' is not a regular file (a directory)" in capsys.readouterr().err
    assert main([str(tmp_path / "pipe.i"), "x"]) == EXIT_FATAL  # and no hang
    assert "(a FIFO), not a HIT file" in capsys.readouterr().err
