"""``nox -s release -- PACKAGE VERSION [--dry-run]``: release one package.

In order: check (a newer version, no such tag, entries under [Unreleased], a clean
work tree); bump ``version`` in ``packages/<p>/pyproject.toml`` (the one place: the
C++ tree reads neml2-aoti-runtime's from there); move the [Unreleased] entries under
``## [VERSION] - DATE``; move the range of every sibling that requires the package
and whose range the new version lies above (``>=NEW,<NEXT``, an entry in that
sibling's changelog), and a CMake consumer's ``find_package(neml2 X.Y``; ``uv lock``;
``uv build --package`` (wheel and sdist) into ``build/release-<p>/dist``; the
package's tests against the built wheel; a commit and the annotated tag
``<p>-v<VERSION>``. A step that fails restores the edited files. ``--dry-run`` prints
every edit as a diff and every command, and changes nothing.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import difflib
import os
import shutil
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from . import changelog, workspace
from ._util import ToolError, git, git_ok, require_git, run, say, uv
from .rule import release_tags


@dataclass
class Edit:
    path: Path
    old: str
    new: str


@dataclass
class Plan:
    root: Path
    package: workspace.Package
    version: Version
    date: str
    dry_run: bool
    edits: dict[Path, Edit] = field(default_factory=dict)
    lock: Edit | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    wheel_only: bool = False

    @property
    def tag(self) -> str:
        return self.package.tag(self.version)

    @property
    def out(self) -> Path:
        """build/release-<package>: the copy of the package's tests, dist/ and venv/."""
        return self.root / "build" / f"release-{self.package.name}"

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def edit(self, path: Path, transform) -> None:
        """Apply *transform* (text -> text) to *path*, on top of earlier edits of it."""
        current = self.edits[path].new if path in self.edits else path.read_text()
        new = transform(current)
        if path in self.edits:
            self.edits[path].new = new
        else:
            self.edits[path] = Edit(path, current, new)


