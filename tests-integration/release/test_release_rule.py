"""The changelog rule of the lint session, on throwaway repositories: a source change
without a changelog entry fails; an entry or the marker line passes."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest
from _release_repos import ROOT, commit, git
from neml2_release import rule

CONFIG = (ROOT / "tools" / "neml2_release" / "config.toml").read_text()
LOG = "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- {name}\n"


def _package(name: str) -> dict[str, str]:
    short = name.split("-")[-1]
    return {
        f"packages/{name}/pyproject.toml": f'[project]\nname = "{name}"\nversion = "0.1.0"\n',
        f"packages/{name}/CHANGELOG.md": LOG.format(name=name),
        f"packages/{name}/src/neml2/{short}/__init__.py": "",
    }


@pytest.fixture
def repo(tmp_path) -> Path:
    """Two packages; a first commit *before* the rule (a source change without entry,
    which the rule must not see), then the commit that adds config.toml."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, "before the rule", {**_package("pkg-a"), **_package("pkg-b")})
    commit(r, "old change", {"packages/pkg-a/src/neml2/a/old.py": "x = 1\n"})
    commit(r, "the rule", {"tools/neml2_release/config.toml": CONFIG})
    return r


def _problems(r: Path) -> list[str]:
    return rule.check(r).problems


def test_history_before_the_rule_is_not_checked(repo):
    report = rule.check(repo)
    assert report.ok, report.problems
    assert any("0 commit(s) after" in n for n in report.notes)


def test_source_change_without_entry_fails(repo):
    sha = commit(repo, "change a", {"packages/pkg-a/src/neml2/a/x.py": "y = 2\n"})
    (problem,) = _problems(repo)
    assert problem.startswith(sha[:10]) and "'change a'" in problem
    assert "changes packages/pkg-a/src/ but not packages/pkg-a/CHANGELOG.md" in problem
    assert "no user-visible change" in problem


def test_source_change_with_entry_passes(repo):
    log = repo / "packages/pkg-a/CHANGELOG.md"
    commit(
        repo,
        "change a",
        {
            "packages/pkg-a/src/neml2/a/x.py": "y = 3\n",
            "packages/pkg-a/CHANGELOG.md": log.read_text() + "- y is 3\n",
        },
    )
    assert _problems(repo) == []


def test_marker_line_passes(repo):
    commit(
        repo,
        "refactor a\n\nInternal only.\nNo user-visible change.\n",
        {"packages/pkg-a/src/neml2/a/x.py": "y = 2\n"},
    )
    assert _problems(repo) == []


def test_marker_naming_packages_covers_only_those(repo):
    commit(
        repo,
        "touch both\n\nno user-visible change: pkg-b\n",
        {"packages/pkg-a/src/neml2/a/x.py": "1\n", "packages/pkg-b/src/neml2/b/x.py": "1\n"},
    )
    (problem,) = _problems(repo)
    assert "packages/pkg-a/src/" in problem
    commit(repo, "typo\n\nno user-visible change: pkg-c\n", {"packages/pkg-b/src/neml2/b/y": "\n"})
    problems = _problems(repo)
    assert any("names 'pkg-c', which is no package" in p for p in problems)


def test_changes_outside_src_need_no_entry(repo):
    commit(repo, "tests only", {"packages/pkg-a/tests/test_x.py": "def test(): pass\n"})
    assert _problems(repo) == []


def test_a_release_tag_moves_the_start(repo):
    commit(repo, "unlogged", {"packages/pkg-a/src/neml2/a/x.py": "1\n"})
    assert len(_problems(repo)) == 1
    git(repo, "tag", "-a", "pkg-a-v0.1.0", "-m", "pkg-a 0.1.0")
    report = rule.check(repo)
    assert report.ok, report.problems
    assert any("pkg-a checked since pkg-a-v0.1.0" in n for n in report.notes)
    commit(repo, "after the tag", {"packages/pkg-a/src/neml2/a/x.py": "2\n"})
    assert len(_problems(repo)) == 1


def test_merge_commits_are_not_checked_but_their_commits_are(repo):
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "side change", {"packages/pkg-b/src/neml2/b/x.py": "1\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "main change", {"packages/pkg-a/CHANGELOG.md": LOG.format(name="a") + "- x\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    (problem,) = _problems(repo)
    assert "'side change'" in problem


def test_changelog_form_is_checked(repo):
    commit(repo, "bad log", {"packages/pkg-b/CHANGELOG.md": "# Changes\n"})
    problems = _problems(repo)
    assert any("packages/pkg-b/CHANGELOG.md: its first line must be" in p for p in problems)


def test_rule_not_committed_yet_checks_nothing(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    commit(r, "pkg", _package("pkg-a"))
    commit(r, "unlogged", {"packages/pkg-a/src/neml2/a/x.py": "1\n"})
    (r / "tools/neml2_release").mkdir(parents=True)
    (r / "tools/neml2_release/config.toml").write_text(CONFIG)  # not committed
    report = rule.check(r)
    assert report.ok and "not committed yet" in report.notes[0]


def test_shallow_clone_is_refused_with_a_clear_message(repo, tmp_path):
    commit(repo, "one more", {"README": "x\n"})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True
    )
    (problem,) = _problems(shallow)
    assert "shallow clone" in problem and "git fetch --unshallow" in problem


# ------------------------------------------------------------ the lint session itself


class _SessionError(Exception):
    pass


class _FakeSession:
    """Enough of nox.Session for noxfile.lint: records commands, raises on error()."""

    def __init__(self, location: Path):
        self.virtualenv = type("V", (), {"location": str(location)})()
        self.ran: list[tuple] = []
        self.logged: list[str] = []

    def error(self, message: str):
        raise _SessionError(message)

    def log(self, message: str):
        self.logged.append(message)

    def run(self, *args, **kwargs):
        self.ran.append(args)

    run_install = run


@pytest.fixture
def noxfile(monkeypatch):
    spec = importlib.util.spec_from_file_location("neml2_noxfile", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lint_session_fails_on_a_source_change_without_entry(repo, noxfile, monkeypatch, tmp_path):
    monkeypatch.setattr(noxfile, "ROOT", repo)
    commit(repo, "change a", {"packages/pkg-a/src/neml2/a/x.py": "y = 2\n"})
    session = _FakeSession(tmp_path / "venv")
    with pytest.raises(_SessionError, match=r"(?s)changelog rule:.*packages/pkg-a/CHANGELOG\.md"):
        noxfile.lint(session)
    assert session.ran == []  # it stops before ruff

    log = repo / "packages/pkg-a/CHANGELOG.md"
    log.write_text(log.read_text() + "- y is 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--amend", "--no-edit")  # the same change, with its entry
    session = _FakeSession(tmp_path / "venv")
    noxfile.lint(session)  # passes the rule and goes on to ruff (recorded, not run)
    assert ("ruff", "check", ".") in session.ran
