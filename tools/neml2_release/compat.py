"""``nox -s compat``: the deployment pair across releases.

Two promises are checked, the ones a deployment (``neml2-tensors`` +
``neml2-aoti-runtime``, nothing else) relies on:

1. neml2-aoti-runtime built from this tree works with the *oldest* neml2-tensors its
   range allows: the oldest release tag ``neml2-tensors-v<version>`` inside the range,
   built from that tag; with no such tag (nothing released yet) the tree's
   neml2-tensors, whose version must lie in the range. Both wheels go into a fresh
   venv with the locked third-party packages; ``uv pip check`` must find the ranges met.
2. That runtime loads an artifact compiled by the *oldest* neml2-compile whose artifact
   schema it accepts: the oldest tag ``neml2-compile-v<version>`` whose schema version
   lies in the runtime's accepted range [oldest, newest], compiled in that tag's
   own locked environment (a git worktree); with no such tag, this tree's
   neml2-compile. The artifact's forward and Jacobian must equal py-eager's, computed
   next to the compiler.

The runtime wheel comes from dist/ when ``nox -s wheels`` built it from the current
sources (the default session list runs wheels first), else it is built here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from . import workspace
from ._util import ToolError, git, run, say, uv
from .rule import release_tags

#: The artifact contract, declared once (``schema_version``, optionally
#: ``oldest_schema_version``): the version the compiler writes and the newest the runtime
#: reads. Trees older than the file stated them as constants in the two sources below.
SCHEMA_FILE = "packages/neml2-aoti-runtime/src/neml2/aoti/artifact_schema.json"
COMPILE_SOURCE = "packages/neml2-compile/src/neml2/compiler/_compile.py"
RUNTIME_SOURCE = "packages/neml2-aoti-runtime/src/neml2/aoti/_model.py"
PROBE = Path(__file__).resolve().with_name("_compat_probe.py")
#: The model compiled for the check; the text of neml2-compile's own test model, so the
#: compile cache the tests fill (build/aoti-cache) already holds its graphs.
MODEL = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@dataclass(frozen=True)
class Source:
    """One package at one version: from its release tag, or (tag None) from this tree."""

    package: str
    version: Version
    tag: str | None

    def describe(self) -> str:
        return f"{self.package} {self.version} from " + (
            f"tag {self.tag}" if self.tag else "this tree"
        )


@dataclass(frozen=True)
class Plan:
    dependency: Source
    dependant: Source
    requirement: str
    compiler: Source
    compile_schema: int
    schema_range: tuple[int, int]

    def describe(self) -> str:
        lo, hi = self.schema_range
        untagged = " (no release tag in range)"
        return "\n".join(
            [
                f"deployment pair: {self.dependant.describe()}, requiring {self.requirement},",
                f"  with the oldest it allows: {self.dependency.describe()}"
                + ("" if self.dependency.tag else untagged),
                f"artifact: the runtime accepts schema {lo}..{hi}; compiled by "
                f"{self.compiler.describe()}{'' if self.compiler.tag else untagged}, "
                f"which writes schema {self.compile_schema}",
            ]
        )


def _constant(text: str, name: str) -> int | None:
    m = re.search(rf"^{name}\s*=\s*(\d+)\s*$", text, re.M)
    return int(m[1]) if m else None


def _source_text(root: Path, rel: str, tag: str | None) -> str:
    return git(root, "show", f"{tag}:{rel}") if tag else (root / rel).read_text()


def _declared(root: Path, tag: str | None) -> dict | None:
    """The artifact contract (SCHEMA_FILE) at *tag* or in the tree; None where the tree
    predates it."""
    try:
        text = _source_text(root, SCHEMA_FILE, tag)
    except (FileNotFoundError, ToolError):
        return None
    try:
        doc = json.loads(text)
        int(doc["schema_version"])
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError(f"{SCHEMA_FILE} ({tag or 'tree'}): no integer schema_version ({e})") from e
    return doc


def schema_written(root: Path, tag: str | None = None) -> int:
    """The artifact schema neml2-compile writes (at *tag*, or in this tree)."""
    doc = _declared(root, tag)
    if doc is not None:
        return int(doc["schema_version"])
    value = _constant(_source_text(root, COMPILE_SOURCE, tag), "SCHEMA_VERSION")
    if value is None:
        raise ToolError(
            f"neither {SCHEMA_FILE} nor {COMPILE_SOURCE} ({tag or 'tree'}) states the schema"
        )
    return value


def schema_accepted(root: Path) -> tuple[int, int]:
    """The schema versions this tree's runtime reads: [oldest, newest]."""
    doc = _declared(root, None)
    if doc is not None:
        newest = int(doc["schema_version"])
        return int(doc.get("oldest_schema_version", newest)), newest
    text = (root / RUNTIME_SOURCE).read_text()
    newest = _constant(text, "SCHEMA_VERSION")
    if newest is None:
        raise ToolError(f"neither {SCHEMA_FILE} nor {RUNTIME_SOURCE} states the schema")
    oldest = _constant(text, "OLDEST_SCHEMA_VERSION")
    return (newest if oldest is None else oldest, newest)