def make_plan(
    root: Path,
    name: str,
    version: str,
    date: str | None = None,
    *,
    widen: bool = False,
    dry_run: bool = False,
) -> Plan:
    """Everything the release of *name* at *version* would change, and what stops it."""
    root = root.resolve()
    packages = workspace.load(root)
    config = workspace.load_config(root)
    by_canon = {canonicalize_name(n): p for n, p in packages.items()}
    pkg = by_canon.get(canonicalize_name(name))
    if pkg is None:
        raise ToolError(f"no package {name!r}: one of {', '.join(sorted(packages))}")
    new = workspace.parse_version(version)
    date = date or _dt.date.today().isoformat()
    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        raise ToolError(f"--date {date!r} is not a date YYYY-MM-DD") from None
    plan = Plan(root, pkg, new, date, dry_run)
    plan.wheel_only = pkg.name in config.get("release", {}).get("wheel-only", [])

    # --- what stops it
    require_git(root)
    tags = release_tags(root, pkg.name)
    if git_ok(root, "rev-parse", "--verify", "--quiet", f"refs/tags/{plan.tag}"):
        plan.errors.append(f"the tag {plan.tag} exists already")
    log_text = pkg.changelog.read_text() if pkg.changelog.is_file() else None
    released = changelog.released_versions(log_text) if log_text else []
    if new < pkg.version or (new == pkg.version and (released or tags)):
        plan.errors.append(
            f"{pkg.name} is at {pkg.version}: the new version must be newer"
            + ("" if new < pkg.version else f" ({pkg.version} is released already)")
        )
    if log_text is None:
        plan.errors.append(f"{plan.rel(pkg.changelog)} is missing")
    else:
        last = changelog.latest_dated_release(log_text)
        if last is not None and day < last[1]:
            plan.errors.append(
                f"the release date {day} is before {last[1]}, the date of the previous "
                f"release [{last[0]}] in {plan.rel(pkg.changelog)}"
            )
        for p in changelog.problems(log_text, pkg.version):
            plan.errors.append(f"{plan.rel(pkg.changelog)}: {p}")
        if not changelog.unreleased_entries(log_text):
            plan.errors.append(
                f"{plan.rel(pkg.changelog)}: [Unreleased] has no entry: nothing to release"
            )
    dirty = git(root, "status", "--porcelain", "--untracked-files=no")
    if dirty:
        lines = dirty.splitlines()
        more = [f"... ({len(lines) - 10} more)"] if len(lines) > 10 else []
        listed = "\n".join(lines[:10] + more)
        if dry_run:
            plan.warnings.append(
                "the work tree has uncommitted changes: the release itself would refuse "
                f"them\n{listed}"
            )
        else:
            plan.errors.append(
                f"the work tree has uncommitted changes (commit or stash them first)\n{listed}"
            )

    # --- the edits
    if new != pkg.version:
        plan.edit(pkg.pyproject, lambda t: workspace.set_version(t, new, plan.rel(pkg.pyproject)))
    if log_text is not None and changelog.unreleased_entries(log_text):
        plan.edit(pkg.changelog, lambda t: changelog.release(t, new, date))
    for dep, req in workspace.dependants(packages, pkg.name):
        written = dep.requirement_text_on(pkg.name) or str(req)
        old_spec = workspace.spec_text(written) or "(any version)"
        if req.specifier.contains(new, prereleases=True):
            plan.notes.append(f"{dep.name} requires {written}: {new} is inside, unchanged")
            continue
        if not workspace.is_above(req, new):
            plan.notes.append(f"{dep.name} requires {written}: {new} lies below it, unchanged")
            continue
        lower = workspace.lower_bound(req) if widen else None
        spec = workspace.compatible_range(new, lower)
        new_req = workspace.with_specifier(req, spec)
        where = plan.rel(dep.pyproject)
        plan.edit(
            dep.pyproject,
            lambda t, r=written, n=new_req, w=where: workspace.replace_requirement(t, r, n, w),
        )
        plan.notes.append(f"{dep.name} requires {written} -> {new_req}")
        entry = f"Requires {pkg.name} `{spec}` (was `{old_spec}`): {pkg.name} {new} is released."
        if dep.changelog.is_file():
            plan.edit(dep.changelog, lambda t, e=entry: changelog.add_entry(t, "Changed", e))
        else:
            plan.errors.append(f"{plan.rel(dep.changelog)} is missing")
    for rel in config.get("release", {}).get("cmake-consumers", {}).get(pkg.name, []):
        path = root / rel
        if not path.is_file():
            plan.errors.append(f"{rel} (a cmake-consumer in config.toml) is missing")
            continue
        asked = workspace.cmake_requested(path.read_text())
        if asked is not None and asked < (new.major, new.minor):
            plan.edit(path, lambda t: workspace.set_cmake_requested(t, new))
            was = f"{asked[0]}.{asked[1]}"
            plan.notes.append(f"{rel} asks for neml2 {was} -> {new.major}.{new.minor}")
    lock = root / "uv.lock"
    if lock.is_file() and any(p.name == "pyproject.toml" for p in plan.edits):
        text = lock.read_text()
        try:
            predicted = workspace.lock_with_version(text, pkg.name, new)
        except ToolError as e:
            plan.errors.append(str(e))
        else:
            plan.lock = Edit(lock, text, predicted)
    return plan


