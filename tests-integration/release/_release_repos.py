"""Throwaway git repositories for the release-tool tests: tiny ones built by the tests,
and clones of this repository's work tree. Nothing here writes into the repository.

Also makes tools/neml2_release importable (it is in no wheel).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

#: A committer for the throwaway repositories (CI machines may have no git identity).
GIT_ENV = {
    "GIT_AUTHOR_NAME": "release test",
    "GIT_AUTHOR_EMAIL": "release-test@example.invalid",
    "GIT_COMMITTER_NAME": "release test",
    "GIT_COMMITTER_EMAIL": "release-test@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        check=False,
    )
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str] | None = None) -> str:
    """Write *files* (path -> text) into *repo*, commit everything; the new sha."""
    for rel, text in (files or {}).items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def uv_path() -> str:
    exe = os.environ.get("UV") or shutil.which("uv")
    if exe is None:
        home = Path.home() / ".local" / "bin" / "uv"
        exe = str(home) if home.is_file() else None
    assert exe, "uv is needed: run the tests through `uv run nox -s integration`"
    return exe


def clone_work_tree(dest: Path) -> Path:
    """A clone of this repository holding its work tree as it is now (uncommitted and
    untracked, not ignored, files included) in one more commit."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = raw.decode()
        src, dst = ROOT / rel, dest / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        elif dst.is_file():  # deleted in the work tree
            dst.unlink()
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "the work tree under test")
    return dest


def repo_state() -> dict[str, object]:
    """What a test must leave untouched in the real repository: its tags and every file a
    release of neml2-hit would edit (a commit by the release would have edited them too).
    Its status and HEAD are left out: in a work tree others may be committing meanwhile."""
    tags = subprocess.run(
        ["git", "-C", str(ROOT), "tag", "--list"], capture_output=True, text=True, check=True
    ).stdout
    files = {}
    for rel in ("uv.lock", *(f"packages/{p}" for p in ("neml2-hit", "neml2-models"))):
        path = ROOT / rel
        for f in [path] if path.is_file() else [path / "pyproject.toml", path / "CHANGELOG.md"]:
            files[str(f.relative_to(ROOT))] = f.read_bytes() if f.is_file() else None
    return {"tags": tags, "files": files}
