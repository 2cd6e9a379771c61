"""Per-package CHANGELOG.md in the Keep a Changelog form (https://keepachangelog.com/).

The form this module reads and writes::

    # Changelog

    (free text)

    ## [Unreleased]

    ### Added
    - an entry

    ## [0.2.0] - 2026-05-04

    ### Fixed
    - ...

Sections are ``## [Unreleased]`` (first, exactly one) and ``## [VERSION] - YYYY-MM-DD``
newest first; inside a section ``### KIND`` groups entries (Added, Changed,
Deprecated, Removed, Fixed, Security). A release moves the Unreleased entries under
a new version heading and leaves Unreleased empty.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
UNRELEASED = "Unreleased"
_HEADING = re.compile(r"^## \[(?P<name>[^\]]+)\](?:\s+-\s+(?P<date>.+?))?\s*$")
_LINK_REF = re.compile(r"^\[[^\]]+\]:\s*\S+")
_BULLET = re.compile(r"^[-*] \S")


@dataclass(frozen=True)
class Section:
    """``## [name] - date`` and its body, lines ``start`` (the heading) to ``end`` (excl.)."""

    name: str
    date: str | None
    start: int
    end: int


def sections(lines: list[str]) -> list[Section]:
    """The ``## `` sections of a changelog split into *lines* (link references at the end
    of the file belong to none)."""
    heads = [(i, _HEADING.match(line)) for i, line in enumerate(lines) if line.startswith("## ")]
    footer = len(lines)
    while footer > 0 and (not lines[footer - 1].strip() or _LINK_REF.match(lines[footer - 1])):
        footer -= 1
    footer = max(footer, heads[-1][0] + 1) if heads else footer
    out = []
    for k, (i, m) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else footer
        if m is None:
            out.append(Section(lines[i][3:].strip(), None, i, end))
        else:
            out.append(Section(m["name"].strip(), m["date"], i, end))
    return out


def _find(lines: list[str], name: str) -> Section:
    for s in sections(lines):
        if s.name.lower() == name.lower():
            return s
    raise ValueError(f"no '## [{name}]' section")


def _trim(body: list[str]) -> list[str]:
    while body and not body[0].strip():
        body = body[1:]
    while body and not body[-1].strip():
        body = body[:-1]
    return body


def _drop_empty_kinds(body: list[str]) -> list[str]:
    """*body* without ``### KIND`` headings that head no entry."""
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i].startswith("### "):
            j = i + 1
            while j < len(body) and not body[j].startswith(("### ", "## ")):
                j += 1
            if any(line.strip() for line in body[i + 1 : j]):
                out += body[i:j]
            i = j
        else:
            out.append(body[i])
            i += 1
    return out


def unreleased_entries(text: str) -> list[str]:
    """The entry lines (``- ...``) of the Unreleased section."""
    lines = text.splitlines()
    s = _find(lines, UNRELEASED)
    return [line for line in lines[s.start + 1 : s.end] if _BULLET.match(line)]


def _join(lines: list[str]) -> str:
    """*lines* as a file: single blank lines around ``## `` headings, one final newline."""
    out: list[str] = []
    for line in lines:
        if line.startswith("## ") and out and out[-1].strip():
            out.append("")
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
        if line.startswith("## "):
            out.append("")
    return "\n".join(_trim(out)) + "\n"


def release(text: str, version: Version | str, date: str) -> str:
    """*text* with the Unreleased entries moved under ``## [version] - date``; Unreleased
    is left empty. Raises ValueError when Unreleased has no entry."""
    lines = text.splitlines()
    s = _find(lines, UNRELEASED)
    body = _trim(_drop_empty_kinds(lines[s.start + 1 : s.end]))
    if not any(_BULLET.match(line) for line in body):
        raise ValueError("the [Unreleased] section has no entry: nothing to release")
    new = [*lines[: s.start + 1], "", f"## [{version}] - {date}", "", *body, "", *lines[s.end :]]
    return _join(new)