def oldest_allowed(root: Path, packages: dict, name: str, dependant: str) -> tuple[Source, str]:
    """The oldest release of *name* that *dependant*'s range allows (see the module doc)."""
    req = packages[dependant].requirement_on(name)
    if req is None:
        raise ToolError(f"{dependant} does not require {name}")
    written = packages[dependant].requirement_text_on(name)
    for version, tag in release_tags(root, name):
        if req.specifier.contains(version, prereleases=True):
            return Source(name, version, tag), written
    tree = packages[name].version
    if not req.specifier.contains(tree, prereleases=True):
        raise ToolError(
            f"{dependant} requires {req}, but no release tag of {name} and not this tree's "
            f"{name} {tree} lies in that range"
        )
    return Source(name, tree, None), written


def oldest_compiler(root: Path, packages: dict, accepted: tuple[int, int]) -> tuple[Source, int]:
    """The oldest neml2-compile whose artifact schema lies in *accepted*."""
    lo, hi = accepted
    for version, tag in release_tags(root, "neml2-compile"):
        schema = schema_written(root, tag)
        if lo <= schema <= hi:
            return Source("neml2-compile", version, tag), schema
    schema = schema_written(root)
    if not lo <= schema <= hi:
        raise ToolError(
            f"this tree's neml2-compile writes schema {schema}, outside the runtime's {lo}..{hi}"
        )
    return Source("neml2-compile", packages["neml2-compile"].version, None), schema


def plan(root: Path) -> Plan:
    root = root.resolve()
    packages = workspace.load(root)
    config = workspace.load_config(root).get("compat", {})
    dependency = config.get("dependency", "neml2-tensors")
    dependant = config.get("dependant", "neml2-aoti-runtime")
    oldest, requirement = oldest_allowed(root, packages, dependency, dependant)
    accepted = schema_accepted(root)
    compiler, schema = oldest_compiler(root, packages, accepted)
    return Plan(
        dependency=oldest,
        dependant=Source(dependant, packages[dependant].version, None),
        requirement=requirement,
        compiler=compiler,
        compile_schema=schema,
        schema_range=accepted,
    )


# -------------------------------------------------------------------- building


def _wheel_of(directory: Path, name: str, version: Version) -> Path | None:
    canon = canonicalize_name(name)
    for p in sorted(directory.glob("*.whl")) if directory.is_dir() else []:
        if parse_wheel_filename(p.name)[:2] == (canon, version):
            return p
    return None


def build_from_tag(root: Path, tag: str, package: str, out: Path) -> Path:
    """The wheel of *package* built from the sources at *tag* (a worktree of that tag)."""
    with tempfile.TemporaryDirectory(prefix="neml2-compat-") as tmp:
        tree = Path(tmp) / "tree"
        run(["git", "-C", root, "worktree", "add", "--detach", "-q", tree, tag], root)
        try:
            run([uv(), "build", "--package", package, "--wheel", "-o", out], tree)
        finally:
            run(["git", "-C", root, "worktree", "remove", "--force", tree], root)
    version = Version(tag.rsplit("-v", 1)[1])
    wheel = _wheel_of(out, package, version)
    if wheel is None:
        raise ToolError(f"building {package} from {tag} gave no wheel in {out}")
    return wheel


def _newest_source_mtime(root: Path) -> float:
    """The newest change to a file the runtime wheel is built from (its uv cache-keys)."""
    pkg = root / "packages" / "neml2-aoti-runtime"
    files = [pkg / "pyproject.toml", pkg / "CMakeLists.txt"]
    files += [*(pkg / "csrc").rglob("*"), *(pkg / "src").rglob("*.py")]
    for pattern in ("*.h", "*.cpp", "CMakeLists.txt", "cmake/*"):
        files += [p for p in (root / "cpp").rglob(pattern) if "_build" not in p.parts]
    return max((p.stat().st_mtime for p in files if p.is_file()), default=0.0)


