"""Running git and uv, and the one error type of the tool."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


class ToolError(Exception):
    """A release, changelog or compatibility step that cannot go on (the message says why)."""


def say(text: str = "") -> None:
    print(text, flush=True)


def uv() -> str:
    """The uv executable: ``$UV`` (set by ``uv run``), else the one on PATH."""
    exe = os.environ.get("UV") or shutil.which("uv")
    if not exe:
        raise ToolError("uv not found: put it on PATH (https://docs.astral.sh/uv/)")
    return exe


def run(
    cmd: Sequence[str | os.PathLike[str]],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    echo: bool = True,
) -> None:
    """Run *cmd* in *cwd*, its output going to ours; a non-zero exit raises ToolError."""
    args = [os.fspath(c) for c in cmd]
    if echo:
        say("$ " + shlex.join(args))
    full_env = None if env is None else {**os.environ, **env}
    sys.stdout.flush()
    proc = subprocess.run(args, cwd=cwd, env=full_env, check=False)
    if proc.returncode != 0:
        raise ToolError(f"command failed (exit {proc.returncode}): {shlex.join(args)}")


def git(root: Path, *args: str, check: bool = True) -> str:
    """``git -C root ARGS``'s stdout (stripped of the final newline)."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout}")
    return proc.stdout.rstrip("\n")


def git_ok(root: Path, *args: str) -> bool:
    """Whether ``git -C root ARGS`` exits 0."""
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    return proc.returncode == 0


def require_git(root: Path) -> None:
    """*root* must be the top of a git work tree with its full history."""
    if shutil.which("git") is None:
        raise ToolError("git is not on PATH")
    if not git_ok(root, "rev-parse", "--git-dir"):
        raise ToolError(f"{root} is not a git repository (the release tools need its history)")
    if git(root, "rev-parse", "--is-shallow-repository") == "true":
        raise ToolError(
            f"{root} is a shallow clone: the changelog rule and release tags need the full "
            "history. Run `git fetch --unshallow --tags` (or clone without --depth)"
        )
