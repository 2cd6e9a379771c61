"""The compile cache verifies what it reuses.

An entry is ``<key>.pt2`` plus the manifest ``<key>.json`` (its size and sha256), the
manifest written last. A reused entry is copied into the artifact only when the copy
matches the manifest; a truncated, altered or missing file (or manifest) is recompiled
with a warning naming the entry and the file, and the entry is replaced.

The AOT Inductor step is replaced by a fake that writes a small file (the export is
real, about a second for linear elasticity); the last test reuses the real entries of
the session's compile (no compile of its own).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings

import pytest
import torch

import neml2.compiler._compile as compile_module
from neml2.compiler import CompileOptions, compile_file


@pytest.fixture
def fake_aoti(monkeypatch):
    """Replace the AOT Inductor compile: each call writes ``fake <n>`` to the package path
    and is counted."""
    calls: list = []

    def fake(ep, path):
        calls.append(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"fake package %d " % len(calls) + b"x" * 4000)

    monkeypatch.setattr(compile_module, "_aoti", fake)
    return calls


OPTS = CompileOptions.from_strings("elasticity")


def _compile(src, out, cache):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = compile_file(src, OPTS, out, cache_dir=cache)
    cache_warnings = [str(w.message) for w in record if "neml2-compile cache" in str(w.message)]
    return res, cache_warnings


def _entry(cache, res):
    key = res.graphs[0].key
    return key, cache / f"{key}.pt2", cache / f"{key}.json"


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_stored_entry_has_a_manifest(elasticity_input, tmp_path, fake_aoti):
    res, warned = _compile(elasticity_input, tmp_path / "a", tmp_path / "cache")
    assert not warned and len(fake_aoti) == 1
    _, pt2, man = _entry(tmp_path / "cache", res)
    manifest = json.loads(man.read_text())
    assert manifest["file"] == pt2.name
    assert manifest["size"] == pt2.stat().st_size
    assert manifest["sha256"] == _sha(pt2)
    # a clean reuse: no warning, no compile, the same bytes in the artifact
    again, warned = _compile(elasticity_input, tmp_path / "b", tmp_path / "cache")
    assert not warned and len(fake_aoti) == 1
    assert again.graphs[0].cache_hit
    assert again.graphs[0].path.read_bytes() == pt2.read_bytes()


def _truncate(pt2, man):
    pt2.write_bytes(pt2.read_bytes()[:100])


def _flip_a_byte(pt2, man):
    data = bytearray(pt2.read_bytes())
    data[-1] ^= 0xFF
    pt2.write_bytes(bytes(data))


def _remove_manifest(pt2, man):
    man.unlink()


def _remove_file(pt2, man):
    pt2.unlink()


def _garble_manifest(pt2, man):
    man.write_text('{"format": "neml2-compile-cache-entry", "file": ')


DAMAGE = [
    (_truncate, "has 100 bytes, its manifest says"),
    (_flip_a_byte, "does not match the sha256 in its manifest"),
    (_remove_manifest, ".json is missing"),
    (_remove_file, ".pt2 is missing (its manifest"),
    (_garble_manifest, ".json is unreadable"),
]


@pytest.mark.parametrize("damage,fragment", DAMAGE, ids=[d.__name__[1:] for d, _ in DAMAGE])
def test_a_damaged_entry_is_recompiled_with_a_warning(
    elasticity_input, tmp_path, fake_aoti, damage, fragment
):
    cache = tmp_path / "cache"
    first, _ = _compile(elasticity_input, tmp_path / "a", cache)
    key, pt2, man = _entry(cache, first)
    damage(pt2, man)
    res, warned = _compile(elasticity_input, tmp_path / "b", cache)
    assert len(warned) == 1, warned
    assert f"entry {key} ([elasticity] cpu/float64/forward) is damaged" in warned[0]
    assert fragment in warned[0]
    assert str(cache) in warned[0]  # names the file
    assert "recompiling it" in warned[0]
    # recompiled, never copied: the artifact holds the new compile's bytes
    assert len(fake_aoti) == 2
    assert not res.graphs[0].cache_hit
    assert res.graphs[0].path.read_bytes().startswith(b"fake package 2 ")
    # and the entry is whole again
    manifest = json.loads(man.read_text())
    assert manifest["sha256"] == _sha(pt2) == _sha(res.graphs[0].path)
    third, warned = _compile(elasticity_input, tmp_path / "c", cache)
    assert not warned and third.graphs[0].cache_hit and len(fake_aoti) == 2


def test_a_damaged_entry_leaves_no_temporary_file(elasticity_input, tmp_path, fake_aoti):
    cache = tmp_path / "cache"
    first, _ = _compile(elasticity_input, tmp_path / "a", cache)
    _, pt2, man = _entry(cache, first)
    _flip_a_byte(pt2, man)
    res, _ = _compile(elasticity_input, tmp_path / "b", cache)
    target = res.graphs[0].path.parent
    assert sorted(p.name for p in target.iterdir()) == ["forward.pt2"]
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]


def test_a_garbled_source_key_exports_again(elasticity_input, tmp_path, fake_aoti):
    cache = tmp_path / "cache"
    _compile(elasticity_input, tmp_path / "a", cache)
    (src,) = cache.glob("src-*.key")
    src.write_text("../../etc/passwd")
    lines: list[str] = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = compile_file(
            elasticity_input, OPTS, tmp_path / "b", cache_dir=cache, progress=lines.append
        )
    text = [str(w.message) for w in record if "neml2-compile cache" in str(w.message)]
    assert len(text) == 1 and f"source-key file {src} does not hold a graph key" in text[0]
    assert any("exporting" in s for s in lines)
    # the export finds the (intact) graph entry: a hit without a compile; the key is fixed
    assert res.graphs[0].cache_hit and len(fake_aoti) == 1
    assert src.read_text() == res.graphs[0].key


def test_the_real_entries_verify_and_load(compiled, cache_dir, elasticity_input, tmp_path):
    """The session's real compile left manifests that match its packages; copied into a
    fresh cache they are reused (no compile) and the artifact's packages load and run."""
    first, _ = compiled
    cache = tmp_path / "cache"
    cache.mkdir()
    for g in first.graphs:
        for suffix in (".pt2", ".json"):
            shutil.copy(cache_dir / f"{g.key}{suffix}", cache / f"{g.key}{suffix}")
        manifest = json.loads((cache / f"{g.key}.json").read_text())
        assert manifest["sha256"] == _sha(cache / f"{g.key}.pt2")
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = compile_file(elasticity_input, opts, tmp_path / "out", cache_dir=cache)
    assert [g.cache_hit for g in res.graphs] == [True, True]
    runner = torch._inductor.aoti_load_package(str(res.graphs[0].path))
    strain = torch.zeros(4, 6, dtype=torch.float64)
    strain[:, 0] = 1e-3
    E = torch.tensor(200e3, dtype=torch.float64)  # promoted; nu is a literal of the graph
    (stress,) = runner(strain, E)
    assert stress.shape == (4, 6)
    assert float(stress[0, 0]) == pytest.approx(200e3 * 0.7 / (1.3 * 0.4) * 1e-3)