def runtime_wheel(root: Path, version: Version, out: Path) -> Path:
    """The runtime wheel of this tree: dist/'s when newer than every source, else built."""
    found = _wheel_of(root / "dist", "neml2-aoti-runtime", version)
    if found is not None and found.stat().st_mtime >= _newest_source_mtime(root):
        say(f"runtime wheel: {found.relative_to(root)} (built by nox -s wheels)")
        return found
    say("runtime wheel: dist/ has none newer than the sources; building it")
    run([uv(), "build", "--package", "neml2-aoti-runtime", "--wheel", "-o", out], root)
    wheel = _wheel_of(out, "neml2-aoti-runtime", version)
    if wheel is None:
        raise ToolError(f"no neml2-aoti-runtime {version} wheel in {out}")
    return wheel


def _venv(root: Path, venv: Path, export_package: str, wheels: list[Path], cwd: Path) -> Path:
    """A fresh venv: *export_package*'s locked third-party packages, then *wheels*."""
    shutil.rmtree(venv, ignore_errors=True)
    run([uv(), "venv", "-q", "--python", sys.executable, venv], root)
    py = venv / "bin" / "python"
    reqs = venv / "requirements.txt"
    export = [uv(), "export", "--frozen", "--no-dev", "--no-emit-workspace", "--no-hashes"]
    run([*export, "--package", export_package, "-o", reqs, "--quiet"], cwd)
    run([uv(), "pip", "install", "-q", "--python", py, "-r", reqs], root)
    run([uv(), "pip", "install", "-q", "--no-deps", "--python", py, *wheels], root)
    run([uv(), "pip", "check", "--python", py], root)
    return py


def _compile_env(root: Path, plan: Plan, work: Path, compile_python: str | None) -> Path:
    """The python of an environment holding the chosen neml2-compile."""
    if plan.compiler.tag is None:
        if compile_python is None:
            raise ToolError(
                "this tree's neml2-compile compiles: pass compile_python, the "
                "python of an environment that holds it"
            )
        return Path(compile_python)
    tree = work / "compiler-tree"
    if tree.exists():  # left by an interrupted run
        git(root, "worktree", "remove", "--force", str(tree), check=False)
        shutil.rmtree(tree, ignore_errors=True)
    git(root, "worktree", "prune")
    run(["git", "-C", root, "worktree", "add", "--detach", "-q", tree, plan.compiler.tag], root)
    venv = work / "compiler-venv"
    shutil.rmtree(venv, ignore_errors=True)
    # the tag's own lock, its runtime included: the compiler writes through the artifact
    # schema the runtime owns (neml2/aoti/artifact_schema.json)
    sync = [uv(), "sync", "--frozen", "--package", "neml2-compile", "--no-dev"]
    run(sync, tree, env={"UV_PROJECT_ENVIRONMENT": str(venv)})
    return venv / "bin" / "python"


def run_check(plan: Plan, root: Path, compile_python: str | None = None) -> None:
    """Build, install and run what *plan* names (build/compat holds everything)."""
    root = root.resolve()
    work = root / "build" / "compat"
    wheels = work / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    dep = plan.dependency
    if dep.tag:
        dep_wheel = build_from_tag(root, dep.tag, dep.package, wheels)
    else:
        run([uv(), "build", "--package", dep.package, "--wheel", "-o", wheels], root)
        dep_wheel = _wheel_of(wheels, dep.package, dep.version)
        if dep_wheel is None:
            raise ToolError(f"no {dep.package} {dep.version} wheel in {wheels}")
    rt_wheel = runtime_wheel(root, plan.dependant.version, wheels)
    pair = [dep_wheel, rt_wheel]
    deployment = _venv(root, work / "deployment", plan.dependant.package, pair, root)

    art = work / "artifact"
    shutil.rmtree(art, ignore_errors=True)
    art.mkdir(parents=True)
    model = art / "elasticity.i"
    model.write_text(MODEL)
    reference = art / "reference.pt"
    cache = os.environ.get("NEML2_COMPILE_CACHE") or str(root / "build" / "aoti-cache")
    compile_py = _compile_env(root, plan, work, compile_python)
    try:
        compiler = Path(compile_py).parent / "neml2-compile"
        run([compiler, model, "--model", "elasticity", "-d", "stress:strain", "-p", "E",
             "-o", art, "--cache-dir", cache], root)  # fmt: skip
        run([compile_py, PROBE, "reference", model, reference], root)
    finally:
        if plan.compiler.tag is not None:  # the compiler's venv installs from its worktree
            run(["git", "-C", root, "worktree", "remove", "--force", work / "compiler-tree"], root)
    lo, hi = plan.schema_range
    run(
        [deployment, PROBE, "load", art / "elasticity", reference,
         f"--expect={dep.package}={dep.version}",
         f"--expect={plan.dependant.package}={plan.dependant.version}",
         f"--compiled-by={plan.compiler.version}", f"--schema={lo}:{hi}"],
        root,
    )  # fmt: skip
    say("compat: ok\n" + plan.describe())
