"""An artifact is written whole or not at all: built in a hidden sibling folder, renamed
into place complete (metadata.json last); a failed, interrupted or killed compile leaves
the previous artifact (or none), never a part of one."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neml2.compiler import CompileOptions, _compile, compile_file, main
from neml2.tensors import FatalError

OPTS = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"])

#: What an elasticity artifact with -d stress:strain holds, stub included.
LAYOUT = [
    "elasticity",
    "elasticity/cpu",
    "elasticity/cpu/elasticity_meta.json",
    "elasticity/cpu/float64",
    "elasticity/cpu/float64/forward.pt2",
    "elasticity/cpu/float64/jacobian.pt2",
    "elasticity/metadata.json",
    "elasticity_aoti.i",
]


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under *folder* (hidden ones included): a file's bytes, None for a folder."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def test_a_recompile_replaces_the_artifact_whole(compiled, elasticity_input, tmp_path, cache_dir):
    compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    # what an older compile left: a graph no longer built, a temporary file
    (tmp_path / "elasticity" / "cpu" / "float64" / "stale.pt2").write_bytes(b"old")
    (tmp_path / "elasticity" / "cpu" / "float64" / ".forward.x1.pt2").write_bytes(b"half")
    res = compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    assert res.cache_hits == 2
    assert sorted(tree(tmp_path)) == LAYOUT  # no stale file, no .partial / .old folder
    assert res.artifact_dir == tmp_path / "elasticity"
    assert [g.path for g in res.graphs] == [
        tmp_path / "elasticity" / "cpu" / "float64" / f"{g}.pt2" for g in ("forward", "jacobian")
    ]
    assert res.device_metadata_paths == {
        "cpu": tmp_path / "elasticity" / "cpu" / "elasticity_meta.json"
    }


def test_a_failed_compile_keeps_the_previous_artifact(
    compiled, elasticity_input, tmp_path, cache_dir, monkeypatch
):
    compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    before = tree(tmp_path)

    def fail(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(_compile, "device_metadata", fail)  # after every graph is built
    with pytest.raises(RuntimeError, match="disk on fire"):
        compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    assert tree(tmp_path) == before


def test_a_failed_first_compile_leaves_nothing(
    compiled, elasticity_input, tmp_path, cache_dir, monkeypatch
):
    monkeypatch.setattr(_compile, "device_metadata", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        compile_file(elasticity_input, OPTS, tmp_path / "new" / "deeper", cache_dir=cache_dir)
    assert list(tmp_path.iterdir()) == []  # not even the folders made for it


def test_a_signal_in_the_process_keeps_the_previous_artifact(
    compiled, elasticity_input, tmp_path, cache_dir, monkeypatch, capsys
):
    compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    before = tree(tmp_path)

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass

    monkeypatch.setattr(_compile, "device_metadata", interrupted)
    argv = [str(elasticity_input), "elasticity", "-d", "stress:strain", "-p", "E"]
    status = main([*argv, "-o", str(tmp_path), "--cache-dir", str(cache_dir), "-q"])
    assert status == 143
    assert capsys.readouterr().err.splitlines() == [
        "neml2-compile: interrupted (SIGTERM); no result written"
    ]
    assert tree(tmp_path) == before


def _aoti_fails_on_the_jacobian(ep, path):
    """AOT Inductor writing forward.pt2, then failing on the next graph."""
    if path.stem == "jacobian":
        raise RuntimeError("out of memory in the middle")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"a compiled forward graph")


@pytest.mark.parametrize("previous", [False, True], ids=["first compile", "over an artifact"])
def test_a_compile_failing_midway_leaves_no_graph_without_metadata(
    compiled, elasticity_input, tmp_path, cache_dir, monkeypatch, capsys, previous
):
    """The AOT Inductor step fails after forward.pt2 is written: -o holds the previous
    artifact, whole, or nothing (no forward.pt2 without its metadata.json)."""
    if previous:
        compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    before = tree(tmp_path)
    monkeypatch.setattr(_compile, "_aoti", _aoti_fails_on_the_jacobian)
    out = tmp_path if previous else tmp_path / "new"
    argv = [str(elasticity_input), "elasticity", "-d", "stress:strain", "-p", "E", "-q"]
    assert main([*argv, "-o", str(out), "--no-cache"]) == 1
    assert "out of memory in the middle" in capsys.readouterr().err
    assert tree(tmp_path) == before  # not even the folder -o named
    assert sorted(before) == (LAYOUT if previous else [])


@pytest.mark.parametrize("kind", ["file", "foreign folder"])
def test_what_is_not_an_artifact_is_never_replaced(
    compiled, elasticity_input, tmp_path, cache_dir, kind, capsys
):
    if kind == "file":
        (tmp_path / "elasticity").write_text("mine")
        match = "exists and is not a directory"
    else:
        (tmp_path / "elasticity" / "cpu").mkdir(parents=True)
        (tmp_path / "elasticity" / "cpu" / "notes.txt").write_text("mine")
        match = r"holds 'cpu/notes.txt', which is not part of an artifact"
    before = tree(tmp_path)
    with pytest.raises(FatalError, match=match):
        compile_file(elasticity_input, OPTS, tmp_path, cache_dir=cache_dir)
    assert main([str(elasticity_input), "elasticity", "-o", str(tmp_path), "-q"]) == 1
    assert "neml2-compile: error: output directory: " in capsys.readouterr().err
    assert tree(tmp_path) == before


def test_a_symlinked_artifact_folder_stays_a_link(compiled, elasticity_input, tmp_path, cache_dir):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "elasticity").symlink_to(tmp_path / "elsewhere" / "art")
    compile_file(elasticity_input, OPTS, tmp_path / "out", cache_dir=cache_dir)
    assert (tmp_path / "out" / "elasticity").is_symlink()
    assert (tmp_path / "elsewhere" / "art" / "metadata.json").is_file()
    assert sorted(os.listdir(tmp_path / "elsewhere")) == ["art"]


# ---------------------------------------------------------------- a real Ctrl-C


def _wait_for(stream, needle: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no {needle!r} within {seconds} s; got {seen!r}")
        ready, _, _ = select.select([stream], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                pytest.fail(f"the compile ended before {needle!r}: {seen!r}")
            seen += chunk
    return seen


def test_ctrl_c_during_an_aoti_compile_leaves_the_previous_artifact(tmp_path, elasticity_input):
    """neml2-compile as a program (supervised), a fresh cache: SIGINT while AOT Inductor
    compiles; exit 130 within a second or so, one line, the previous artifact unchanged,
    nothing half-written beside it or in the cache."""
    out = tmp_path / "out"
    (out / "elasticity" / "cpu" / "float64").mkdir(parents=True)
    (out / "elasticity" / "metadata.json").write_text('{"previous": true}\n')
    (out / "elasticity" / "cpu" / "float64" / "forward.pt2").write_bytes(b"previous")
    before = tree(out)
    code = "import sys; from neml2.compiler import main; sys.exit(main())"
    args = [str(elasticity_input), "elasticity", "-o", str(out), "--cache-dir", "cache"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a fresh Inductor cache too: the compile really compiles (15 s and more)
        env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")},
    )
    try:
        _wait_for(proc.stdout, b"AOT Inductor compile ...", 300)
        time.sleep(1.0)  # inside Inductor
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode()
    print(f"neml2-compile SIGINT: stopped in {took:.2f} s")
    assert proc.returncode == 130, text
    assert took < 2.0, f"stopped after {took:.2f} s"
    assert text.splitlines()[-1] == "neml2-compile: interrupted (SIGINT); no result written"
    assert text.count("interrupted") == 1 and "Traceback" not in text, text
    assert tree(out) == before  # no .elasticity.*.partial beside it, the old one whole
    leftovers = [p.name for p in tmp_path.glob("cache/*")]  # the cache has no half entry
    assert not [n for n in leftovers if n.endswith(".tmp")], leftovers
