"""The workspace as the release tool sees it: each package's version, its sibling ranges,
its files; editing a version and a range in place (the rest of a file is kept as is)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ._util import ToolError

CONFIG = Path(__file__).resolve().with_name("config.toml")
#: The config file's path inside the repository (the changelog rule starts after the
#: commit that added it).
CONFIG_IN_REPO = "tools/neml2_release/config.toml"


def load_config(root: Path) -> dict[str, Any]:
    """tools/neml2_release/config.toml of the repository at *root*."""
    path = root / CONFIG_IN_REPO
    if not path.is_file():
        raise ToolError(f"{path} is missing")
    return tomllib.loads(path.read_text())


@dataclass(frozen=True)
class Package:
    """One workspace member (``packages/<name>``)."""

    name: str
    dir: Path
    version: Version
    #: its requirements as written in pyproject.toml (dependencies and extras)
    requirement_texts: tuple[str, ...]

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return tuple(Requirement(t) for t in self.requirement_texts)

    @property
    def pyproject(self) -> Path:
        return self.dir / "pyproject.toml"

    @property
    def changelog(self) -> Path:
        return self.dir / "CHANGELOG.md"

    @property
    def tag_prefix(self) -> str:
        return f"{self.name}-v"

    def tag(self, version: Version | str) -> str:
        return f"{self.tag_prefix}{version}"

    def requirement_on(self, name: str) -> Requirement | None:
        """This package's requirement on the sibling *name* (None if it has none)."""
        text = self.requirement_text_on(name)
        return None if text is None else Requirement(text)

    def requirement_text_on(self, name: str) -> str | None:
        """That requirement as pyproject.toml writes it."""
        for text in self.requirement_texts:
            if canonicalize_name(Requirement(text).name) == canonicalize_name(name):
                return text
        return None

    @property
    def modules(self) -> list[str]:
        """The ``neml2.<x>`` packages it ships (its ``src/neml2/*`` folders)."""
        base = self.dir / "src" / "neml2"
        return sorted(
            f"neml2.{p.name}"
            for p in base.iterdir()
            if p.is_dir() and (p / "__init__.py").is_file()
        )


def parse_version(text: str, what: str = "version") -> Version:
    try:
        v = Version(text)
    except InvalidVersion:
        raise ToolError(f"{what} {text!r} is not a valid version (PEP 440, e.g. 0.2.0)") from None
    if v.local is not None or v.is_devrelease or v.epoch:
        raise ToolError(f"{what} {text!r}: no local, dev or epoch part in a release version")
    return v


def read_package(pkg_dir: Path) -> Package:
    data = tomllib.loads((pkg_dir / "pyproject.toml").read_text())
    project = data.get("project", {})
    reqs = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        reqs += list(group)
    return Package(
        name=project["name"],
        dir=pkg_dir,
        version=parse_version(project["version"], f"{pkg_dir.name}'s version"),
        requirement_texts=tuple(reqs),
    )


def load(root: Path) -> dict[str, Package]:
    """Every ``packages/*`` member of the workspace at *root*, by name."""
    found = [read_package(p.parent) for p in sorted(root.glob("packages/*/pyproject.toml"))]
    if not found:
        raise ToolError(f"no packages/*/pyproject.toml under {root}")
    return {p.name: p for p in found}


def dependants(packages: dict[str, Package], name: str) -> list[tuple[Package, Requirement]]:
    """The siblings that require *name*, with their requirement on it."""
    out = []
    for pkg in packages.values():
        req = pkg.requirement_on(name)
        if req is not None and pkg.name != name:
            out.append((pkg, req))
    return out


# ------------------------------------------------------------------------ ranges


def bound_text(v: Version) -> str:
    """A version as a range bound: trailing ``.0`` dropped down to major.minor
    (0.2.0 -> "0.2", 0.2.3 -> "0.2.3", 1.0.0 -> "1.0"; pre-releases kept whole)."""
    if v.pre is not None:
        return str(v)
    release = list(v.release)
    while len(release) > 2 and release[-1] == 0:
        release.pop()
    return ".".join(map(str, release))


