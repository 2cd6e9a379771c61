"""The changelog rule the lint session enforces.

Every commit after the rule's start (the commit that added config.toml, or the one
config.toml names; for a package with a release tag descending from it, the tag) that
changes a file under ``packages/<p>/src`` must also change ``packages/<p>/CHANGELOG.md``,
or carry the line ``no user-visible change`` in its message (alone: every package;
``no user-visible change: neml2-hit, neml2-models``: only those). Merge commits are
not checked (the commits they bring in are). Each CHANGELOG.md must also be in the
form :mod:`changelog` reads, its newest release being the version in pyproject.toml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from . import changelog, workspace
from ._util import ToolError, git, git_ok, require_git


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    paths: tuple[str, ...]

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


def exemptions(message: str, marker: str, known: set[str]) -> tuple[set[str] | None, list[str]]:
    """Which packages the marker lines of *message* exempt: None = every package; and the
    names it gives that are no package."""
    pattern = re.compile(rf"^\s*{re.escape(marker)}\s*(?::\s*(?P<names>.*?))?\s*\.?\s*$", re.I)
    exempt: set[str] = set()
    unknown: list[str] = []
    for line in message.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        if not m["names"]:
            return None, []
        for name in re.split(r"[,\s]+", m["names"].strip()):
            if not name:
                continue
            canon = canonicalize_name(name)
            if canon in known:
                exempt.add(canon)
            else:
                unknown.append(name)
    return exempt, unknown


def commits(root: Path, rev_range: str) -> list[Commit]:
    """The non-merge commits of *rev_range*, newest first, with the paths each changes."""
    out = git(
        root,
        "log",
        "--no-merges",
        "--no-renames",
        "--format=%x1e%H%x1f%B%x1f",
        "--name-only",
        rev_range,
        "--",
    )
    found = []
    for record in out.split("\x1e")[1:]:
        sha, message, names = record.split("\x1f", 2)
        paths = tuple(line.strip() for line in names.splitlines() if line.strip())
        found.append(Commit(sha, message.strip(), paths))
    return found


def start_commit(root: Path, config: dict) -> str | None:
    """The commit after which the rule applies (None: the rule is not committed yet)."""
    start = config.get("changelog-rule", {}).get("start", "")
    if start:
        if not git_ok(root, "rev-parse", "--verify", "--quiet", f"{start}^{{commit}}"):
            raise ToolError(
                f"{workspace.CONFIG_IN_REPO}: changelog-rule start {start!r} is no commit here"
            )
        return git(root, "rev-parse", f"{start}^{{commit}}")
    added = git(
        root, "log", "--format=%H", "--diff-filter=A", "HEAD", "--", workspace.CONFIG_IN_REPO
    )
    return added.splitlines()[-1] if added else None


def release_tags(root: Path, package: str) -> list[tuple[Version, str]]:
    """The release tags ``<package>-v<version>`` of the repository, oldest version first."""
    prefix = f"{package}-v"
    found = []
    for tag in git(root, "tag", "--list", f"{prefix}*").splitlines():
        try:
            found.append((Version(tag[len(prefix) :]), tag))
        except InvalidVersion:
            continue
    return sorted(found)


def check(root: Path) -> Report:
    """Check the changelog rule on the repository at *root* (HEAD's history)."""
    report = Report()
    try:
        require_git(root)
        config = workspace.load_config(root)
        packages = workspace.load(root)
    except ToolError as e:
        report.problems.append(str(e))
        return report
    marker = config.get("changelog-rule", {}).get("marker", "no user-visible change")

    for pkg in packages.values():
        rel = pkg.changelog.relative_to(root)
        if not pkg.changelog.is_file():
            report.problems.append(f"{rel} is missing (every package keeps a changelog)")
            continue
        for p in changelog.problems(pkg.changelog.read_text(), pkg.version):
            report.problems.append(f"{rel}: {p}")

    try:
        start = start_commit(root, config)
    except ToolError as e:
        report.problems.append(str(e))
        return report
    if start is None:
        report.notes.append(
            f"changelog rule: {workspace.CONFIG_IN_REPO} is not committed yet, so no commit "
            "is checked (the rule starts after the commit that adds it)"
        )
        return report

    checked = commits(root, f"{start}..HEAD")
    # a package released after the start is checked from its newest release tag on
    since_tag: dict[str, set[str]] = {}
    for pkg in packages.values():
        for _, tag in reversed(release_tags(root, pkg.name)):
            if git_ok(root, "merge-base", "--is-ancestor", start, tag) and git_ok(
                root, "merge-base", "--is-ancestor", tag, "HEAD"
            ):
                since_tag[pkg.name] = set(git(root, "rev-list", f"{tag}..HEAD").split())
                report.notes.append(f"changelog rule: {pkg.name} checked since {tag}")
                break

    known = {canonicalize_name(n) for n in packages}
    for c in checked:
        exempt, unknown = exemptions(c.message, marker, known)
        for name in unknown:
            report.problems.append(
                f"{c.sha[:10]} {c.subject!r}: '{marker}' names {name!r}, which is no package "
                f"(packages: {', '.join(sorted(packages))})"
            )
        for pkg in packages.values():
            if pkg.name in since_tag and c.sha not in since_tag[pkg.name]:
                continue
            src = f"packages/{pkg.dir.name}/src/"
            log = f"packages/{pkg.dir.name}/CHANGELOG.md"
            if not any(p.startswith(src) for p in c.paths) or log in c.paths:
                continue
            if exempt is None or canonicalize_name(pkg.name) in exempt:
                continue
            report.problems.append(
                f"{c.sha[:10]} {c.subject!r} changes {src} but not {log}: add an entry "
                f"under its [Unreleased] section, or write the line '{marker}' (or "
                f"'{marker}: {pkg.name}') in the commit message"
            )
    report.notes.append(f"changelog rule: {len(checked)} commit(s) after {start[:10]} checked")
    return report