def add_entry(text: str, kind: str, entry: str) -> str:
    """*text* with ``- entry`` appended to ``### kind`` of Unreleased (made, in Keep a
    Changelog's order of kinds, when missing)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    lines = text.splitlines()
    s = _find(lines, UNRELEASED)
    body = lines[s.start + 1 : s.end]
    heads = {line[4:].strip(): i for i, line in enumerate(body) if line.startswith("### ")}
    if kind in heads:
        i = heads[kind] + 1
        while i < len(body) and not body[i].startswith("### "):
            i += 1
        while i > heads[kind] + 1 and not body[i - 1].strip():
            i -= 1
        new = [f"- {entry}"] if i > heads[kind] + 1 else ["", f"- {entry}"]
        body = [*body[:i], *new, *body[i:]]
    else:
        later = [heads[k] for k in KINDS[KINDS.index(kind) + 1 :] if k in heads]
        if later:
            i = min(later)
            body = [*body[:i], f"### {kind}", "", f"- {entry}", "", *body[i:]]
        else:
            body = [*_trim(body), "", f"### {kind}", "", f"- {entry}"]
    return _join([*lines[: s.start + 1], "", *_trim(body), "", *lines[s.end :]])


def release_section(text: str, version: Version | str) -> str:
    """The body of the section ``## [version]`` (without its heading)."""
    lines = text.splitlines()
    s = _find(lines, str(version))
    return "\n".join(_trim(lines[s.start + 1 : s.end])) + "\n"


def released_versions(text: str) -> list[Version]:
    """The versions with a section, in file order (newest first in a valid file)."""
    out = []
    for s in sections(text.splitlines()):
        if s.name.lower() != UNRELEASED.lower():
            try:
                out.append(Version(s.name))
            except InvalidVersion:
                pass
    return out


def latest_dated_release(text: str) -> tuple[str, _dt.date] | None:
    """``(version, date)`` of the newest release section with a valid date (the first in
    the file), None when there is none."""
    for s in sections(text.splitlines()):
        if s.name.lower() == UNRELEASED.lower() or s.date is None:
            continue
        try:
            return s.name, _dt.date.fromisoformat(s.date.strip())
        except ValueError:
            continue
    return None


def problems(text: str, project_version: Version) -> list[str]:
    """What makes *text* not a changelog of this form for a package now at
    *project_version* (empty: none)."""
    lines = text.splitlines()
    found: list[str] = []
    first = next((line for line in lines if line.strip()), "")
    if first.strip() != "# Changelog":
        found.append("its first line must be '# Changelog'")
    secs = sections(lines)
    if not secs or secs[0].name != UNRELEASED:
        found.append("its first section must be '## [Unreleased]'")
    if sum(s.name.lower() == UNRELEASED.lower() for s in secs) > 1:
        found.append("it has more than one [Unreleased] section")
    previous: Version | None = None
    newer: tuple[str, _dt.date] | None = None  # the dated release above
    for s in secs:
        m = _HEADING.match(lines[s.start])
        if m is None:
            found.append(f"line {s.start + 1}: a section heading is '## [VERSION] - YYYY-MM-DD'")
            continue
        if s.name == UNRELEASED:
            if s.date:
                found.append(f"line {s.start + 1}: [Unreleased] has no date")
        else:
            try:
                v = Version(s.name)
            except InvalidVersion:
                found.append(f"line {s.start + 1}: {s.name!r} is not a version")
                continue
            if s.date is None:
                found.append(f"line {s.start + 1}: [{s.name}] needs its date (' - YYYY-MM-DD')")
            else:
                try:
                    day = _dt.date.fromisoformat(s.date)
                except ValueError:
                    found.append(f"line {s.start + 1}: {s.date!r} is not a date YYYY-MM-DD")
                else:
                    if newer is not None and day > newer[1]:
                        found.append(
                            f"line {s.start + 1}: [{s.name}] is dated {day}, after "
                            f"[{newer[0]}] above it ({newer[1]})"
                        )
                    newer = (s.name, day)
            if previous is not None and v >= previous:
                found.append(f"line {s.start + 1}: [{v}] is not older than [{previous}] above it")
            if previous is None and v != project_version:
                found.append(
                    f"line {s.start + 1}: the newest release [{v}] is not the version in "
                    f"pyproject.toml ({project_version}); a release changes both"
                )
            previous = v
        for j in range(s.start + 1, s.end):
            if lines[j].startswith("### ") and lines[j][4:].strip() not in KINDS:
                found.append(
                    f"line {j + 1}: '{lines[j].strip()}' is not one of ### {', '.join(KINDS)}"
                )
    return found