def next_breaking(v: Version) -> str:
    """The first version semver lets break *v*'s API: 0.y -> 0.(y+1), x.y (x >= 1) -> x+1."""
    major = v.release[0]
    minor = v.release[1] if len(v.release) > 1 else 0
    return f"0.{minor + 1}" if major == 0 else str(major + 1)


def compatible_range(v: Version, lower: str | None = None) -> str:
    """``>=LOWER,<NEXT``: the versions compatible with *v* (LOWER defaults to *v*)."""
    return f">={lower or bound_text(v)},<{next_breaking(v)}"


def lower_bound(req: Requirement) -> str | None:
    """The version of the ``>=`` clause of *req* (None when it has none)."""
    for spec in req.specifier:
        if spec.operator == ">=":
            return spec.version
    return None


def is_above(req: Requirement, v: Version) -> bool:
    """Whether *v* lies above *req*'s range (beyond an upper bound), not below it."""
    if req.specifier.contains(v, prereleases=True):
        return False
    return any(
        spec.operator in ("<", "<=") and v >= Version(spec.version) for spec in req.specifier
    )


def spec_text(requirement: str) -> str:
    """The version range of a requirement as written (``neml2-hit>=0.1,<0.2`` ->
    ``>=0.1,<0.2``), extras and marker left out."""
    req = Requirement(requirement)
    m = re.match(r"^\s*[A-Za-z0-9._-]+\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)", requirement)
    text = m["spec"].strip() if m else ""
    return text.replace(" ", "") if text else str(req.specifier)


def with_specifier(req: Requirement, spec: str) -> str:
    """*req* written again with the version range *spec* (name, extras, marker kept)."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    marker = f"; {req.marker}" if req.marker else ""
    return f"{req.name}{extras}{spec}{marker}"


# ----------------------------------------------------------------- text edits

_TABLE = re.compile(r"^\s*\[")
_VERSION = re.compile(r'^(?P<head>version\s*=\s*)"(?P<value>[^"]*)"(?P<tail>.*)$')


def set_version(text: str, new: Version | str, where: str = "pyproject.toml") -> str:
    """*text* (a pyproject.toml) with ``[project] version`` set to *new*."""
    lines = text.splitlines(keepends=True)
    in_project = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _TABLE.match(line):
            in_project = stripped == "[project]"
            continue
        m = _VERSION.match(stripped)
        if in_project and m:
            nl = line[len(line.rstrip("\r\n")) :]
            lines[i] = f'{m["head"]}"{new}"{m["tail"]}{nl}'
            return "".join(lines)
    raise ToolError(f'{where}: no version = "..." line in its [project] table')


def replace_requirement(text: str, old: str, new: str, where: str = "pyproject.toml") -> str:
    """*text* with every quoted requirement string *old* replaced by *new*."""
    count = 0
    for quote in ('"', "'"):
        needle = f"{quote}{old}{quote}"
        count += text.count(needle)
        text = text.replace(needle, f"{quote}{new}{quote}")
    if count == 0:
        raise ToolError(f"{where}: the requirement {old!r} is not written as a quoted string")
    return text


_FIND_PACKAGE = re.compile(r"(find_package\(\s*neml2\s+)(\d+)\.(\d+)")


def cmake_requested(text: str) -> tuple[int, int] | None:
    """The major.minor of ``find_package(neml2 X.Y ...)`` in a CMakeLists (None: no version)."""
    m = _FIND_PACKAGE.search(text)
    return (int(m[2]), int(m[3])) if m else None


def set_cmake_requested(text: str, v: Version) -> str:
    major, minor = v.release[0], v.release[1] if len(v.release) > 1 else 0
    return _FIND_PACKAGE.sub(lambda m: f"{m[1]}{major}.{minor}", text, count=1)


def lock_with_version(text: str, name: str, new: Version | str) -> str:
    """*text* (uv.lock) with the locked version of the workspace member *name* set to *new*
    (what ``uv lock`` writes after a version bump)."""
    pattern = re.compile(rf'(\[\[package\]\]\nname = "{re.escape(name)}"\nversion = ")[^"]*(")')
    out, n = pattern.subn(lambda m: f"{m[1]}{new}{m[2]}", text, count=1)
    if n != 1:
        raise ToolError(f"uv.lock has no [[package]] entry for {name}")
    return out
