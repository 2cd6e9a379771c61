"""``nox -s release``: the dry run here (it changes nothing), the real release of
neml2-hit in a throwaway clone of this work tree (wheel, sdist, changelog, tag), and
what stops a release."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from _release_repos import ROOT, commit, git, repo_state
from neml2_release import ToolError, changelog, release, rule, workspace
from packaging.version import Version

DATE = "2030-01-02"


def _nox(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(repo / "noxfile.py"), "-s", "release", "--", *args],
        capture_output=True,
        text=True,
        cwd=repo,
        check=False,
    )


def test_dry_run_shows_every_change_and_changes_nothing(uv_env):
    before = repo_state()
    proc = _nox(ROOT, "neml2-hit", "0.2.0", "--dry-run", "--date", DATE)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    hit = workspace.load(ROOT)["neml2-hit"]
    assert f"DRY RUN (nothing is changed): release neml2-hit {hit.version} -> 0.2.0" in out
    for line in (
        "+++ b/packages/neml2-hit/pyproject.toml",
        '+version = "0.2.0"',
        "+++ b/packages/neml2-hit/CHANGELOG.md",
        f"+## [0.2.0] - {DATE}",
        "+++ b/packages/neml2-models/pyproject.toml",
        '"neml2-hit>=0.2,<0.3"]',
        "+- Requires neml2-hit `>=0.2,<0.3` (was `>=0.1,<0.2`): neml2-hit 0.2.0 is released.",
        "uv.lock, as `uv lock` will write it:",
        "$ uv build --package neml2-hit -o build/release-neml2-hit/dist",
        "$ git tag -a neml2-hit-v0.2.0",
        "dry run: nothing was changed",
    ):
        assert line in out, line
    assert repo_state() == before


def test_release_of_neml2_hit_in_a_throwaway_clone(work_clone, uv_env):
    before = repo_state()
    repo = work_clone
    models_before = (repo / "packages/neml2-models/pyproject.toml").read_text()
    proc = _nox(repo, "neml2-hit", "0.2.0", "--date", DATE)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert " passed" in out  # the package's tests ran against the wheel

    # the wheel and the sdist, at the new version
    dist = repo / "build/release-neml2-hit/dist"
    wheel = dist / "neml2_hit-0.2.0-py3-none-any.whl"
    sdist = dist / "neml2_hit-0.2.0.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    with zipfile.ZipFile(wheel) as z:
        meta = z.read("neml2_hit-0.2.0.dist-info/METADATA").decode()
        assert "\nVersion: 0.2.0\n" in meta
        assert "neml2/hit/__init__.py" in z.namelist()
    with tarfile.open(sdist) as t:
        assert "neml2_hit-0.2.0/PKG-INFO" in t.getnames()

    # the version, the changelog section, the sibling range, the lock
    hit = workspace.load(repo)["neml2-hit"]
    assert hit.version == Version("0.2.0")
    log = hit.changelog.read_text()
    assert f"## [Unreleased]\n\n## [0.2.0] - {DATE}\n" in log
    assert changelog.unreleased_entries(log) == []
    assert "`neml2.hit`: the HIT input dialect" in changelog.release_section(log, "0.2.0")
    models = (repo / "packages/neml2-models/pyproject.toml").read_text()
    assert models == models_before.replace('"neml2-hit>=0.1,<0.2"', '"neml2-hit>=0.2,<0.3"')
    assert (
        "Requires neml2-hit `>=0.2,<0.3`"
        in (repo / "packages/neml2-models/CHANGELOG.md").read_text()
    )
    assert 'name = "neml2-hit"\nversion = "0.2.0"' in (repo / "uv.lock").read_text()

    # one commit with exactly those files, and the tag on it
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(repo, "rev-parse", "neml2-hit-v0.2.0^{commit}") == git(repo, "rev-parse", "HEAD")
    assert git(repo, "cat-file", "-t", "neml2-hit-v0.2.0") == "tag"  # annotated
    assert git(repo, "log", "-1", "--format=%s") == "Release neml2-hit 0.2.0"
    assert sorted(git(repo, "show", "--format=", "--name-only", "HEAD").split()) == [
        "packages/neml2-hit/CHANGELOG.md",
        "packages/neml2-hit/pyproject.toml",
        "packages/neml2-models/CHANGELOG.md",
        "packages/neml2-models/pyproject.toml",
        "uv.lock",
    ]
    assert 'version = "0.2.0"' in git(
        repo, "show", "neml2-hit-v0.2.0:packages/neml2-hit/pyproject.toml"
    )

    # the release keeps the changelog rule and refuses to run twice
    assert rule.check(repo).ok
    again = release.make_plan(repo, "neml2-hit", "0.2.0")
    assert any("exists already" in e for e in again.errors)
    assert repo_state() == before


def test_a_failing_test_stops_the_release_and_restores_the_files(work_clone, uv_env):
    repo = work_clone
    commit(
        repo,
        "a failing test",
        {"packages/neml2-hit/tests/test_zz_fails.py": "def test(): assert 0\n"},
    )
    touched = ["packages/neml2-hit/pyproject.toml", "packages/neml2-hit/CHANGELOG.md", "uv.lock"]
    texts = {p: (repo / p).read_text() for p in touched}
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(ToolError, match="pytest"):
        release.main(["neml2-hit", "0.2.0", "--date", DATE], repo)
    assert {p: (repo / p).read_text() for p in touched} == texts
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "tag", "--list") == ""


def test_what_stops_a_release(work_clone):
    repo = work_clone
    with pytest.raises(ToolError, match="no package 'neml2-foo'"):
        release.make_plan(repo, "neml2-foo", "1.0.0")
    with pytest.raises(ToolError, match="not a valid version"):
        release.make_plan(repo, "neml2-hit", "zero")
    with pytest.raises(ToolError, match="no local, dev or epoch"):
        release.make_plan(repo, "neml2-hit", "0.2.0.dev1")
    with pytest.raises(ToolError, match="is not a date"):
        release.make_plan(repo, "neml2-hit", "0.2.0", "2030-02-31")
    with pytest.raises(ToolError, match="bad arguments"):
        release.main(["neml2-hit"], repo)
    assert release.make_plan(repo, "neml2-hit", "0.2.0").errors == []
    # the current version may be released once, while nothing of it is
    assert release.make_plan(repo, "neml2-hit", "0.1.0").errors == []
    (older,) = release.make_plan(repo, "neml2-hit", "0.0.9").errors
    assert "must be newer" in older

    git(repo, "tag", "neml2-hit-v0.2.0")
    assert any("exists already" in e for e in release.make_plan(repo, "neml2-hit", "0.2.0").errors)

    log = repo / "packages/neml2-hit/CHANGELOG.md"
    log.write_text("# Changelog\n\n## [Unreleased]\n")
    dry = release.make_plan(repo, "neml2-hit", "0.3.0", dry_run=True)
    real = release.make_plan(repo, "neml2-hit", "0.3.0")
    assert any("[Unreleased] has no entry" in e for e in real.errors)
    assert any("uncommitted changes (commit or stash" in e for e in real.errors)
    assert any("uncommitted changes" in w for w in dry.warnings)  # a dry run still shows all
    assert not any("uncommitted" in e for e in dry.errors)
    with pytest.raises(ToolError, match="would stop"):
        release.main(["neml2-hit", "0.3.0", "--dry-run"], repo)
    assert log.read_text() == "# Changelog\n\n## [Unreleased]\n"


def test_a_release_dated_before_the_previous_one_is_refused(work_clone):
    log = work_clone / "packages/neml2-hit/CHANGELOG.md"
    log.write_text(
        "# Changelog\n\n## [Unreleased]\n\n### Fixed\n\n- a fix\n\n"
        "## [0.1.0] - 2030-06-01\n\n### Added\n\n- the first release\n"
    )
    plan = release.make_plan(work_clone, "neml2-hit", "0.2.0", "2030-01-02", dry_run=True)
    (line,) = [e for e in plan.errors if "before" in e]
    assert line == (
        "the release date 2030-01-02 is before 2030-06-01, the date of the previous "
        "release [0.1.0] in packages/neml2-hit/CHANGELOG.md"
    )
    with pytest.raises(ToolError, match=r"would stop: the release date 2030-01-02 is before"):
        release.main(["neml2-hit", "0.2.0", "--dry-run", "--date", "2030-01-02"], work_clone)
    # the same day as the previous release, or later, is fine
    for day in ("2030-06-01", "2030-06-02"):
        plan = release.make_plan(work_clone, "neml2-hit", "0.2.0", day, dry_run=True)
        assert not any("before" in e for e in plan.errors), plan.errors


def test_a_runtime_release_moves_every_range_of_it(work_clone):
    """neml2-aoti-runtime 0.2.0: a wheel only; neml2-compile's range and cpp/consumer's
    find_package version move, with an entry in neml2-compile's changelog."""
    plan = release.make_plan(work_clone, "neml2-aoti-runtime", "0.2.0", DATE)
    assert plan.errors == [] and plan.wheel_only
    edited = sorted(plan.rel(p) for p in plan.edits)
    assert edited == [
        "cpp/consumer/CMakeLists.txt",
        "packages/neml2-aoti-runtime/CHANGELOG.md",
        "packages/neml2-aoti-runtime/pyproject.toml",
        "packages/neml2-compile/CHANGELOG.md",
        "packages/neml2-compile/pyproject.toml",
    ]
    consumer = plan.edits[work_clone / "cpp/consumer/CMakeLists.txt"].new
    assert "find_package(neml2 0.2 REQUIRED" in consumer
    compile_ = plan.edits[work_clone / "packages/neml2-compile/pyproject.toml"].new
    assert '"neml2-aoti-runtime>=0.2,<0.3"' in compile_
    assert "--wheel" in release.describe(plan)
    # a patch release inside every range moves none
    patch = release.make_plan(work_clone, "neml2-aoti-runtime", "0.1.1", DATE)
    assert sorted(patch.rel(p) for p in patch.edits) == [
        "packages/neml2-aoti-runtime/CHANGELOG.md",
        "packages/neml2-aoti-runtime/pyproject.toml",
    ]
    assert any("0.1.1 is inside, unchanged" in n for n in patch.notes)
    # --widen keeps the old lower bound
    wide = release.make_plan(work_clone, "neml2-tensors", "0.2.0", DATE, widen=True)
    runtime = wide.edits[work_clone / "packages/neml2-aoti-runtime/pyproject.toml"].new
    assert '"neml2-tensors>=0.1,<0.3"' in runtime