def _diff(plan: Plan, e: Edit) -> str:
    rel = plan.rel(e.path)
    lines = difflib.unified_diff(
        e.old.splitlines(keepends=True), e.new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    return "".join(lines)


def _commands(plan: Plan) -> list[str]:
    name, out = plan.package.name, plan.rel(plan.out)
    build = f"uv build --package {name} -o {out}/dist" + (" --wheel" if plan.wheel_only else "")
    files = " ".join([*(plan.rel(p) for p in plan.edits), *(["uv.lock"] if plan.lock else [])])
    return [
        *(["uv lock"] if plan.lock else []),
        build,
        f"uv sync --frozen --package {name} --all-extras --no-install-project  "
        f"(UV_PROJECT_ENVIRONMENT={out}/venv)",
        f"uv pip install --no-deps --reinstall {out}/dist/<the wheel>  (into {out}/venv)",
        f"{out}/venv/bin/python -m pytest {out}/tests  (a copy of the package's tests, "
        "without src/ next to them)",
        f'git commit -m "Release {name} {plan.version}" -- {files}',
        f'git tag -a {plan.tag} -m "{name} {plan.version}"',
    ]


def describe(plan: Plan) -> str:
    """The plan as text: versions, edits as diffs, uv.lock, commands, problems."""
    pkg = plan.package
    head = "DRY RUN (nothing is changed): " if plan.dry_run else ""
    out = [
        f"{head}release {pkg.name} {pkg.version} -> {plan.version}, dated {plan.date}, "
        f"tag {plan.tag}",
        "",
    ]
    out += [f"* {n}" for n in plan.notes]
    if plan.wheel_only:
        out.append(f"* {pkg.name} is released as a wheel only (config.toml: wheel-only)")
    out.append("")
    for e in plan.edits.values():
        out.append(_diff(plan, e))
    if plan.lock is not None and plan.lock.new != plan.lock.old:
        out.append("uv.lock, as `uv lock` will write it:")
        out.append(_diff(plan, plan.lock))
    elif plan.lock is not None:
        out.append("uv.lock: `uv lock` runs, and should leave it as it is\n")
    out.append("commands:" if not plan.dry_run else "commands it would run:")
    out += [f"  $ {c}" for c in _commands(plan)]
    out += [f"warning: {w}" for w in plan.warnings]
    out += [f"error: {e}" for e in plan.errors]
    return "\n".join(out)


# ------------------------------------------------------------------ the real run


def _metadata(wheel: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(name).decode()
    fields: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ": " in line:
            key, value = line.split(": ", 1)
            fields.setdefault(key, []).append(value)
    return fields


def build(plan: Plan) -> tuple[Path, Path | None]:
    """``uv build --package`` into build/release-<p>/dist; the wheel and the sdist."""
    dist = plan.out / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    cmd = [uv(), "build", "--package", plan.package.name, "-o", str(dist)]
    run([*cmd, "--wheel"] if plan.wheel_only else cmd, cwd=plan.root)
    canon = canonicalize_name(plan.package.name)
    wheels = [
        p for p in dist.glob("*.whl") if parse_wheel_filename(p.name)[:2] == (canon, plan.version)
    ]
    sdists = [
        p for p in dist.glob("*.tar.gz") if parse_sdist_filename(p.name) == (canon, plan.version)
    ]
    if len(wheels) != 1 or (not plan.wheel_only and len(sdists) != 1):
        raise ToolError(f"expected one wheel and one sdist of {canon} {plan.version} in {dist}")
    meta = _metadata(wheels[0])
    if meta.get("Version") != [str(plan.version)]:
        raise ToolError(f"{wheels[0].name}: METADATA says Version {meta.get('Version')}")
    return wheels[0], (sdists[0] if sdists else None)


def _copy_tests(plan: Plan) -> Path:
    """Copy packages/<p> but src/ (and build outputs) to build/release-<p>: the tests sit
    as deep in the repository as before, so their paths to the repository still resolve,
    but a conftest that puts ``../src`` on sys.path finds nothing there."""
    pkg_dir, out = plan.package.dir, plan.out
    for child in list(out.iterdir()) if out.is_dir() else []:
        if child.name not in ("dist", "venv"):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    skip = {"src", "build", "dist", "venv", ".venv", ".pytest_cache", "__pycache__"}
    for child in pkg_dir.iterdir():
        if child.name in skip or child.name.endswith(".egg-info"):
            continue
        dest = out / child.name
        if child.is_dir():
            shutil.copytree(child, dest, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(child, dest)
    return out


def test_wheel(plan: Plan, wheel: Path) -> None:
    """The package's tests against *wheel*: a venv with the package's locked dependencies
    (siblings from the workspace) and the wheel instead of the package's sources."""
    name = plan.package.name
    out = _copy_tests(plan)
    venv = out / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    env = {"UV_PROJECT_ENVIRONMENT": str(venv)}
    sync = [uv(), "sync", "--frozen", "--package", name, "--all-extras", "--no-install-project"]
    run(sync, cwd=plan.root, env=env)
    py = venv / "bin" / "python"
    install = [uv(), "pip", "install", "-q", "--python", py, "--no-deps", "--reinstall"]
    run([*install, wheel], plan.root)
    for module in plan.package.modules:
        origin = subprocess.run(
            [py, "-c", f"import {module} as m; print(m.__file__)"],
            capture_output=True,
            text=True,
            check=False,
            cwd=out,
        )
        where = Path(origin.stdout.strip() or "/nonexistent").resolve()
        if origin.returncode != 0 or not where.is_relative_to(venv.resolve()):
            raise ToolError(
                f"{module} does not import from the installed wheel (got {where}): "
                + origin.stderr.strip()
            )
    test_env = {
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
    }
    run([py, "-m", "pytest", out / "tests", "-q", "-p", "no:cacheprovider"], out, test_env)


def execute(plan: Plan) -> tuple[Path, Path | None]:
    """Make the release *plan* describes (it must have no errors)."""
    if plan.errors:
        raise ToolError("the release cannot go on:\n" + "\n".join(plan.errors))
    root = plan.root
    lock = root / "uv.lock"
    lock_before = lock.read_text() if lock.is_file() else None
    try:
        for e in plan.edits.values():
            e.path.write_text(e.new)
            say(f"wrote {plan.rel(e.path)}")
        if plan.lock is not None:
            run([uv(), "lock"], cwd=root)
            if lock.read_text() != plan.lock.new:
                say("note: `uv lock` changed uv.lock beyond the version line:")
                say(git(root, "diff", "--stat", "--", "uv.lock"))
        wheel, sdist = build(plan)
        test_wheel(plan, wheel)
    except BaseException:
        for e in plan.edits.values():
            e.path.write_text(e.old)
        if lock_before is not None:
            lock.write_text(lock_before)
        say("release stopped: the edited files are restored")
        raise
    files = [plan.rel(p) for p in plan.edits]
    if plan.lock is not None and git(root, "status", "--porcelain", "--", "uv.lock"):
        files.append("uv.lock")
    section = changelog.release_section(plan.edits[plan.package.changelog].new, plan.version)
    message = f"Release {plan.package.name} {plan.version}\n\n{section}\nMade by nox -s release."
    run(["git", "add", "--", *files], root)
    say(f'$ git commit -m "Release {plan.package.name} {plan.version} ..." -- {" ".join(files)}')
    run(["git", "commit", "-q", "-m", message, "--", *files], root, echo=False)
    run(["git", "tag", "-a", plan.tag, "-m", f"{plan.package.name} {plan.version}"], root)
    return wheel, sdist


def main(argv: list[str], root: Path) -> int:
    """The release session: parse *argv*, print the plan, run it unless --dry-run."""
    parser = argparse.ArgumentParser(
        prog="nox -s release --",
        description="Release one package of the workspace (docs/releasing.md).",
    )
    parser.add_argument("package", help="e.g. neml2-hit")
    parser.add_argument("version", help="the new version, e.g. 0.2.0")
    parser.add_argument(
        "--dry-run", action="store_true", help="print every change and command; change nothing"
    )
    parser.add_argument("--date", help="the release date, YYYY-MM-DD (default: today)")
    parser.add_argument(
        "--widen",
        action="store_true",
        help="a sibling range the new version lies above keeps its lower bound "
        "(default: it starts at the new version)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        if e.code == 0:
            return 0
        raise ToolError("bad arguments: " + parser.format_usage().strip()) from None
    plan = make_plan(
        root, args.package, args.version, args.date, widen=args.widen, dry_run=args.dry_run
    )
    say(describe(plan))
    if plan.errors:
        raise ToolError(
            f"release of {plan.package.name} {plan.version} "
            + ("would stop" if args.dry_run else "stopped")
            + ": "
            + "; ".join(e.splitlines()[0] for e in plan.errors)
        )
    if args.dry_run:
        say("dry run: nothing was changed")
        return 0
    wheel, sdist = execute(plan)
    say(f"\nreleased {plan.package.name} {plan.version}: tag {plan.tag}")
    say(f"  wheel: {plan.rel(wheel)}")
    if sdist is not None:
        say(f"  sdist: {plan.rel(sdist)}")
    say(
        f"next: git push origin HEAD {plan.tag}; uv publish {plan.rel(plan.out)}/dist/* "
        "(docs/releasing.md)"
    )
    return 0
